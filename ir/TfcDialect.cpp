//===- TfcDialect.cpp - the tfc dialect -----------------------------------===//

#include "ir/TfcDialect.h"
#include "ir/TfcOps.h"

using namespace mlir;
using namespace mlir::tfc;

#include "ir/TfcOpsDialect.cpp.inc"

void TfcDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "ir/TfcOps.cpp.inc"
      >();
}

Operation *TfcDialect::materializeConstant(OpBuilder &builder, Attribute value,
                                           Type type, Location loc) {
  auto elements = dyn_cast<ElementsAttr>(value);
  if (!elements || elements.getType() != type)
    return nullptr;
  return builder.create<ConstantOp>(loc, elements);
}
