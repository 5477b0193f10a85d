//===- TfcOps.h - ops of the tfc dialect ------------------------*- C++ -*-===//
//
// The op classes generated from TfcOps.td, and the few helpers their
// generated code calls. Frontend and passes include this header.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_IR_TFCOPS_H
#define TFC_IR_TFCOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include "ir/OpFacts.h"
#include "ir/TfcDialect.h"

#include <optional>
#include <string>

namespace mlir::tfc {

/// Starts an error diagnostic. Shape functions report through one of these so
/// that the same code serves the verifier (errors on the op) and
/// `inferReturnTypes` (errors at an optional location, or none).
using EmitErrorFn = llvm::function_ref<InFlightDiagnostic()>;

/// Columns of a weight panel (tfc.pack_panels): the CPU matmul kernels'
/// register tile, 3 AVX-512 vectors of f32 (codegen/MatmulKernel.cpp).
constexpr int64_t kPanelColumns = 48;

/// The shape `tfc.pack_panels` gives a [K, N] weight of `elementType`
/// ([ceil(N / 48), K, 48]; bf16: [ceil(N / 48), K / 2, 48, 2]).
llvm::SmallVector<int64_t> panelShape(int64_t k, int64_t n, Type elementType);

/// The weight operand of a tfc.matmul / tfc.linear: read as [N, K]
/// (`transpose_b`), or in column panels (`packed_n`, tfc.pack_panels).
struct ProductWeight {
  OpOperand *operand = nullptr;
  bool transposeB = false;
  bool packed = false;
};

/// `op`'s weight operand if it is a tfc.matmul or tfc.linear.
std::optional<ProductWeight> productWeight(Operation *op);

/// Makes the tfc.matmul / tfc.linear `op` read `w` without transpose_b:
/// [K, N], or the panels of a tfc.pack_panels result (then with `packed_n`).
void setProductWeight(Operation *op, Value w);

namespace detail {

/// Result type given by the builders when inference fails, so that the op can
/// still be created and the verifier reports why. Never valid IR.
Type placeholderType(OpBuilder &builder);

/// Sets the result types of `state` to the inferred ones, or to one
/// placeholder type if the operands do not allow inference.
void setInferredResultTypes(OpBuilder &builder, OperationState &state);

/// Copies the inherent attributes of `state.attributes` into the op's
/// properties, as ODS's generic builders do (but without aborting on a
/// mistyped attribute: the verifier reports it as missing).
void attributesToProperties(OperationState &state, OpaqueProperties properties);

/// The same for an op class: a no-op for ops without attributes.
template <typename OpTy> void attributesToProperties(OperationState &state) {
  if constexpr (OpTy::hasProperties())
    attributesToProperties(
        state, &state.getOrAddProperties<
                   typename OpTy::template InferredProperties<OpTy>>());
}

/// A diagnostic prefixed like Operation::emitOpError when `location` is set,
/// otherwise one that is dropped (streaming into it is a no-op).
InFlightDiagnostic emitOptionalOpError(MLIRContext *context,
                                       std::optional<Location> location,
                                       StringRef opName);

/// `type` as tfc messages print it: bare (diagnostics quote streamed types),
/// because shapes read better so and the frontend relays these messages.
std::string str(Type type);

/// The ranked tensor type of `value`, or an error naming its `role`.
FailureOr<RankedTensorType> getRanked(Value value, StringRef role,
                                      EmitErrorFn emitError);

/// The value of a required 64-bit integer attribute `name`.
FailureOr<int64_t> readInt(IntegerAttr attr, StringRef name,
                           EmitErrorFn emitError);

/// Requires the op's result types to be exactly `inferred`.
LogicalResult verifyResultTypes(Operation *op, TypeRange inferred);

/// Whether `numOperands` fits the op's fixed operand count, if it has one.
/// Ops with variadic operands check the count in their shape function.
template <typename OpTy> bool operandCountFits(size_t numOperands) {
  if constexpr (OpTy::template hasTrait<OpTrait::ZeroOperands>())
    return numOperands == 0;
  else if constexpr (OpTy::template hasTrait<OpTrait::OneOperand>())
    return numOperands == 1;
  else if constexpr (OpTy::template hasTrait<OpTrait::NOperands<2>::Impl>())
    return numOperands == 2;
  else if constexpr (OpTy::template hasTrait<OpTrait::NOperands<3>::Impl>())
    return numOperands == 3;
  else if constexpr (OpTy::template hasTrait<OpTrait::NOperands<4>::Impl>())
    return numOperands == 4;
  else if constexpr (OpTy::template hasTrait<OpTrait::NOperands<5>::Impl>())
    return numOperands == 5;
  else if constexpr (OpTy::template hasTrait<
                         OpTrait::AtLeastNOperands<1>::Impl>())
    return numOperands >= 1;
  else if constexpr (OpTy::template hasTrait<
                         OpTrait::AtLeastNOperands<2>::Impl>())
    return numOperands >= 2;
  else if constexpr (OpTy::template hasTrait<
                         OpTrait::AtLeastNOperands<3>::Impl>())
    return numOperands >= 3;
  return true;
}

/// `OpTy::inferReturnTypes`: runs the op's shape function on operands and
/// attributes that may not be verified. The attributes may come as properties
/// (an existing op, a builder) or in `attributes` (the parser infers result
/// types before it has moved attr-dict entries into properties): both are
/// merged into one copy.
template <typename OpTy>
LogicalResult inferReturnTypes(MLIRContext *context,
                               std::optional<Location> location,
                               ValueRange operands, DictionaryAttr attributes,
                               OpaqueProperties properties, RegionRange regions,
                               SmallVectorImpl<Type> &inferredTypes) {
  auto emitError = [&]() {
    return emitOptionalOpError(context, location, OpTy::getOperationName());
  };
  // The adaptor reads operands by position: refuse a wrong count first.
  if (!operandCountFits<OpTy>(operands.size()))
    return emitError() << "has the wrong number of operands ("
                       << operands.size() << ")";
  if constexpr (OpTy::hasProperties()) {
    using Properties = typename OpTy::template InferredProperties<OpTy>;
    Properties merged;
    if (properties)
      merged = *properties.as<Properties *>();
    if (attributes &&
        failed(OpTy::setPropertiesFromAttr(merged, attributes, emitError)))
      return failure();
    typename OpTy::Adaptor adaptor(operands, attributes, &merged, regions);
    return OpTy::inferShape(adaptor, emitError, inferredTypes);
  } else {
    typename OpTy::Adaptor adaptor(operands, attributes, properties, regions);
    return OpTy::inferShape(adaptor, emitError, inferredTypes);
  }
}

} // namespace detail
} // namespace mlir::tfc

#include "ir/TfcEnums.h.inc"

#define GET_OP_CLASSES
#include "ir/TfcOps.h.inc"

#endif // TFC_IR_TFCOPS_H
