//===- TfcDialect.h - the tfc dialect ---------------------------*- C++ -*-===//
//
// Declares the `tfc` dialect. Include ir/TfcOps.h for the ops.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_IR_TFCDIALECT_H
#define TFC_IR_TFCDIALECT_H

#include "mlir/IR/Dialect.h"

#include "ir/TfcOpsDialect.h.inc"

#endif // TFC_IR_TFCDIALECT_H
