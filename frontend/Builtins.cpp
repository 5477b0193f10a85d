//===- Builtins.cpp - Tensor operations of the .tfm language --------------===//
//
// Each builtin checks its operands symbolically (dtype, rank, shape), reports
// errors that name both shapes and where they came from, and creates the
// primitive `tfc` op with its typed builder (ir/TfcOps.h), so a renamed op or
// attribute is a compile error here. The builders infer the result type;
// makeTensor checks that it is the type the frontend computed.
//
//===----------------------------------------------------------------------===//

#include "frontend/ElaboratorImpl.h"
#include "ir/Broadcast.h"
#include "ir/TfcOps.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/IR/Operation.h"
#include "mlir/IR/OperationSupport.h"
#include "llvm/Support/Casting.h"

#include <cmath>
#include <numeric>

using namespace tfc;
namespace tir = mlir::tfc;

namespace {
/// Names an op type for a generic lambda: `make(OpTag<tir::AddOp>())`.
template <typename OpT> struct OpTag {
  using type = OpT;
};
} // namespace

//===----------------------------------------------------------------------===//
// Construction helpers
//===----------------------------------------------------------------------===//

mlir::Location ElaboratorImpl::loc(SourceLoc at) const {
  if (!at.isValid())
    return mlir::UnknownLoc::get(&context);
  mlir::Location fileLoc = mlir::FileLineColLoc::get(
      &context, diags.getSources().getName(at.fileId), at.line, at.col);
  return fileLoc;
}

mlir::Type ElaboratorImpl::elementType(const std::string &dtype) const {
  mlir::Builder b(&context);
  if (dtype == "i32")
    return b.getI32Type();
  if (dtype == "i64")
    return b.getI64Type();
  if (dtype == "bool")
    return b.getI1Type();
  return b.getF32Type(); // f16/bf16 are storage types, computed in f32
}

mlir::RankedTensorType
ElaboratorImpl::tensorType(const std::string &dtype,
                           const SymShape &shape) const {
  std::vector<int64_t> dims;
  for (const SymDim &dim : shape)
    dims.push_back(dim.isStatic() ? dim.constant : mlir::ShapedType::kDynamic);
  return mlir::RankedTensorType::get(dims, elementType(dtype));
}

std::optional<mlir::Location> ElaboratorImpl::opLocation(SourceLoc at) {
  if (!builder.getInsertionBlock()) {
    // Config values, dim bounds and input types are evaluated outside any
    // function: an op built there would be detached (and leaked).
    diags.error(at, "tensor operations are only allowed in the body of an "
                    "entry and in the blocks it calls");
    return std::nullopt;
  }
  if (++numOps > ElaborationLimits::maxOps) {
    step(at); // reports the limit once
    return std::nullopt;
  }
  mlir::Location location = loc(at);
  if (!frames.empty() && frames.back().callSite)
    location = mlir::CallSiteLoc::get(location, *frames.back().callSite);
  return location;
}

bool ElaboratorImpl::checkShape(const std::string &dtype,
                                const SymShape &shape, SourceLoc at,
                                const std::string &what) {
  constexpr int64_t limit = ElaborationLimits::maxDimSize;
  int64_t elements = 1;
  for (const SymDim &dim : shape) {
    bool ok;
    if (dim.isStatic()) {
      ok = dim.constant > 0 && dim.constant <= limit &&
           !__builtin_mul_overflow(elements, dim.constant, &elements) &&
           elements <= ElaborationLimits::maxElements;
      if (ok)
        continue;
      if (dim.constant > 0 && dim.constant <= limit) {
        diags.error(at, what + " would have more than 2^40 elements: " +
                            shapeToString(dtype, shape));
        return false;
      }
    } else {
      // Sizes known at run time (`past + seq`): keep the coefficients small
      // enough that adding and multiplying them cannot overflow.
      ok = dim.constant >= -limit && dim.constant <= limit;
      for (const auto &[name, coeff] : dim.terms)
        ok = ok && coeff >= -limit && coeff <= limit;
    }
    if (!ok) {
      diags.error(at, what + " would have dimension " + dim.str() + " in " +
                          shapeToString(dtype, shape) +
                          (dim.isStatic()
                               ? " (dimensions are 1 .. 2^40)"
                               : " (the numbers in a symbolic dimension are "
                                 "at most 2^40)"));
      return false;
    }
  }
  return true;
}

bool ElaboratorImpl::chargeConstant(int64_t elements, SourceLoc at) {
  constantElements += elements;
  if (constantElements <= ElaborationLimits::maxConstantElements)
    return true;
  diags.error(at, "the model's constants have more than 2^26 elements in "
                  "total");
  return false;
}

std::optional<TensorValue> ElaboratorImpl::makeTensorWith(
    const std::string &dtype, const SymShape &shape, SourceLoc at,
    std::string description,
    llvm::function_ref<mlir::Value(mlir::Location)> create) {
  if (shape.size() > ElaborationLimits::maxRank) {
    diags.error(at, description + " would have rank " +
                        std::to_string(shape.size()) + " (at most 8)");
    return std::nullopt;
  }
  if (!checkShape(dtype, shape, at, description))
    return std::nullopt;
  std::optional<mlir::Location> location = opLocation(at);
  if (!location)
    return std::nullopt;
  mlir::Value value = create(*location);
  if (value.getType() != tensorType(dtype, shape)) {
    std::string type;
    llvm::raw_string_ostream os(type);
    os << value.getType();
    diags.error(at, "internal error: " + description + " has type " + type +
                        ", not " + shapeToString(dtype, shape));
    return std::nullopt;
  }
  return TensorValue{value, dtype, shape, at, std::move(description)};
}

std::optional<TensorValue>
ElaboratorImpl::scalarConstant(const Value &number, const std::string &dtype,
                               SourceLoc at) {
  mlir::RankedTensorType type = tensorType(dtype, {});
  mlir::DenseElementsAttr attr;
  if (dtype == "bool") {
    if (!number.is(Value::Kind::Bool)) {
      diags.error(at, "expected a bool to combine with a bool tensor, got " +
                          number.describe());
      return std::nullopt;
    }
    attr = mlir::DenseElementsAttr::get(type, number.getBool());
  } else if (dtype == "i32" || dtype == "i64") {
    if (!number.is(Value::Kind::Int)) {
      diags.error(at, "expected an int to combine with an " + dtype +
                          " tensor, got " + number.describe());
      return std::nullopt;
    }
    if (dtype == "i32" && (number.getInt() < INT32_MIN ||
                           number.getInt() > INT32_MAX)) {
      diags.error(at, number.str() + " does not fit in an i32 tensor");
      return std::nullopt;
    }
    attr = mlir::DenseElementsAttr::get(
        type, llvm::APInt(dtype == "i32" ? 32 : 64, number.getInt(),
                          /*isSigned=*/true));
  } else {
    if (!number.isNumber()) {
      diags.error(at, "expected a number to combine with an " + dtype +
                          " tensor, got " + number.describe());
      return std::nullopt;
    }
    attr = mlir::DenseElementsAttr::get(
        type, static_cast<float>(number.asDouble()));
  }
  return makeTensor<tir::ConstantOp>(dtype, {}, at,
                                     "the constant " + number.str(), attr);
}

const TensorValue *ElaboratorImpl::expectTensor(const Value &value,
                                                const std::string &what,
                                                SourceLoc at) {
  if (value.is(Value::Kind::None))
    return nullptr;
  if (value.isTensor())
    return &value.getTensor();
  diags.error(at, what + " must be a tensor, got " + value.describe());
  return nullptr;
}

std::optional<int64_t> ElaboratorImpl::expectInt(const Value &value,
                                                 const std::string &what,
                                                 SourceLoc at) {
  if (value.is(Value::Kind::Int))
    return value.getInt();
  if (!value.is(Value::Kind::None))
    diags.error(at, what + " must be an int, got " + value.describe());
  return std::nullopt;
}

std::optional<int64_t> ElaboratorImpl::normalizeAxis(int64_t axis, size_t rank,
                                                     const std::string &what,
                                                     SourceLoc at) {
  int64_t r = static_cast<int64_t>(rank);
  if (axis < -r || axis >= r) {
    diags.error(at, what + ": axis " + std::to_string(axis) +
                        " is out of range for a tensor of rank " +
                        std::to_string(rank));
    return std::nullopt;
  }
  return axis < 0 ? axis + r : axis;
}

void ElaboratorImpl::noteOrigin(const TensorValue &tensor) {
  diags.note(tensor.origin, tensor.description + " is " +
                                shapeToString(tensor.dtype, tensor.shape) +
                                ", from here");
}

