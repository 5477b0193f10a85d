//===- FlopCount.cpp - Floating-point operation count of a module ---------===//
//
// Sums the ops' own counts (FlopCountOpInterface, ir/TfcInterfaces.td): the
// per-op conventions live on the ops.
//
//===----------------------------------------------------------------------===//

#include "passes/FlopCount.h"

#include "ir/TfcOps.h"

using namespace tfc;

FlopCount tfc::countFlops(mlir::Operation *root) {
  FlopCount flops;
  root->walk([&](mlir::tfc::FlopCountOpInterface op) {
    std::optional<mlir::tfc::OpFlops> count = op.countFlops();
    if (!count) {
      ++flops.dynamicOps;
      return;
    }
    flops.matmul += count->matmul;
    flops.other += count->other;
  });
  return flops;
}
