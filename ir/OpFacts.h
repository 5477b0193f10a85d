//===- OpFacts.h - What the compiler knows of each op -----------*- C++ -*-===//
//
// The C++ side of the op interfaces in TfcInterfaces.td. Every tfc op
// implements all three; the interfaces have no default implementation, so an
// op that lacks a rule does not compile (ODS attaches the interfaces to every
// op through Tfc_Op):
//
//  - KernelFamilyOpInterface: which kernel builder compiles the op
//    (rt::KernelFamily), stated with the `Tfc_Family<...>` trait;
//  - FlopCountOpInterface: the FLOPs of one execution, for `tfc info` and
//    `tfc bench`; `Tfc_FlopsPerElement<n>`, `Tfc_FlopsPerInputElement<n>`
//    or a rule of the op's own (`Tfc_CustomFlops`, in OpFacts.cpp);
//  - SymbolicShapeOpInterface: the symbolic counterpart of the op's
//    `inferShape`: result shapes as DimExprs over an entry's symbolic
//    dimensions, which the planner (plan/PlanBuilder.cpp) needs to size
//    every buffer before a kernel runs. `Tfc_BroadcastShape`,
//    `Tfc_ShapeOfOperand<i>`, `Tfc_StaticShape` or a rule of the op's own
//    (`Tfc_CustomSymbolicShape`, in OpFacts.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef TFC_IR_OPFACTS_H
#define TFC_IR_OPFACTS_H

#include "runtime/DimExpr.h"
#include "runtime/KernelFamily.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/Twine.h"

#include <optional>
#include <vector>

namespace mlir::tfc {

using ::tfc::rt::DimExpr;
using ::tfc::rt::KernelFamily;
using SymShape = std::vector<DimExpr>;

/// What a symbolic shape rule may ask of the planner that calls it.
class SymbolicShapeContext {
public:
  virtual ~SymbolicShapeContext();
  /// The symbolic shape of operand `i` (every operand has one).
  virtual const SymShape &operandShape(unsigned i) const = 0;
  /// numpy broadcasting over DimExprs. A symbolic dim broadcast against a
  /// static n > 1 becomes n, and the planner has the runtime check that it
  /// is n; two different symbolic dims fail.
  virtual FailureOr<SymShape> broadcast(ArrayRef<SymShape> shapes) = 0;
  /// Records why the rule failed (the planner prefixes the op and its
  /// location) and returns failure().
  virtual LogicalResult fail(const Twine &message) = 0;
};

/// FLOPs of one execution of an op, split as `tfc bench` reports them.
struct OpFlops {
  double matmul = 0;
  double other = 0;
};

namespace detail {
/// The number of elements of a static-shaped ranked tensor type, else
/// nullopt.
std::optional<double> staticNumElements(Type type);
/// Result `i`'s symbolic shape: its static dims, and the dims of `from` (of
/// the same rank) where it is dynamic. Fails where `from` has no symbolic
/// dim to give.
FailureOr<SymShape> shapeFrom(Operation *op, unsigned result,
                              const SymShape &from, SymbolicShapeContext &ctx);
} // namespace detail

//===----------------------------------------------------------------------===//
// Traits that state a common rule (TfcInterfaces.td names them)
//===----------------------------------------------------------------------===//

/// The op is compiled by the builder of `Family`.
template <KernelFamily Family> struct KernelFamilyIs {
  template <typename ConcreteType>
  class Impl : public OpTrait::TraitBase<ConcreteType, Impl> {
  public:
    static KernelFamily getKernelFamily() { return Family; }
  };
};

/// `N` FLOPs per element of result 0.
template <int N> struct FlopsPerElement {
  template <typename ConcreteType>
  class Impl : public OpTrait::TraitBase<ConcreteType, Impl> {
  public:
    std::optional<OpFlops> countFlops() {
      std::optional<double> n =
          detail::staticNumElements(this->getOperation()->getResult(0).getType());
      if (!n)
        return std::nullopt;
      return OpFlops{0, N * *n};
    }
  };
};

/// `N` FLOPs per element of operand 0 (reductions).
template <int N> struct FlopsPerInputElement {
  template <typename ConcreteType>
  class Impl : public OpTrait::TraitBase<ConcreteType, Impl> {
  public:
    std::optional<OpFlops> countFlops() {
      std::optional<double> n = detail::staticNumElements(
          this->getOperation()->getOperand(0).getType());
      if (!n)
        return std::nullopt;
      return OpFlops{0, N * *n};
    }
  };
};

/// Results broadcast all operands (numpy rules): binary ops, `where`.
template <typename ConcreteType>
class BroadcastShape : public OpTrait::TraitBase<ConcreteType, BroadcastShape> {
public:
  LogicalResult inferSymbolicShapes(SymbolicShapeContext &ctx,
                                    std::vector<SymShape> &results) {
    std::vector<SymShape> operands;
    for (unsigned i = 0; i < this->getOperation()->getNumOperands(); ++i)
      operands.push_back(ctx.operandShape(i));
    FailureOr<SymShape> shape = ctx.broadcast(operands);
    if (failed(shape))
      return failure();
    results.assign(this->getOperation()->getNumResults(), *shape);
    return success();
  }
};

/// Every result has the shape of operand `I`.
template <unsigned I> struct ShapeOfOperand {
  template <typename ConcreteType>
  class Impl : public OpTrait::TraitBase<ConcreteType, Impl> {
  public:
    LogicalResult inferSymbolicShapes(SymbolicShapeContext &ctx,
                                      std::vector<SymShape> &results) {
      results.assign(this->getOperation()->getNumResults(),
                     ctx.operandShape(I));
      return success();
    }
  };
};

/// Results are fully static (their type is their shape).
template <typename ConcreteType>
class StaticShape : public OpTrait::TraitBase<ConcreteType, StaticShape> {
public:
  LogicalResult inferSymbolicShapes(SymbolicShapeContext &ctx,
                                    std::vector<SymShape> &results) {
    for (unsigned r = 0; r < this->getOperation()->getNumResults(); ++r) {
      FailureOr<SymShape> s =
          detail::shapeFrom(this->getOperation(), r, SymShape(), ctx);
      if (failed(s))
        return failure();
      results.push_back(std::move(*s));
    }
    return success();
  }
};

/// Markers: the op declares the rule itself (TfcInterfaces.td adds the
/// declaration; OpFacts.cpp defines it).
template <typename ConcreteType>
class CustomSymbolicShape
    : public OpTrait::TraitBase<ConcreteType, CustomSymbolicShape> {};
template <typename ConcreteType>
class CustomFlops : public OpTrait::TraitBase<ConcreteType, CustomFlops> {};

} // namespace mlir::tfc

#include "ir/TfcInterfaces.h.inc"

#endif // TFC_IR_OPFACTS_H