std::optional<SymShape> ElaboratorImpl::broadcast(const TensorValue &lhs,
                                                  const TensorValue &rhs,
                                                  const std::string &opSpelling,
                                                  SourceLoc at) {
  // Symbolic dims broadcast only when equal: the frontend cannot tell
  // whether `seq` will be 1 at run time.
  llvm::ArrayRef<SymDim> shapes[] = {lhs.shape, rhs.shape};
  mlir::FailureOr<llvm::SmallVector<SymDim>> out = mlir::tfc::broadcastDims(
      llvm::ArrayRef<llvm::ArrayRef<SymDim>>(shapes), SymDim::of(1),
      [&](const SymDim &l, const SymDim &r, size_t) -> std::optional<SymDim> {
        diags.error(
            at, "cannot broadcast " + shapeToString(lhs.dtype, lhs.shape) +
                    " and " + shapeToString(rhs.dtype, rhs.shape) + " in `" +
                    opSpelling + "`: dimension " + l.str() + " vs " + r.str());
        noteOrigin(lhs);
        noteOrigin(rhs);
        return std::nullopt;
      });
  if (mlir::failed(out))
    return std::nullopt;
  return SymShape(out->begin(), out->end());
}

static bool isFloat(const std::string &dtype) { return dtype == "f32"; }
static bool isInt(const std::string &dtype) {
  return dtype == "i32" || dtype == "i64";
}

MaybeValue ElaboratorImpl::tensorBinary(ast::BinaryOp op, const Value &lhsIn,
                                        const Value &rhsIn, SourceLoc at) {
  using B = ast::BinaryOp;
  std::string spelled = ast::spelling(op);
  if (lhsIn.is(Value::Kind::None) || rhsIn.is(Value::Kind::None))
    return std::nullopt;
  // A static number next to a tensor becomes a scalar of its dtype.
  auto asTensor = [&](const Value &v,
                      const Value &other) -> std::optional<TensorValue> {
    if (v.isTensor())
      return v.getTensor();
    if (v.is(Value::Kind::Dim)) {
      diags.error(at, "cannot use the symbolic dim " + v.str() +
                          " as a tensor value in `" + spelled +
                          "` (use positions() for index tensors)");
      return std::nullopt;
    }
    return scalarConstant(v, other.getTensor().dtype, at);
  };
  std::optional<TensorValue> lhs = asTensor(lhsIn, rhsIn.isTensor() ? rhsIn : lhsIn);
  if (!lhs)
    return std::nullopt;
  std::optional<TensorValue> rhs = asTensor(rhsIn, lhsIn.isTensor() ? lhsIn : rhsIn);
  if (!rhs)
    return std::nullopt;

  if (op == B::MatMul) {
    if (!lhsIn.isTensor() || !rhsIn.isTensor()) {
      diags.error(at, "`@` needs two tensors");
      return std::nullopt;
    }
    return matmul(*lhs, *rhs, /*transposeB=*/false, at, "`@`");
  }
  if (lhs->dtype != rhs->dtype) {
    diags.error(at, "cannot apply `" + spelled + "` to " +
                        shapeToString(lhs->dtype, lhs->shape) + " and " +
                        shapeToString(rhs->dtype, rhs->shape) +
                        ": element types differ (use cast())");
    noteOrigin(*lhs);
    noteOrigin(*rhs);
    return std::nullopt;
  }
  std::optional<SymShape> shape = broadcast(*lhs, *rhs, spelled, at);
  if (!shape)
    return std::nullopt;
  std::optional<TensorValue> result =
      binaryOp(op, *lhs, *rhs, *shape, at, "the result of `" + spelled + "`");
  if (!result)
    return std::nullopt;
  return Value::ofTensor(*result);
}

std::optional<TensorValue>
ElaboratorImpl::binaryOp(ast::BinaryOp op, const TensorValue &lhs,
                         const TensorValue &rhs, const SymShape &shape,
                         SourceLoc at, std::string description) {
  using B = ast::BinaryOp;
  std::string spelled = ast::spelling(op);
  const std::string &dtype = lhs.dtype;
  auto make = [&](auto tag) {
    using OpT = typename decltype(tag)::type;
    return makeTensor<OpT>(dtype, shape, at, std::move(description), lhs.value,
                           rhs.value);
  };
  switch (op) {
  case B::Add:
  case B::Sub:
  case B::Mul:
  case B::Div:
    if (dtype == "bool") {
      diags.error(at, "cannot apply `" + spelled + "` to bool tensors");
      return std::nullopt;
    }
    if (op == B::Add)
      return make(OpTag<tir::AddOp>());
    if (op == B::Sub)
      return make(OpTag<tir::SubOp>());
    if (op == B::Mul)
      return make(OpTag<tir::MulOp>());
    return make(OpTag<tir::DivOp>());
  case B::Pow:
    if (!isFloat(dtype)) {
      diags.error(at, "`**` needs f32 tensors, got " +
                          shapeToString(dtype, lhs.shape));
      return std::nullopt;
    }
    return make(OpTag<tir::PowOp>());
  case B::And:
  case B::Or:
    if (dtype != "bool") {
      diags.error(at, "`" + spelled + "` needs bool tensors, got " +
                          shapeToString(dtype, lhs.shape));
      return std::nullopt;
    }
    if (op == B::And)
      return make(OpTag<tir::AndOp>());
    return make(OpTag<tir::OrOp>());
  case B::Eq:
  case B::Ne:
  case B::Lt:
  case B::Le:
  case B::Gt:
  case B::Ge: {
    using P = tir::CmpPredicate;
    P predicate = op == B::Eq   ? P::eq
                  : op == B::Ne ? P::ne
                  : op == B::Lt ? P::lt
                  : op == B::Le ? P::le
                  : op == B::Gt ? P::gt
                                : P::ge;
    return makeTensor<tir::CmpOp>("bool", shape, at, std::move(description),
                                  predicate, lhs.value, rhs.value);
  }
  default:
    diags.error(at, "`" + spelled + "` is not defined on tensors");
    return std::nullopt;
  }
}

MaybeValue ElaboratorImpl::matmul(const TensorValue &a, const TensorValue &b,
                                  bool transposeB, SourceLoc at,
                                  const std::string &what) {
  if (!isFloat(a.dtype) || !isFloat(b.dtype)) {
    diags.error(at, what + " needs f32 tensors, got " +
                        shapeToString(a.dtype, a.shape) + " and " +
                        shapeToString(b.dtype, b.shape));
    return std::nullopt;
  }
  if (a.shape.size() < 2 || b.shape.size() < 2) {
    diags.error(at, what + " needs tensors of rank 2 or more, got " +
                        shapeToString(a.dtype, a.shape) + " and " +
                        shapeToString(b.dtype, b.shape));
    noteOrigin(a);
    noteOrigin(b);
    return std::nullopt;
  }
  const SymDim &m = a.shape[a.shape.size() - 2];
  const SymDim &ka = a.shape.back();
  const SymDim &kb = transposeB ? b.shape.back() : b.shape[b.shape.size() - 2];
  const SymDim &n = transposeB ? b.shape[b.shape.size() - 2] : b.shape.back();
  if (ka != kb) {
    diags.error(at, what + ": contraction dimensions differ: " +
                        shapeToString(a.dtype, a.shape) + " has " + ka.str() +
                        " columns, " + shapeToString(b.dtype, b.shape) +
                        (transposeB ? " (used transposed) has " : " has ") +
                        kb.str() + " rows");
    noteOrigin(a);
    noteOrigin(b);
    return std::nullopt;
  }
  TensorValue aBatch{a.value, a.dtype,
                     SymShape(a.shape.begin(), a.shape.end() - 2), a.origin,
                     a.description};
  TensorValue bBatch{b.value, b.dtype,
                     SymShape(b.shape.begin(), b.shape.end() - 2), b.origin,
                     b.description};
  std::optional<SymShape> shape = broadcast(aBatch, bBatch, what, at);
  if (!shape)
    return std::nullopt;
  shape->push_back(m);
  shape->push_back(n);
  std::optional<TensorValue> result = makeTensor<tir::MatmulOp>(
      "f32", *shape, at, "the result of " + what, a.value, b.value, transposeB);
  if (!result)
    return std::nullopt;
  return Value::ofTensor(*result);
}

/// Whether `op` passes its ODS invariants (operand and result types,
/// attributes) and its verifier, without reporting why not.
static bool verifiesQuietly(mlir::Operation *op) {
  mlir::ScopedDiagnosticHandler quiet(
      op->getContext(), [](mlir::Diagnostic &) { return mlir::success(); });
  return mlir::succeeded(mlir::verify(op, /*verifyRecursively=*/false));
}

