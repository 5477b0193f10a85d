//===- PlanBuilder.h - tfc dialect module -> runtime Plan -------*- C++ -*-===//
//
// Turns a (fused or not) tfc module into the Plan the runtime executes
// (runtime/Plan.h): one PlanEntry per func.func, one step per compute op,
// kernels deduplicated by signature across entries and layers, every value's
// shape as a DimExpr over the entry's symbolic dimensions, the runtime checks
// the IR implies (token ids in range, dynamic axes long enough for static
// slices) and the liveness of temps.
//
// What the IR must look like (what the frontend emits):
//   module attributes {tfc.model = "gpt2", tfc.dim_bounds = {seq = 1024}}
//   func.func @decode(%ids: tensor<?x?xi32> {tfc.name = "ids",
//                                            tfc.dims = ["batch", "seq"]}, ...)
//       -> (tensor<...> {tfc.name = "logits", tfc.dims = [...]}, ...)
// with a body of tfc ops ending in func.return. `tfc.dims` names each
// argument dimension (a symbol, or a decimal size); result `tfc.dims` (e.g.
// "past + seq") are checked against what shape inference finds.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_PLAN_PLANBUILDER_H
#define TFC_PLAN_PLANBUILDER_H

#include "plan/KernelSignature.h"
#include "runtime/Plan.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace tfc {

/// A Plan and, for each of its kernels, one op it was built from: the caller
/// compiles kernel i from kernelOps[i] (every op with the same signature
/// computes the same function of its buffers). The ops belong to the module
/// given to buildPlan and live as long as it does, but for the copies that
/// one-query-row kernels (PlanStep::variant) and shape-generic kernels (a
/// transpose or weight packing serving several shapes) are compiled from,
/// which belong to `variantOps`.
struct BuiltPlan {
  rt::Plan plan;
  std::vector<mlir::Operation *> kernelOps;
  mlir::OwningOpRef<mlir::ModuleOp> variantOps;
};

/// Identifies the kernel an op needs: two ops with equal signatures share one
/// compiled kernel. Must cover everything the generated code depends on
/// (op name, attributes, operand and result types) and nothing it does not
/// (locations, parameter names), or kernels would be duplicated per layer.
/// The default, kernelSignature (KernelSignature.h), is the key the kernel
/// caches use too; tests pass others.
using KernelSignatureFn = llvm::function_ref<std::string(mlir::Operation *)>;

/// What the kernels a Plan names can do, where it decides which ops share one.
struct PlanOptions {
  /// fp32 products on weight panels (tfc.linear and tfc.matmul with
  /// `packed_n`) may read K and N at run time, so that the linears of a
  /// layer that differ only in them share one kernel: for kernels whose
  /// product runs in the fp32 panel stage, which takes K and N as arguments
  /// (codegen::KernelOptions::f32PanelStage; in this process only). AOT
  /// libraries, emitted sources and GPU kernels keep static shapes: their
  /// tiles and GEMVs are scheduled by them.
  bool genericPanelProducts = false;
};

/// Builds the Plan of every public func.func with a body in `module`, which
/// it only reads (the IR it plans is the IR the passes produced). Fails, with
/// the op's .tfm location in the message, for IR it cannot plan: non-tfc
/// ops, unranked tensors, element types the runtime has no dtype for,
/// symbolic shapes that disagree with the IR's static dims or with a
/// result's declared `tfc.dims`, broadcasts of two different symbolic dims.
llvm::Expected<BuiltPlan>
buildPlan(mlir::ModuleOp module, const PlanOptions &options = {},
          KernelSignatureFn signature = kernelSignature);

/// "file:line:col" of the innermost FileLineColLoc in `loc` (through
/// call-site callees, names and fusions) that is in a real file: an op of
/// the built-in prelude ("<prelude>") is reported where the model calls it.
/// Empty if there is none.
std::string locationString(mlir::Location loc);

} // namespace tfc

#endif // TFC_PLAN_PLANBUILDER_H
