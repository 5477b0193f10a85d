//===- Passes.h - tfc graph passes ------------------------------*- C++ -*-===//
//
// Creation and registration of the passes declared in Passes.td:
//
//   tfc-simplify, recognize-layernorm, recognize-gelu, fuse-attention,
//   fuse-add-layernorm, fuse-bias-activation, merge-qkv, dce, weight-layout
//
// `createTfcSimplify()`, `createFuseAttention()`, ... make one pass each;
// `registerTfcPasses()` makes them known to mlir-opt style drivers (tfc-opt).
// The default pipeline that chains them is in Pipeline.h.
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