MaybeValue ElaboratorImpl::unaryOp(UnaryBuilder make, const TensorValue &x,
                                   SourceLoc at, const std::string &what) {
  mlir::Operation *op = nullptr;
  std::optional<TensorValue> result = makeTensorWith(
      x.dtype, x.shape, at, "the result of `" + what + "`",
      [&](mlir::Location location) {
        mlir::Value value = make(builder, location, x.value);
        op = value.getDefiningOp();
        return value;
      });
  if (!result)
    return std::nullopt;
  // Which element types the op takes is its ODS operand constraint
  // (ir/TfcOps.td: f32 only, any numeric for neg, bool for not); no list of
  // its own here.
  if (!verifiesQuietly(op)) {
    op->erase();
    diags.error(at, "`" + what + "` cannot take " +
                        shapeToString(x.dtype, x.shape));
    noteOrigin(x);
    return std::nullopt;
  }
  return Value::ofTensor(*result);
}

MaybeValue ElaboratorImpl::transpose(const TensorValue &x,
                                     std::vector<int64_t> perm, SourceLoc at) {
  if (perm.size() != x.shape.size()) {
    diags.error(at, "permutation has " + std::to_string(perm.size()) +
                        " entries for a tensor of rank " +
                        std::to_string(x.shape.size()));
    return std::nullopt;
  }
  std::vector<bool> seen(perm.size());
  SymShape shape;
  for (int64_t &p : perm) {
    std::optional<int64_t> axis = normalizeAxis(p, perm.size(), "permute", at);
    if (!axis)
      return std::nullopt;
    if (seen[*axis]) {
      diags.error(at, "axis " + std::to_string(*axis) +
                          " appears twice in the permutation");
      return std::nullopt;
    }
    seen[*axis] = true;
    p = *axis;
    shape.push_back(x.shape[*axis]);
  }
  std::optional<TensorValue> result = makeTensor<tir::TransposeOp>(
      x.dtype, shape, at, "the transpose of " + x.description, x.value,
      llvm::ArrayRef<int64_t>(perm));
  if (!result)
    return std::nullopt;
  return Value::ofTensor(*result);
}

MaybeValue ElaboratorImpl::reshape(const TensorValue &x, const SymShape &shape,
                                   SourceLoc at) {
  // tfc.reshape regroups static dimensions only; symbolic ones must appear
  // in the same order, which covers head split/merge ([b, s, h*d] <->
  // [b, s, h, d]) without runtime shape arithmetic.
  std::vector<SymDim> inSym, outSym;
  int64_t inProduct = 1, outProduct = 1;
  for (const SymDim &d : x.shape) {
    if (!d.isStatic())
      inSym.push_back(d);
    else if (__builtin_mul_overflow(inProduct, d.constant, &inProduct))
      inProduct = -1; // cannot happen: checkShape bounds every tensor
  }
  std::vector<int64_t> attr;
  for (const SymDim &d : shape) {
    if (d.isStatic()) {
      if (d.constant <= 0 || d.constant > ElaborationLimits::maxDimSize) {
        diags.error(at, "reshape to a dimension of " + d.str());
        return std::nullopt;
      }
      if (__builtin_mul_overflow(outProduct, d.constant, &outProduct)) {
        diags.error(at, "reshape target is too large");
        return std::nullopt;
      }
      attr.push_back(d.constant);
    } else {
      outSym.push_back(d);
      attr.push_back(-1);
    }
  }
  if (inSym != outSym || inProduct != outProduct) {
    diags.error(at, "cannot reshape " + shapeToString(x.dtype, x.shape) +
                        " to " + shapeToString(x.dtype, shape) +
                        (inSym != outSym
                             ? ": symbolic dimensions must stay in order"
                             : ": element counts differ"));
    noteOrigin(x);
    return std::nullopt;
  }
  std::optional<TensorValue> result = makeTensor<tir::ReshapeOp>(
      x.dtype, shape, at, "the reshape of " + x.description, x.value,
      llvm::ArrayRef<int64_t>(attr));
  if (!result)
    return std::nullopt;
  return Value::ofTensor(*result);
}

MaybeValue ElaboratorImpl::slice(const TensorValue &x, int64_t axis,
                                 int64_t start, int64_t end, SourceLoc at,
                                 int64_t step) {
  const SymDim &dim = x.shape[axis];
  if (start < 0 || end <= start || (dim.isStatic() && end > dim.constant)) {
    diags.error(at, "slice " + std::to_string(start) + ":" +
                        std::to_string(end) +
                        (step != 1 ? ":" + std::to_string(step) : "") +
                        " is out of range for axis " + std::to_string(axis) +
                        " of " + shapeToString(x.dtype, x.shape));
    noteOrigin(x);
    return std::nullopt;
  }
  SymShape shape = x.shape;
  shape[axis] = SymDim::of(tir::SliceOp::sliceSize(start, end, step));
  std::optional<TensorValue> result =
      makeTensor<tir::SliceOp>(x.dtype, shape, at, "a slice of " + x.description,
                               x.value, axis, start, end, step);
  if (!result)
    return std::nullopt;
  return Value::ofTensor(*result);
}

MaybeValue ElaboratorImpl::concat(const std::vector<TensorValue> &parts,
                                  int64_t axisIn, SourceLoc at,
                                  const std::string &what) {
  if (parts.empty()) {
    diags.error(at, what + " needs at least one tensor");
    return std::nullopt;
  }
  const TensorValue &first = parts[0];
  std::optional<int64_t> axis =
      normalizeAxis(axisIn, first.shape.size(), what, at);
  if (!axis)
    return std::nullopt;
  SymShape shape = first.shape;
  shape[*axis] = SymDim::of(0);
  std::vector<mlir::Value> operands;
  for (const TensorValue &part : parts) {
    bool compatible = part.dtype == first.dtype &&
                      part.shape.size() == first.shape.size();
    for (size_t i = 0; compatible && i < part.shape.size(); ++i)
      if (static_cast<int64_t>(i) != *axis && part.shape[i] != first.shape[i])
        compatible = false;
    if (!compatible) {
      diags.error(at, what + " cannot join " +
                          shapeToString(first.dtype, first.shape) + " and " +
                          shapeToString(part.dtype, part.shape) +
                          " along axis " + std::to_string(*axis));
      noteOrigin(first);
      noteOrigin(part);
      return std::nullopt;
    }
    // Each part's dims are at most 2^40 (checkShape), and there are fewer
    // than 2^23 parts (the op limit): the sums cannot overflow, and
    // makeTensor checks them against the limits.
    SymDim &total = shape[*axis];
    total.constant += part.shape[*axis].constant;
    for (const auto &[name, coeff] : part.shape[*axis].terms)
      total.terms[name] += coeff;
    operands.push_back(part.value);
  }
  if (parts.size() == 1)
    return Value::ofTensor(first);
  std::optional<TensorValue> result = makeTensor<tir::ConcatOp>(
      first.dtype, shape, at, "the result of " + what,
      mlir::ValueRange(operands), *axis);
  if (!result)
    return std::nullopt;
  return Value::ofTensor(*result);
}

MaybeValue ElaboratorImpl::castTo(const TensorValue &x,
                                  const std::string &dtype, SourceLoc at) {
  if (dtype != "f32" && dtype != "i32" && dtype != "i64" && dtype != "bool") {
    diags.error(at, "cast to unknown element type '" + dtype +
                        "' (f32, i32, i64, bool)");
    return std::nullopt;
  }
  if (dtype == x.dtype)
    return Value::ofTensor(x);
  std::optional<TensorValue> result =
      makeTensor<tir::CastOp>(dtype, x.shape, at, "the cast of " + x.description,
                              x.value, elementType(dtype));
  if (!result)
    return std::nullopt;
  return Value::ofTensor(*result);
}

