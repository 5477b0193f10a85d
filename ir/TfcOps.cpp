//===- TfcOps.cpp - ops of the tfc dialect --------------------------------===//
//
// The generated op definitions, and the ops whose result type is given rather
// than inferred (tfc.param, tfc.cast). Shape functions of the other ops are
// in ShapeInference.cpp, folders in Folders.cpp.
//
//===----------------------------------------------------------------------===//

#include "ir/TfcOps.h"

#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace mlir::tfc;

using mlir::tfc::detail::str;

//===----------------------------------------------------------------------===//
// CmpOp: the predicate prints as a bare keyword (`tfc.cmp lt, ...`).
//===----------------------------------------------------------------------===//

static ParseResult parseCmpPredicate(OpAsmParser &parser,
                                     StringAttr &predicate) {
  std::string text;
  if (parser.parseKeywordOrString(&text))
    return failure();
  // Any word parses; the verifier names the valid ones.
  predicate = parser.getBuilder().getStringAttr(text);
  return success();
}

static void printCmpPredicate(OpAsmPrinter &printer, CmpOp,
                              StringAttr predicate) {
  // Only IR that does not verify has another predicate; quoting it keeps the
  // output parseable.
  if (symbolizeCmpPredicate(predicate.getValue()))
    printer << predicate.getValue();
  else
    printer.printAttributeWithoutType(predicate);
}

//===----------------------------------------------------------------------===//
// ParamOp
//===----------------------------------------------------------------------===//

LogicalResult ParamOp::verify() {
  if (getName().empty())
    return emitOpError("requires a non-empty checkpoint tensor name");
  // The runtime checks the checkpoint tensor against this type, and buffers
  // for weights are allocated once: the shape must be known.
  auto type = cast<RankedTensorType>(getType());
  if (!type.hasStaticShape())
    return emitOpError("parameter \"")
           << getName() << "\" must have a static shape, got " << str(type);
  return success();
}

//===----------------------------------------------------------------------===//
// CastOp
//===----------------------------------------------------------------------===//

void CastOp::build(OpBuilder &builder, OperationState &state, Value input,
                   Type elementType) {
  state.addOperands(input);
  auto type = dyn_cast<RankedTensorType>(input.getType());
  // An unranked input is rejected by the verifier; do not guess a shape.
  state.addTypes(type ? RankedTensorType::get(type.getShape(), elementType)
                      : mlir::tfc::detail::placeholderType(builder));
}

LogicalResult CastOp::verify() {
  auto inputType = cast<RankedTensorType>(getInput().getType());
  auto resultType = cast<RankedTensorType>(getType());
  if (inputType.getShape() != resultType.getShape())
    return emitOpError("input ")
           << str(inputType) << " and result " << str(resultType)
           << " differ in shape; a cast only changes the element type";
  // bf16 exists for product weights only: f32 <-> bf16.
  bool inBf16 = inputType.getElementType().isBF16();
  bool outBf16 = resultType.getElementType().isBF16();
  if ((inBf16 && !resultType.getElementType().isF32() && !outBf16) ||
      (outBf16 && !inputType.getElementType().isF32() && !inBf16))
    return emitOpError("casts to or from bf16 must be from or to f32, got ")
           << str(inputType) << " to " << str(resultType);
  return success();
}

#include "ir/TfcEnums.cpp.inc"

#define GET_OP_CLASSES
#include "ir/TfcOps.cpp.inc"
