//===- FlopCount.h - Floating-point operation count of a module -*- C++ -*-===//
//
// Counts the arithmetic a static-shaped module performs, for `tfc info` and
// `tfc bench` (GFLOP/s). Conventions, the usual ones for Transformers:
// a matmul of [M, K] x [K, N] is 2*M*N*K; an elementwise op is one FLOP per
// output element; softmax, layer_norm and gelu count a few per element (each
// op states its count: FlopCountOpInterface, ir/TfcInterfaces.td). Ops with dynamic shapes are skipped and counted in
// `dynamicOps`, so callers know the total is partial.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_PASSES_FLOPCOUNT_H
#define TFC_PASSES_FLOPCOUNT_H

#include "mlir/IR/Operation.h"

#include <cstdint>

namespace tfc {

struct FlopCount {
  double matmul = 0;
  double other = 0;
  int64_t dynamicOps = 0;
  double total() const { return matmul + other; }
};

/// Counts the ops nested in `root` (a module or one function).
FlopCount countFlops(mlir::Operation *root);

} // namespace tfc

#endif // TFC_PASSES_FLOPCOUNT_H