MaybeValue ElaboratorImpl::whereOp(const TensorValue &cond, const Value &aIn,
                                   const Value &bIn, SourceLoc at,
                                   const std::string &what) {
  if (cond.dtype != "bool") {
    diags.error(at, what + " needs a bool condition, got " +
                        shapeToString(cond.dtype, cond.shape));
    noteOrigin(cond);
    return std::nullopt;
  }
  std::string dtype = aIn.isTensor()   ? aIn.getTensor().dtype
                      : bIn.isTensor() ? bIn.getTensor().dtype
                                       : "f32";
  auto asTensor = [&](const Value &v) -> std::optional<TensorValue> {
    if (v.isTensor())
      return v.getTensor();
    return scalarConstant(v, dtype, at);
  };
  std::optional<TensorValue> a = asTensor(aIn);
  if (!a)
    return std::nullopt;
  std::optional<TensorValue> b = asTensor(bIn);
  if (!b)
    return std::nullopt;
  if (a->dtype != b->dtype) {
    diags.error(at, what + ": the two branches have different element types: " +
                        shapeToString(a->dtype, a->shape) + " and " +
                        shapeToString(b->dtype, b->shape));
    return std::nullopt;
  }
  std::optional<SymShape> ab = broadcast(*a, *b, what, at);
  if (!ab)
    return std::nullopt;
  TensorValue abShape{a->value, a->dtype, *ab, a->origin, a->description};
  std::optional<SymShape> shape = broadcast(cond, abShape, what, at);
  if (!shape)
    return std::nullopt;
  std::optional<TensorValue> result =
      makeTensor<tir::WhereOp>(dtype, *shape, at, "the result of " + what,
                               cond.value, a->value, b->value);
  if (!result)
    return std::nullopt;
  return Value::ofTensor(*result);
}

MaybeValue ElaboratorImpl::reduce(Reduction kind, const TensorValue &x,
                                  int64_t axisIn, bool keepdim, SourceLoc at,
                                  const std::string &what) {
  if (!isFloat(x.dtype)) {
    diags.error(at, what + " needs an f32 tensor, got " +
                        shapeToString(x.dtype, x.shape));
    return std::nullopt;
  }
  std::optional<int64_t> axis = normalizeAxis(axisIn, x.shape.size(), what, at);
  if (!axis)
    return std::nullopt;
  SymShape shape = x.shape;
  if (keepdim)
    shape[*axis] = SymDim::of(1);
  else
    shape.erase(shape.begin() + *axis);
  auto make = [&](auto tag) {
    using OpT = typename decltype(tag)::type;
    return makeTensor<OpT>(x.dtype, shape, at, "the result of " + what,
                           x.value, *axis, keepdim);
  };
  std::optional<TensorValue> result =
      kind == Reduction::Sum    ? make(OpTag<tir::ReduceSumOp>())
      : kind == Reduction::Mean ? make(OpTag<tir::ReduceMeanOp>())
                                : make(OpTag<tir::ReduceMaxOp>());
  if (!result)
    return std::nullopt;
  return Value::ofTensor(*result);
}

std::optional<DimSource> ElaboratorImpl::dimSource(const Value &dim,
                                                   SourceLoc at,
                                                   const std::string &what) {
  if (dim.is(Value::Kind::Dim)) {
    if (dim.getDimSource())
      return dim.getDimSource();
    const SymDim &d = dim.getDim();
    if (d.constant == 0 && d.terms.size() == 1 &&
        d.terms.begin()->second == 1) {
      auto found = entryDims.find(d.terms.begin()->first);
      if (found != entryDims.end())
        return found->second;
    }
    diags.error(at, what + ": cannot read the size " + d.str() +
                        " at run time; pass `dim(tensor, axis)` of a tensor "
                        "that has it");
    return std::nullopt;
  }
  diags.error(at, what + " needs a dim, got " + dim.describe());
  return std::nullopt;
}

MaybeValue ElaboratorImpl::indexTensor(const TensorValue &x,
                                       const std::vector<ast::Subscript> &subs,
                                       SourceLoc at) {
  // `...` stands for as many `:` as the other subscripts leave axes.
  size_t explicitAxes = 0;
  for (const ast::Subscript &sub : subs)
    explicitAxes += sub.isEllipsis ? 0 : 1;
  if (explicitAxes > x.shape.size()) {
    diags.error(at, "too many subscripts (" + std::to_string(explicitAxes) +
                        ") for " + shapeToString(x.dtype, x.shape));
    return std::nullopt;
  }
  TensorValue current = x;
  std::vector<bool> drop(x.shape.size(), false);
  size_t axis = 0;
  for (const ast::Subscript &sub : subs) {
    if (sub.isEllipsis) {
      axis += x.shape.size() - explicitAxes;
      continue;
    }
    std::optional<SliceBounds> bounds = subscriptBounds(current, axis, sub);
    if (!bounds)
      return std::nullopt;
    drop[axis] = !sub.isSlice;
    // A symbolic axis can be sliced with static bounds (`h[:, 0]` takes the
    // first token); the runtime checks the bound against the actual size.
    const SymDim &dim = current.shape[axis];
    bool whole = !bounds->start && !bounds->end && bounds->step == 1;
    if (!whole) {
      int64_t start = bounds->start.value_or(0);
      int64_t end = bounds->end.value_or(dim.constant);
      if (dim.isStatic() && start == 0 && end == dim.constant &&
          bounds->step == 1 && !drop[axis]) {
        ++axis;
        continue;
      }
      MaybeValue sliced =
          slice(current, axis, start, end, sub.loc, bounds->step);
      if (!sliced)
        return std::nullopt;
      current = sliced->getTensor();
    }
    ++axis;
  }
  if (std::find(drop.begin(), drop.end(), true) == drop.end())
    return Value::ofTensor(current);
  SymShape shape;
  for (size_t i = 0; i < current.shape.size(); ++i)
    if (!drop[i])
      shape.push_back(current.shape[i]);
  return reshape(current, shape, at);
}

std::optional<ElaboratorImpl::SliceBounds>
ElaboratorImpl::subscriptBounds(const TensorValue &x, size_t axis,
                                const ast::Subscript &sub) {
  const SymDim &dim = x.shape[axis];
  // One bound, with a negative one counted from the end of a static axis.
  auto bound = [&](const ast::ExprPtr &e) -> std::optional<int64_t> {
    MaybeValue v = eval(*e);
    if (!v)
      return std::nullopt;
    std::optional<int64_t> i = expectInt(*v, "a subscript", e->getLoc());
    if (!i || *i >= 0)
      return i;
    if (!dim.isStatic()) {
      diags.error(e->getLoc(), "a negative index needs a static dimension, "
                               "axis " +
                                   std::to_string(axis) + " is " + dim.str());
      return std::nullopt;
    }
    return *i + dim.constant;
  };
  SliceBounds out;
  if (!sub.isSlice) {
    std::optional<int64_t> i = bound(sub.index);
    if (!i)
      return std::nullopt;
    if (*i == INT64_MAX) {
      diags.error(sub.loc, "index " + std::to_string(*i) +
                               " is out of range for axis " +
                               std::to_string(axis) + " of " +
                               shapeToString(x.dtype, x.shape));
      return std::nullopt;
    }
    out.start = *i;
    out.end = *i + 1;
    return out;
  }
  if (sub.step) {
    MaybeValue v = eval(*sub.step);
    std::optional<int64_t> step =
        v ? expectInt(*v, "a slice step", sub.step->getLoc()) : std::nullopt;
    if (!step)
      return std::nullopt;
    if (*step < 1) {
      diags.error(sub.step->getLoc(),
                  "a slice step must be at least 1, got " +
                      std::to_string(*step) +
                      (*step < 0 ? " (negative steps are not supported)" : ""));
      return std::nullopt;
    }
    out.step = *step;
  }
  if (!dim.isStatic() && !sub.end && (sub.start || out.step != 1)) {
    diags.error(sub.loc, "cannot slice the symbolic dimension " + dim.str() +
                             " to its end");
    return std::nullopt;
  }
  if (sub.start && !(out.start = bound(sub.start)))
    return std::nullopt;
  if (sub.end && !(out.end = bound(sub.end)))
    return std::nullopt;
  return out;
}

