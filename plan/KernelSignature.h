//===- KernelSignature.h - which ops share a kernel -------------*- C++ -*-===//
//
// The one definition of "the same kernel": the planner deduplicates a Plan's
// kernels by it (plan/PlanBuilder.h), the code generator's in-process cache
// and the on-disk kernel cache key compiled kernels by it
// (codegen/KernelCache.h, session/KernelDiskCache.h). MLIR only, no Halide.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_PLAN_KERNELSIGNATURE_H
#define TFC_PLAN_KERNELSIGNATURE_H

#include "mlir/IR/Operation.h"

#include <string>

namespace tfc {

/// The signature of `op`'s kernel: op name, inherent attributes (sorted by
/// name, those at their default value omitted, so that
/// `{transpose_b = false}` and no attribute share a kernel), operand and
/// result types; no location and no discardable attributes, so two layers'
/// identical ops give the same string. `packed_n` appears by name only: its
/// value is the result's N, which the result type gives. E.g.
/// `tfc.matmul{transpose_b = true}(tensor<?x12x?x64xf32>,
/// tensor<?x12x?x64xf32>) -> tensor<?x12x?x?xf32>`.
std::string kernelSignature(mlir::Operation *op);

} // namespace tfc

#endif // TFC_PLAN_KERNELSIGNATURE_H
