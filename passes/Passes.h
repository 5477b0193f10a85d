//===- Passes.h - tfc graph passes ------------------------------*- C++ -*-===//
//
// Creation and registration of the passes declared in Passes.td (the list
// of them, with their arguments and options):
// `createTfcSimplify()`, `createFuseAttention()`, ... make one pass each;
// `registerTfcPasses()` makes them known to mlir-opt style drivers. The
// default pipeline that chains them, and registerTfcPassesAndPipeline() for
// tfc-opt, are in Pipeline.h.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_PASSES_PASSES_H
#define TFC_PASSES_PASSES_H

#include "mlir/Pass/Pass.h"

#include <memory>

namespace tfc {

#define GEN_PASS_DECL
#include "passes/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "passes/Passes.h.inc"

} // namespace tfc

#endif // TFC_PASSES_PASSES_H