namespace {

ArgSpec req(const char *name) { return ArgSpec{name, std::nullopt}; }
ArgSpec opt(const char *name, Value v) { return ArgSpec{name, v}; }

template <typename OpT>
constexpr ElaboratorImpl::UnaryBuilder buildUnary =
    &ElaboratorImpl::buildUnary<OpT>;
mlir::Value buildGeluTanh(mlir::OpBuilder &b, mlir::Location at,
                          mlir::Value x) {
  return b.create<tir::GeluOp>(at, x, "tanh")->getResult(0);
}

/// Elementwise unary functions (the element types each takes are its op's
/// operand constraint in ODS; unaryOp checks them).
const std::map<std::string, ElaboratorImpl::UnaryBuilder> &unaryOps() {
  static const std::map<std::string, ElaboratorImpl::UnaryBuilder> unary = {
      {"exp", buildUnary<tir::ExpOp>},
      {"log", buildUnary<tir::LogOp>},
      {"sqrt", buildUnary<tir::SqrtOp>},
      {"rsqrt", buildUnary<tir::RsqrtOp>},
      {"tanh", buildUnary<tir::TanhOp>},
      {"erf", buildUnary<tir::ErfOp>},
      {"sigmoid", buildUnary<tir::SigmoidOp>},
      {"relu", buildUnary<tir::ReluOp>},
      {"silu", buildUnary<tir::SiluOp>},
      {"gelu", buildUnary<tir::GeluOp>},
      {"gelu_tanh", buildGeluTanh},
      {"sin", buildUnary<tir::SinOp>},
      {"cos", buildUnary<tir::CosOp>},
      {"neg", buildUnary<tir::NegOp>},
      {"abs", buildUnary<tir::AbsOp>}};
  return unary;
}

/// The kinds `activation(x, kind)` takes; identity builds nothing.
const std::map<std::string, ElaboratorImpl::UnaryBuilder> &activations() {
  static const std::map<std::string, ElaboratorImpl::UnaryBuilder> kinds = {
      {"relu", buildUnary<tir::ReluOp>},  {"gelu", buildUnary<tir::GeluOp>},
      {"gelu_tanh", buildGeluTanh},       {"gelu_new", buildGeluTanh},
      {"silu", buildUnary<tir::SiluOp>},  {"swish", buildUnary<tir::SiluOp>},
      {"identity", nullptr}};
  return kinds;
}

/// One call of a builtin: the callee's name and location, and one handler
/// per builtin (or per family of builtins spelled alike), chosen by the
/// table in ElaboratorImpl::callBuiltin.
class BuiltinCall {
public:
  BuiltinCall(ElaboratorImpl &E, const ast::CallExpr &call)
      : E(E), call(call), f(call.callee), at(call.getLoc()) {}

  // Elementwise and math.
  MaybeValue callUnary();
  MaybeValue callActivation();
  MaybeValue callPowMaxMin();
  MaybeValue callWhere();
  MaybeValue callCast();

  // Linear algebra and reductions.
  MaybeValue callMatmul();
  MaybeValue callLinear();
  MaybeValue callReduction();

  // Shapes.
  MaybeValue callTranspose();
  MaybeValue callPermute();
  MaybeValue callReshape();
  MaybeValue callDim();

  // Data movement.
  MaybeValue callSplit();
  MaybeValue callConcatOrStack();
  MaybeValue callGather();

  // Normalization and attention helpers.
  MaybeValue callSoftmax();
  MaybeValue callNorm();
  MaybeValue callPositions();
  MaybeValue callCausalMask();

  // Index ops.
  MaybeValue callArgmax();
  MaybeValue callTopk();
  MaybeValue callCumsum();
  MaybeValue callArange();

private:
  const TensorValue *tensorArg(const Value &v, const char *name) {
    return E.expectTensor(
        v, "argument '" + std::string(name) + "' of `" + f + "`", at);
  }

  ElaboratorImpl &E;
  const ast::CallExpr &call;
  const std::string &f;
  SourceLoc at;
};

} // namespace

//===----------------------------------------------------------------------===//
// Elementwise and math
//===----------------------------------------------------------------------===//

MaybeValue BuiltinCall::callUnary() {
  auto it = unaryOps().find(f);
  auto args = E.bindArgs(call, {req("x")});
  if (!args)
    return std::nullopt;
  const TensorValue *x = tensorArg((*args)[0], "x");
  if (!x)
    return std::nullopt;
  return E.unaryOp(it->second, *x, at, f);
}

MaybeValue BuiltinCall::callActivation() {
  auto args = E.bindArgs(call, {req("x"), req("kind")});
  if (!args)
    return std::nullopt;
  const TensorValue *x = tensorArg((*args)[0], "x");
  if (!x)
    return std::nullopt;
  const Value &kind = (*args)[1];
  const auto &kinds = activations();
  auto k = kind.is(Value::Kind::Enum) || kind.is(Value::Kind::Str)
               ? kinds.find(kind.getStr())
               : kinds.end();
  if (k == kinds.end()) {
    E.diags.error(call.args.size() > 1 ? call.args[1].loc : at,
                  "unknown activation " + kind.str() +
                      " (relu, gelu, gelu_tanh, gelu_new, silu, swish, "
                      "identity)");
    return std::nullopt;
  }
  if (!k->second)
    return (*args)[0];
  return E.unaryOp(k->second, *x, at, k->first);
}

MaybeValue BuiltinCall::callPowMaxMin() {
  auto args = E.bindArgs(call, {req("a"), req("b")});
  if (!args)
    return std::nullopt;
  const Value &l = (*args)[0], &r = (*args)[1];
  if (!l.isTensor() && !r.isTensor()) {
    E.diags.error(at, "`" + f + "` needs a tensor operand");
    return std::nullopt;
  }
  auto asTensor = [&](const Value &v,
                      const std::string &dt) -> std::optional<TensorValue> {
    if (v.isTensor())
      return v.getTensor();
    return E.scalarConstant(v, dt, at);
  };
  std::string dt = l.isTensor() ? l.getTensor().dtype : r.getTensor().dtype;
  std::optional<TensorValue> lt = asTensor(l, dt);
  std::optional<TensorValue> rt = lt ? asTensor(r, dt) : std::nullopt;
  if (!rt)
    return std::nullopt;
  if (!isFloat(lt->dtype) || !isFloat(rt->dtype)) {
    E.diags.error(at, "`" + f + "` needs f32 tensors");
    return std::nullopt;
  }
  std::optional<SymShape> shape = E.broadcast(*lt, *rt, f, at);
  if (!shape)
    return std::nullopt;
  auto make = [&](auto tag) {
    using OpT = typename decltype(tag)::type;
    return E.makeTensor<OpT>("f32", *shape, at, "the result of `" + f + "`",
                             lt->value, rt->value);
  };
  std::optional<TensorValue> result =
      f == "pow"       ? make(OpTag<tir::PowOp>())
      : f == "maximum" ? make(OpTag<tir::MaximumOp>())
                       : make(OpTag<tir::MinimumOp>());
  if (!result)
    return std::nullopt;
  return Value::ofTensor(*result);
}

MaybeValue BuiltinCall::callWhere() {
  auto args = E.bindArgs(
      call, f == "where"
                ? std::vector<ArgSpec>{req("cond"), req("a"), req("b")}
                : std::vector<ArgSpec>{req("x"), req("mask"), req("value")});
  if (!args)
    return std::nullopt;
  if (f == "where") {
    const TensorValue *cond = tensorArg((*args)[0], "cond");
    if (!cond)
      return std::nullopt;
    return E.whereOp(*cond, (*args)[1], (*args)[2], at, "`where`");
  }
  const TensorValue *x = tensorArg((*args)[0], "x");
  const TensorValue *mask = x ? tensorArg((*args)[1], "mask") : nullptr;
  if (!mask)
    return std::nullopt;
  return E.whereOp(*mask, (*args)[2], (*args)[0], at, "`masked_fill`");
}

MaybeValue BuiltinCall::callCast() {
  auto args = E.bindArgs(call, {req("x"), req("dtype")});
  if (!args)
    return std::nullopt;
  const TensorValue *x = tensorArg((*args)[0], "x");
  if (!x)
    return std::nullopt;
  if (!(*args)[1].is(Value::Kind::Enum) && !(*args)[1].is(Value::Kind::Str)) {
    E.diags.error(at, "`cast` needs an element type name, got " +
                          (*args)[1].describe());
    return std::nullopt;
  }
  return E.castTo(*x, (*args)[1].getStr(), at);
}

//===----------------------------------------------------------------------===//
// Linear algebra and reductions
//===----------------------------------------------------------------------===//

MaybeValue BuiltinCall::callMatmul() {
  auto args = E.bindArgs(call, {req("a"), req("b")});
  if (!args)
    return std::nullopt;
  const TensorValue *a = tensorArg((*args)[0], "a");
  const TensorValue *bt = a ? tensorArg((*args)[1], "b") : nullptr;
  if (!bt)
    return std::nullopt;
  return E.matmul(*a, *bt, false, at, "`matmul`");
}

MaybeValue BuiltinCall::callLinear() {
  auto args = E.bindArgs(call, {req("x"), req("w"), opt("b", Value::none())});
  if (!args)
    return std::nullopt;
  const TensorValue *x = tensorArg((*args)[0], "x");
  const TensorValue *w = x ? tensorArg((*args)[1], "w") : nullptr;
  if (!w)
    return std::nullopt;
  MaybeValue y = E.matmul(*x, *w, /*transposeB=*/true, at, "`linear`");
  if (!y || (*args)[2].is(Value::Kind::None))
    return y;
  return E.tensorBinary(ast::BinaryOp::Add, *y, (*args)[2], at);
}

