//===- Describe.h - How messages name an op and a location ------*- C++ -*-===//
//
// One home for the text that errors, the fusion report and the kernel
// builder use to name an op ("tfc.add at gpt2-arch.tfm:54:32") or a
// location, call-site chains included.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_IR_DESCRIBE_H
#define TFC_IR_DESCRIBE_H

#include "mlir/IR/Location.h"
#include "mlir/IR/Operation.h"

#include <string>

namespace tfc {

/// `file:line:col` of a location, files reduced to their base names. For a
/// call-site chain (a .tfm block called from the model), every frame from
/// the outermost call to the innermost op, joined by " > ":
/// "bert-arch.tfm:50:9 > bert-arch.tfm:37:7 > <prelude>:68:7 >
/// <prelude>:40:10". "?" for unknown locations.
std::string formatLocation(mlir::Location loc);

/// "tfc.add at gpt2-arch.tfm:54:32" ("?" for no op).
std::string describe(mlir::Operation *op);

} // namespace tfc

#endif // TFC_IR_DESCRIBE_H
