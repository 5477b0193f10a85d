//===- Value.h - Values the elaborator computes with ------------*- C++ -*-===//
//
// Elaboration is partial evaluation: config arithmetic, strings, lists, loop
// indices and shapes are computed here, at compile time; only tensors become
// MLIR values. A tensor carries a *symbolic* shape so that shape errors can
// say `f32[batch, seq, 768]` rather than `tensor<?x?x768xf32>`.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_FRONTEND_VALUE_H
#define TFC_FRONTEND_VALUE_H

#include "frontend/SourceLocation.h"

#include "mlir/IR/Value.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tfc {

/// A dimension size: `constant + sum(coeff * symbol)`. Symbols are the
/// symbolic dimensions of the entry's inputs (batch, seq, past). Sums appear
/// where a KV cache is concatenated (`past + seq`).
///
/// The runtime's rt::DimExpr (runtime/Plan.h) is the same affine form with
/// symbols numbered by the Plan entry's symbol table. They stay two types:
/// the elaborator names symbols before any entry (or its table) exists, and
/// the runtime, which must not depend on the frontend, evaluates by index.
/// The one conversion point is the IR's `tfc.dims` attributes: the frontend
/// writes each dimension as SymDim::str() ("batch", "past + seq"), and the
/// planner (plan/PlanBuilder.cpp) numbers argument symbols in order of first
/// appearance and parses result dims back (parseDeclaredDim).
struct SymDim {
  int64_t constant = 0;
  std::map<std::string, int64_t> terms;

  static SymDim of(int64_t value) { return SymDim{value, {}}; }
  static SymDim symbol(const std::string &name) { return SymDim{0, {{name, 1}}}; }
  bool isStatic() const { return terms.empty(); }
  bool operator==(const SymDim &other) const {
    return constant == other.constant && terms == other.terms;
  }
  bool operator!=(const SymDim &other) const { return !(*this == other); }
  std::string str() const;
};

using SymShape = std::vector<SymDim>;
std::string shapeToString(const std::string &dtype, const SymShape &shape);

/// Where a runtime dimension can be read from: axis `axis` of `value`.
struct DimSource {
  mlir::Value value;
  int64_t axis = 0;
};

/// A tensor during elaboration: its MLIR value, element type name, symbolic
/// shape, and where it was produced (for "from `x` at file:line:col" notes).
struct TensorValue {
  mlir::Value value;
  std::string dtype; // f32, i32, i64, bool
  SymShape shape;
  SourceLoc origin;
  std::string description; // e.g. "`x`" or "the result of `@`"
};

/// A compile-time value.
class Value {
public:
  enum class Kind { None, Int, Float, Bool, Str, Enum, List, Dim, Tensor };

  Value() = default;
  static Value none() { return Value(); }
  static Value ofInt(int64_t v);
  static Value ofFloat(double v);
  static Value ofBool(bool v);
  static Value ofStr(std::string v);
  static Value ofEnum(std::string v);
  static Value ofList(std::vector<Value> v);
  static Value ofDim(SymDim d, std::optional<DimSource> source = std::nullopt);
  static Value ofTensor(TensorValue t);

  Kind getKind() const { return kind; }
  bool is(Kind k) const { return kind == k; }
  bool isTensor() const { return kind == Kind::Tensor; }
  /// Int, or a Dim that is a plain constant.
  bool isIntLike() const;
  bool isNumber() const { return kind == Kind::Int || kind == Kind::Float; }

  int64_t getInt() const { return intValue; }
  double getFloat() const { return floatValue; }
  bool getBool() const { return boolValue; }
  const std::string &getStr() const { return strValue; }
  const std::vector<Value> &getList() const { return *listValue; }
  /// How deeply lists nest in this value: 0 for a value that is not a list,
  /// 1 for a list of non-lists, and so on.
  size_t getListDepth() const { return listDepth; }
  const SymDim &getDim() const { return dimValue; }
  const std::optional<DimSource> &getDimSource() const { return dimSource; }
  const TensorValue &getTensor() const { return *tensorValue; }

  /// A number as a double (ints converted).
  double asDouble() const;
  /// An int or a Dim, as a SymDim.
  std::optional<SymDim> asDim() const;

  /// Short description of the kind: "int", "tensor f32[batch, seq, 768]".
  std::string describe() const;
  /// The value as it would appear in a string template or a message. A
  /// long list is cut short with "...".
  std::string str() const;
  static const char *kindName(Kind k);

private:
  Kind kind = Kind::None;
  int64_t intValue = 0;
  double floatValue = 0;
  bool boolValue = false;
  std::string strValue;
  std::shared_ptr<std::vector<Value>> listValue;
  size_t listDepth = 0;
  SymDim dimValue;
  std::optional<DimSource> dimSource;
  std::shared_ptr<TensorValue> tensorValue;
};

} // namespace tfc

#endif // TFC_FRONTEND_VALUE_H