MaybeValue BuiltinCall::callReduction() {
  auto args = E.bindArgs(call, {req("x"), opt("axis", Value::ofInt(-1)),
                                opt("keepdim", Value::ofBool(false))});
  if (!args)
    return std::nullopt;
  const TensorValue *x = tensorArg((*args)[0], "x");
  if (!x)
    return std::nullopt;
  std::optional<int64_t> axis = E.expectInt((*args)[1], "axis", at);
  if (!axis)
    return std::nullopt;
  if (!(*args)[2].is(Value::Kind::Bool)) {
    E.diags.error(at, "keepdim must be a bool");
    return std::nullopt;
  }
  using R = ElaboratorImpl::Reduction;
  R kind = f == "sum" ? R::Sum : f == "mean" ? R::Mean : R::Max;
  return E.reduce(kind, *x, *axis, (*args)[2].getBool(), at, "`" + f + "`");
}

//===----------------------------------------------------------------------===//
// Shapes
//===----------------------------------------------------------------------===//

MaybeValue BuiltinCall::callTranspose() {
  auto args = E.bindArgs(
      call, {req("x"), opt("a", Value::ofInt(-2)), opt("b", Value::ofInt(-1))});
  if (!args)
    return std::nullopt;
  const TensorValue *x = tensorArg((*args)[0], "x");
  if (!x)
    return std::nullopt;
  std::optional<int64_t> a1 = E.expectInt((*args)[1], "axis", at);
  std::optional<int64_t> a2 =
      a1 ? E.expectInt((*args)[2], "axis", at) : std::nullopt;
  if (!a2)
    return std::nullopt;
  a1 = E.normalizeAxis(*a1, x->shape.size(), "transpose", at);
  a2 = a1 ? E.normalizeAxis(*a2, x->shape.size(), "transpose", at)
          : std::nullopt;
  if (!a2)
    return std::nullopt;
  std::vector<int64_t> perm(x->shape.size());
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[*a1], perm[*a2]);
  return E.transpose(*x, perm, at);
}

MaybeValue BuiltinCall::callPermute() {
  auto args = E.bindArgs(call, {req("x"), req("perm")});
  if (!args)
    return std::nullopt;
  const TensorValue *x = tensorArg((*args)[0], "x");
  if (!x)
    return std::nullopt;
  if (!(*args)[1].is(Value::Kind::List)) {
    E.diags.error(at, "`permute` needs a list of axes");
    return std::nullopt;
  }
  std::vector<int64_t> perm;
  for (const Value &v : (*args)[1].getList()) {
    std::optional<int64_t> axis = E.expectInt(v, "a permutation entry", at);
    if (!axis)
      return std::nullopt;
    perm.push_back(*axis);
  }
  return E.transpose(*x, perm, at);
}

MaybeValue BuiltinCall::callReshape() {
  auto args = E.bindArgs(call, {req("x"), req("shape")});
  if (!args)
    return std::nullopt;
  const TensorValue *x = tensorArg((*args)[0], "x");
  if (!x)
    return std::nullopt;
  if (!(*args)[1].is(Value::Kind::List)) {
    E.diags.error(at, "`reshape` needs a list of dimensions");
    return std::nullopt;
  }
  SymShape shape;
  for (const Value &v : (*args)[1].getList()) {
    std::optional<SymDim> dim = v.asDim();
    if (!dim) {
      E.diags.error(at, "reshape dimensions must be ints or dims, got " +
                            v.describe());
      return std::nullopt;
    }
    shape.push_back(*dim);
  }
  if (shape.size() > ElaborationLimits::maxRank) {
    E.diags.error(at, "tensors have at most 8 dimensions");
    return std::nullopt;
  }
  return E.reshape(*x, shape, at);
}

