//===- InferSupport.cpp - glue between shape functions and ODS ------------===//
//
// Helpers called from the code ODS generates for Tfc_InferOp ops (see
// TfcDialect.td): builders that never abort, optional diagnostics, and the
// check of declared against inferred result types.
//
//===----------------------------------------------------------------------===//

#include "ir/TfcOps.h"

namespace mlir::tfc::detail {

std::string str(Type type) {
  std::string result;
  llvm::raw_string_ostream os(result);
  type.print(os);
  return result;
}

FailureOr<RankedTensorType> getRanked(Value value, StringRef role,
                                      EmitErrorFn emitError) {
  if (!value)
    return emitError() << "is missing its " << role << " operand";
  if (auto type = dyn_cast<RankedTensorType>(value.getType()))
    return type;
  return emitError() << role << " must be a ranked tensor, got "
                     << str(value.getType());
}

FailureOr<int64_t> readInt(IntegerAttr attr, StringRef name,
                           EmitErrorFn emitError) {
  if (!attr)
    return emitError() << "requires attribute '" << name << "'";
  // Unverified IR may carry an integer of another width; APInt would assert
  // when asked for 64 bits it does not have.
  APInt value = attr.getValue();
  if (value.getBitWidth() != 64)
    return emitError() << "attribute '" << name << "' must be a 64-bit integer";
  return value.getSExtValue();
}

Type placeholderType(OpBuilder &builder) {
  // Unranked: no tfc op result may be unranked, so this can never pass the
  // verifier by accident.
  return UnrankedTensorType::get(builder.getI1Type());
}

void setInferredResultTypes(OpBuilder &builder, OperationState &state) {
  std::optional<RegisteredOperationName> info = state.name.getRegisteredInfo();
  auto *inferType = info ? info->getInterface<InferTypeOpInterface>() : nullptr;
  SmallVector<Type, 1> inferred;
  // No location: a failure here is not an error yet, the verifier reports it.
  if (inferType && succeeded(inferType->inferReturnTypes(
                       builder.getContext(), std::nullopt, state.operands,
                       state.attributes.getDictionary(builder.getContext()),
                       state.getRawProperties(), state.regions, inferred))) {
    state.types.assign(inferred.begin(), inferred.end());
    return;
  }
  state.types.assign(1, placeholderType(builder));
}

void attributesToProperties(OperationState &state,
                            OpaqueProperties properties) {
  if (state.attributes.empty())
    return;
  std::optional<RegisteredOperationName> info = state.name.getRegisteredInfo();
  if (!info)
    return;
  // A mistyped attribute is left out of the properties; the verifier then
  // reports the attribute as missing.
  MLIRContext *context = state.getContext();
  (void)info->setOpPropertiesFromAttribute(
      state.name, properties, state.attributes.getDictionary(context),
      [&]() { return emitOptionalOpError(context, std::nullopt, ""); });
}

InFlightDiagnostic emitOptionalOpError(MLIRContext *context,
                                       std::optional<Location> location,
                                       StringRef opName) {
  if (location) {
    InFlightDiagnostic diag = mlir::emitError(*location);
    diag << "'" << opName << "' op ";
    return diag;
  }
  // An abandoned diagnostic stays active, so streaming into it is allowed,
  // but it is never reported.
  InFlightDiagnostic diag = mlir::emitError(UnknownLoc::get(context));
  diag.abandon();
  return diag;
}

LogicalResult verifyResultTypes(Operation *op, TypeRange inferred) {
  if (op->getResultTypes() == inferred)
    return success();
  if (op->getNumResults() == 1 && inferred.size() == 1)
    return op->emitOpError("result type ")
           << str(op->getResult(0).getType())
           << " differs from the inferred type " << str(inferred.front());
  InFlightDiagnostic diag = op->emitOpError("result types (");
  llvm::interleaveComma(op->getResultTypes(), diag,
                        [&](Type type) { diag << str(type); });
  diag << ") differ from the inferred types (";
  llvm::interleaveComma(inferred, diag, [&](Type type) { diag << str(type); });
  return diag << ")";
}

} // namespace mlir::tfc::detail