MaybeValue BuiltinCall::callDim() {
  auto args = E.bindArgs(call, {req("x"), req("axis")});
  if (!args)
    return std::nullopt;
  const TensorValue *x = tensorArg((*args)[0], "x");
  if (!x)
    return std::nullopt;
  std::optional<int64_t> axisIn = E.expectInt((*args)[1], "axis", at);
  std::optional<int64_t> axis =
      axisIn ? E.normalizeAxis(*axisIn, x->shape.size(), "dim", at)
             : std::nullopt;
  if (!axis)
    return std::nullopt;
  return Value::ofDim(x->shape[*axis], DimSource{x->value, *axis});
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

MaybeValue BuiltinCall::callSplit() {
  auto args =
      E.bindArgs(call, {req("x"), req("parts"), opt("axis", Value::ofInt(-1))});
  if (!args)
    return std::nullopt;
  const TensorValue *x = tensorArg((*args)[0], "x");
  if (!x)
    return std::nullopt;
  std::optional<int64_t> parts = E.expectInt((*args)[1], "`split` parts", at);
  std::optional<int64_t> axisIn =
      parts ? E.expectInt((*args)[2], "axis", at) : std::nullopt;
  if (!axisIn)
    return std::nullopt;
  std::optional<int64_t> axis =
      E.normalizeAxis(*axisIn, x->shape.size(), "split", at);
  if (!axis)
    return std::nullopt;
  const SymDim &dim = x->shape[*axis];
  if (*parts <= 0 || !dim.isStatic() || dim.constant % *parts != 0) {
    E.diags.error(at, "cannot split axis " + std::to_string(*axis) + " of " +
                          shapeToString(x->dtype, x->shape) + " into " +
                          std::to_string(*parts) + " equal parts");
    return std::nullopt;
  }
  int64_t size = dim.constant / *parts;
  std::vector<Value> pieces;
  for (int64_t i = 0; i < *parts; ++i) {
    MaybeValue piece = E.slice(*x, *axis, i * size, (i + 1) * size, at);
    if (!piece)
      return std::nullopt;
    pieces.push_back(*piece);
  }
  return Value::ofList(std::move(pieces));
}

MaybeValue BuiltinCall::callConcatOrStack() {
  auto args = E.bindArgs(
      call, {req("tensors"), opt("axis", Value::ofInt(f == "stack" ? 0 : -1))});
  if (!args)
    return std::nullopt;
  if (!(*args)[0].is(Value::Kind::List)) {
    E.diags.error(at, "`" + f + "` needs a list of tensors");
    return std::nullopt;
  }
  std::optional<int64_t> axis = E.expectInt((*args)[1], "axis", at);
  if (!axis)
    return std::nullopt;
  std::vector<TensorValue> parts;
  for (const Value &v : (*args)[0].getList()) {
    const TensorValue *t = E.expectTensor(v, "an element of `" + f + "`", at);
    if (!t)
      return std::nullopt;
    parts.push_back(*t);
  }
  if (f == "stack") {
    if (parts.empty()) {
      E.diags.error(at, "`stack` needs at least one tensor");
      return std::nullopt;
    }
    std::optional<int64_t> newAxis =
        E.normalizeAxis(*axis, parts[0].shape.size() + 1, "stack", at);
    if (!newAxis)
      return std::nullopt;
    for (TensorValue &part : parts) {
      SymShape shape = part.shape;
      shape.insert(shape.begin() + *newAxis, SymDim::of(1));
      MaybeValue expanded = E.reshape(part, shape, at);
      if (!expanded)
        return std::nullopt;
      part = expanded->getTensor();
    }
    return E.concat(parts, *newAxis, at, "`stack`");
  }
  return E.concat(parts, *axis, at, "`concat`");
}

MaybeValue BuiltinCall::callGather() {
  auto args = E.bindArgs(call, {req("table"), req("ids")});
  if (!args)
    return std::nullopt;
  const TensorValue *table = tensorArg((*args)[0], "table");
  const TensorValue *ids = table ? tensorArg((*args)[1], "ids") : nullptr;
  if (!ids)
    return std::nullopt;
  if (!isFloat(table->dtype) || table->shape.empty() || !isInt(ids->dtype)) {
    E.diags.error(at, "`gather` needs an f32 table and integer ids, got " +
                          shapeToString(table->dtype, table->shape) + " and " +
                          shapeToString(ids->dtype, ids->shape));
    return std::nullopt;
  }
  SymShape shape = ids->shape;
  shape.insert(shape.end(), table->shape.begin() + 1, table->shape.end());
  std::optional<TensorValue> result =
      E.makeTensor<tir::GatherOp>("f32", shape, at, "the result of `gather`",
                                  table->value, ids->value);
  if (!result)
    return std::nullopt;
  return Value::ofTensor(*result);
}

//===----------------------------------------------------------------------===//
// Normalization and attention helpers
//===----------------------------------------------------------------------===//

MaybeValue BuiltinCall::callSoftmax() {
  auto args = E.bindArgs(call, {req("x"), opt("axis", Value::ofInt(-1))});
  if (!args)
    return std::nullopt;
  const TensorValue *x = tensorArg((*args)[0], "x");
  if (!x)
    return std::nullopt;
  std::optional<int64_t> axisIn = E.expectInt((*args)[1], "axis", at);
  std::optional<int64_t> axis =
      axisIn ? E.normalizeAxis(*axisIn, x->shape.size(), "softmax", at)
             : std::nullopt;
  if (!axis)
    return std::nullopt;
  if (!isFloat(x->dtype)) {
    E.diags.error(at, "`softmax` needs an f32 tensor");
    return std::nullopt;
  }
  std::optional<TensorValue> result =
      E.makeTensor<tir::SoftmaxOp>("f32", x->shape, at,
                                   "the result of `softmax`", x->value, *axis);
  if (!result)
    return std::nullopt;
  return Value::ofTensor(*result);
}

MaybeValue BuiltinCall::callNorm() {
  bool ln = f == "layer_norm";
  std::vector<ArgSpec> specs = {req("x"), req("gamma")};
  if (ln)
    specs.push_back(req("beta"));
  specs.push_back(opt("eps", Value::ofFloat(ln ? 1e-5 : 1e-6)));
  auto args = E.bindArgs(call, specs);
  if (!args)
    return std::nullopt;
  const TensorValue *x = tensorArg((*args)[0], "x");
  if (!x)
    return std::nullopt;
  std::vector<mlir::Value> operands = {x->value};
  if (!isFloat(x->dtype) || x->shape.empty()) {
    E.diags.error(at, "`" + f + "` needs an f32 tensor of rank >= 1, got " +
                          shapeToString(x->dtype, x->shape));
    return std::nullopt;
  }
  for (size_t i = 1; i < (ln ? 3u : 2u); ++i) {
    const TensorValue *p = tensorArg((*args)[i], specs[i].name.c_str());
    if (!p)
      return std::nullopt;
    if (!isFloat(p->dtype)) {
      E.diags.error(at, "`" + f + "`: " + specs[i].name +
                            " must be an f32 tensor, got " +
                            shapeToString(p->dtype, p->shape));
      E.noteOrigin(*p);
      return std::nullopt;
    }
    if (p->shape.size() != 1 || p->shape[0] != x->shape.back()) {
      E.diags.error(at, "`" + f + "`: " + specs[i].name + " is " +
                            shapeToString(p->dtype, p->shape) +
                            " but the normalized axis of " +
                            shapeToString(x->dtype, x->shape) + " is " +
                            x->shape.back().str());
      E.noteOrigin(*x);
      E.noteOrigin(*p);
      return std::nullopt;
    }
    operands.push_back(p->value);
  }
  const Value &eps = (*args)[ln ? 3 : 2];
  if (!eps.isNumber() || !std::isfinite(eps.asDouble()) || eps.asDouble() < 0) {
    E.diags.error(at,
                  "eps must be a finite non-negative number, got " + eps.str());
    return std::nullopt;
  }
  std::string what = "the result of `" + f + "`";
  std::optional<TensorValue> result =
      ln ? E.makeTensor<tir::LayerNormOp>("f32", x->shape, at, what,
                                          operands[0], operands[1],
                                          operands[2], eps.asDouble())
         : E.makeTensor<tir::RmsNormOp>("f32", x->shape, at, what,
                                        operands[0], operands[1],
                                        eps.asDouble());
  if (!result)
    return std::nullopt;
  return Value::ofTensor(*result);
}

MaybeValue BuiltinCall::callPositions() {
  auto args = E.bindArgs(call, {req("n"), opt("offset", Value::ofInt(0))});
  if (!args)
    return std::nullopt;
  const Value &n = (*args)[0], &offset = (*args)[1];
  std::optional<SymDim> nDim = n.asDim();
  std::optional<SymDim> offDim = offset.asDim();
  if (!nDim || !offDim) {
    E.diags.error(at, "`positions` takes a length and an offset (ints or "
                      "dims), got " +
                          n.describe() + " and " + offset.describe());
    return std::nullopt;
  }
  SymShape shape = {*nDim};
  if (nDim->isStatic()) {
    if (nDim->constant <= 0 || nDim->constant > (1 << 24)) {
      E.diags.error(at, "`positions` length must be in 1..2^24");
      return std::nullopt;
    }
    std::optional<TensorValue> base;
    auto key = std::make_tuple(0, nDim->constant, int64_t(0));
    if (auto cached = E.constantCache.find(key);
        cached != E.constantCache.end()) {
      base = cached->second;
      base->origin = at;
    } else {
      if (!E.chargeConstant(nDim->constant, at))
        return std::nullopt;
      std::vector<int32_t> iota(nDim->constant);
      std::iota(iota.begin(), iota.end(), 0);
      auto type = E.tensorType("i32", shape);
      base = E.makeTensor<tir::ConstantOp>(
          "i32", shape, at, "`positions`",
          mlir::DenseElementsAttr::get(type, llvm::ArrayRef<int32_t>(iota)));
      if (!base)
        return std::nullopt;
      E.constantCache[key] = *base;
    }
    if (offDim->isStatic() && offDim->constant == 0)
      return Value::ofTensor(*base);
    if (offDim->isStatic())
      return E.tensorBinary(ast::BinaryOp::Add, Value::ofTensor(*base),
                            Value::ofInt(offDim->constant), at);
    E.diags.error(at, "`positions` with a static length needs a static "
                      "offset");
    return std::nullopt;
  }
  std::optional<DimSource> src = E.dimSource(n, at, "`positions`");
  if (!src)
    return std::nullopt;
  bool staticOffset = offDim->isStatic();
  std::optional<TensorValue> result;
  if (staticOffset) {
    result = E.makeTensor<tir::PositionsOp>("i32", shape, at, "`positions`",
                                            src->value, src->axis);
  } else {
    std::optional<DimSource> offSrc =
        E.dimSource(offset, at, "`positions` offset");
    if (!offSrc)
      return std::nullopt;
    result = E.makeTensor<tir::PositionsOp>("i32", shape, at, "`positions`",
                                            src->value, src->axis,
                                            offSrc->value, offSrc->axis);
  }
  if (!result)
    return std::nullopt;
  if (staticOffset && offDim->constant != 0)
    return E.tensorBinary(ast::BinaryOp::Add, Value::ofTensor(*result),
                          Value::ofInt(offDim->constant), at);
  return Value::ofTensor(*result);
}

MaybeValue BuiltinCall::callCausalMask() {
  auto args = E.bindArgs(call, {req("q"), req("k")});
  if (!args)
    return std::nullopt;
  std::optional<SymDim> q = (*args)[0].asDim(), k = (*args)[1].asDim();
  if (!q || !k) {
    E.diags.error(at, "`causal_mask` takes two lengths (ints or dims)");
    return std::nullopt;
  }
  SymShape shape = {*q, *k};
  if (q->isStatic() && k->isStatic()) {
    int64_t size = 0;
    if (q->constant <= 0 || k->constant <= 0 ||
        __builtin_mul_overflow(q->constant, k->constant, &size) ||
        size > (1 << 24)) {
      E.diags.error(at, "`causal_mask` of static size needs 1 <= q*k <= 2^24");
      return std::nullopt;
    }
    auto key = std::make_tuple(1, q->constant, k->constant);
    if (auto cached = E.constantCache.find(key);
        cached != E.constantCache.end()) {
      TensorValue mask = cached->second;
      mask.origin = at;
      return Value::ofTensor(std::move(mask));
    }
    if (!E.chargeConstant(size, at))
      return std::nullopt;
    llvm::SmallVector<bool> bits;
    bits.reserve(size);
    for (int64_t i = 0; i < q->constant; ++i)
      for (int64_t j = 0; j < k->constant; ++j)
        bits.push_back(j <= i + k->constant - q->constant);
    auto type = E.tensorType("bool", shape);
    std::optional<TensorValue> result = E.makeTensor<tir::ConstantOp>(
        "bool", shape, at, "`causal_mask`",
        mlir::DenseElementsAttr::get(type, llvm::ArrayRef<bool>(bits)));
    if (!result)
      return std::nullopt;
    E.constantCache[key] = *result;
    return Value::ofTensor(*result);
  }
  std::optional<DimSource> qs = E.dimSource((*args)[0], at, "`causal_mask`");
  std::optional<DimSource> ks =
      qs ? E.dimSource((*args)[1], at, "`causal_mask`") : std::nullopt;
  if (!ks)
    return std::nullopt;
  std::optional<TensorValue> result = E.makeTensor<tir::CausalMaskOp>(
      "bool", shape, at, "`causal_mask`", qs->value, ks->value, qs->axis,
      ks->axis);
  if (!result)
    return std::nullopt;
  return Value::ofTensor(*result);
}

//===----------------------------------------------------------------------===//
// Index ops: argmax, topk, cumsum, arange
//===----------------------------------------------------------------------===//

MaybeValue BuiltinCall::callArgmax() {
  auto args = E.bindArgs(call, {req("x"), opt("axis", Value::ofInt(-1)),
                                opt("keepdim", Value::ofBool(false))});
  if (!args)
    return std::nullopt;
  const TensorValue *x = tensorArg((*args)[0], "x");
  if (!x)
    return std::nullopt;
  std::optional<int64_t> axisIn = E.expectInt((*args)[1], "axis", at);
  std::optional<int64_t> axis =
      axisIn ? E.normalizeAxis(*axisIn, x->shape.size(), "argmax", at)
             : std::nullopt;
  if (!axis)
    return std::nullopt;
  if (!(*args)[2].is(Value::Kind::Bool)) {
    E.diags.error(at, "keepdim must be a bool");
    return std::nullopt;
  }
  if (x->dtype == "bool") {
    E.diags.error(at, "`argmax` needs a numeric tensor, got bool");
    return std::nullopt;
  }
  bool keepdim = (*args)[2].getBool();
  SymShape shape = x->shape;
  if (keepdim)
    shape[*axis] = SymDim::of(1);
  else
    shape.erase(shape.begin() + *axis);
  std::optional<TensorValue> result = E.makeTensor<tir::ArgmaxOp>(
      "i32", shape, at, "the result of `argmax`", x->value, *axis, keepdim);
  if (!result)
    return std::nullopt;
  return Value::ofTensor(*result);
}

MaybeValue BuiltinCall::callTopk() {
  auto args = E.bindArgs(call, {req("x"), req("k")});
  if (!args)
    return std::nullopt;
  const TensorValue *x = tensorArg((*args)[0], "x");
  if (!x)
    return std::nullopt;
  std::optional<int64_t> k = E.expectInt((*args)[1], "k", at);
  if (!k)
    return std::nullopt;
  if (x->dtype == "bool" || x->shape.empty()) {
    E.diags.error(at, "`topk` needs a numeric tensor of rank >= 1");
    return std::nullopt;
  }
  const SymDim &last = x->shape.back();
  if (*k < 1 || (last.isStatic() && *k > last.constant)) {
    E.diags.error(at, "`topk`: k = " + std::to_string(*k) +
                          " must be in 1.." + last.str() +
                          " (the last dim of x)");
    return std::nullopt;
  }
  SymShape shape = x->shape;
  shape.back() = SymDim::of(*k);
  mlir::Value indices;
  std::optional<TensorValue> values = E.makeTensorWith(
      x->dtype, shape, at, "the result of `topk`",
      [&](mlir::Location location) {
        auto op = E.builder.create<tir::TopkOp>(location, x->value, *k);
        indices = op.getIndices();
        return op.getValues();
      });
  if (!values)
    return std::nullopt;
  values->description = "the values of `topk`";
  if (indices.getType() != E.tensorType("i32", shape)) {
    E.diags.error(at, "internal error: the indices of `topk` are not " +
                          shapeToString("i32", shape));
    return std::nullopt;
  }
  return Value::ofList(
      {Value::ofTensor(*values),
       Value::ofTensor(TensorValue{indices, "i32", shape, at,
                                   "the indices of `topk`"})});
}

MaybeValue BuiltinCall::callCumsum() {
  auto args = E.bindArgs(call, {req("x"), opt("axis", Value::ofInt(-1))});
  if (!args)
    return std::nullopt;
  const TensorValue *x = tensorArg((*args)[0], "x");
  if (!x)
    return std::nullopt;
  std::optional<int64_t> axisIn = E.expectInt((*args)[1], "axis", at);
  std::optional<int64_t> axis =
      axisIn ? E.normalizeAxis(*axisIn, x->shape.size(), "cumsum", at)
             : std::nullopt;
  if (!axis)
    return std::nullopt;
  if (x->dtype == "bool") {
    E.diags.error(at, "`cumsum` needs a numeric tensor (cast a mask first)");
    return std::nullopt;
  }
  std::optional<TensorValue> result = E.makeTensor<tir::CumsumOp>(
      x->dtype, x->shape, at, "the result of `cumsum`", x->value, *axis);
  if (!result)
    return std::nullopt;
  return Value::ofTensor(*result);
}

MaybeValue BuiltinCall::callArange() {
  auto args = E.bindArgs(call, {req("n"), opt("start", Value::ofInt(0)),
                                opt("step", Value::ofInt(1))});
  if (!args)
    return std::nullopt;
  std::optional<SymDim> n = (*args)[0].asDim();
  std::optional<int64_t> start = E.expectInt((*args)[1], "start", at);
  std::optional<int64_t> step =
      start ? E.expectInt((*args)[2], "step", at) : std::nullopt;
  if (!step)
    return std::nullopt;
  if (!n) {
    E.diags.error(at, "`arange` takes a length (an int or a dim), got " +
                          (*args)[0].describe());
    return std::nullopt;
  }
  const char *what = "the result of `arange`";
  std::optional<TensorValue> result;
  if (n->isStatic()) {
    result = E.makeTensor<tir::ArangeOp>("i32", {*n}, at, what, n->constant,
                                         *start, *step);
  } else {
    std::optional<DimSource> src = E.dimSource((*args)[0], at, "`arange`");
    if (!src)
      return std::nullopt;
    result = E.makeTensor<tir::ArangeOp>("i32", {*n}, at, what, src->value,
                                         src->axis, *start, *step);
  }
  if (!result)
    return std::nullopt;
  return Value::ofTensor(*result);
}

//===----------------------------------------------------------------------===//
// The builtin table
//===----------------------------------------------------------------------===//

namespace {
using Handler = MaybeValue (BuiltinCall::*)();

/// Every tensor builtin, by name.
const std::map<std::string, Handler> &builtinTable() {
  static const std::map<std::string, Handler> table = [] {
    std::map<std::string, Handler> t = {
        {"activation", &BuiltinCall::callActivation},
        {"matmul", &BuiltinCall::callMatmul},
        {"linear", &BuiltinCall::callLinear},
        {"pow", &BuiltinCall::callPowMaxMin},
        {"maximum", &BuiltinCall::callPowMaxMin},
        {"minimum", &BuiltinCall::callPowMaxMin},
        {"transpose", &BuiltinCall::callTranspose},
        {"permute", &BuiltinCall::callPermute},
        {"reshape", &BuiltinCall::callReshape},
        {"split", &BuiltinCall::callSplit},
        {"concat", &BuiltinCall::callConcatOrStack},
        {"stack", &BuiltinCall::callConcatOrStack},
        {"gather", &BuiltinCall::callGather},
        {"sum", &BuiltinCall::callReduction},
        {"mean", &BuiltinCall::callReduction},
        {"max", &BuiltinCall::callReduction},
        {"softmax", &BuiltinCall::callSoftmax},
        {"layer_norm", &BuiltinCall::callNorm},
        {"rms_norm", &BuiltinCall::callNorm},
        {"where", &BuiltinCall::callWhere},
        {"masked_fill", &BuiltinCall::callWhere},
        {"cast", &BuiltinCall::callCast},
        {"dim", &BuiltinCall::callDim},
        {"positions", &BuiltinCall::callPositions},
        {"causal_mask", &BuiltinCall::callCausalMask},
        {"argmax", &BuiltinCall::callArgmax},
        {"topk", &BuiltinCall::callTopk},
        {"cumsum", &BuiltinCall::callCumsum},
        {"arange", &BuiltinCall::callArange},
    };
    for (const auto &entry : unaryOps())
      t.emplace(entry.first, &BuiltinCall::callUnary);
    return t;
  }();
  return table;
}
} // namespace

std::vector<std::string> tfc::builtinNames() {
  std::vector<std::string> names;
  for (const auto &entry : builtinTable())
    names.push_back(entry.first);
  return names;
}

MaybeValue ElaboratorImpl::callBuiltin(const ast::CallExpr &call, bool &found) {
  const std::map<std::string, Handler> &table = builtinTable();
  auto it = table.find(call.callee);
  found = it != table.end();
  if (!found)
    return std::nullopt;
  BuiltinCall builtin(*this, call);
  return (builtin.*(it->second))();
}
