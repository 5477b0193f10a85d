//===- DeadCodeElimination.cpp - erase unused side-effect-free ops --------===//
//
// Pass `dce`: erases every op that `mlir::isOpTriviallyDead` calls dead (no
// results used, no side effects; every tfc op is Pure). Ops are visited in
// reverse program order, so the users of a value are visited before its
// producer and a whole dead chain goes in one sweep. Ops with regions (the
// functions themselves) are never erased here; symbol-level cleanup is
// MLIR's `symbol-dce`.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "mlir/IR/Operation.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;

namespace tfc {
#define GEN_PASS_DEF_DEADCODEELIMINATION
#include "passes/Passes.h.inc"
} // namespace tfc

namespace tfc {
namespace {

struct DeadCodeEliminationPass
    : impl::DeadCodeEliminationBase<DeadCodeEliminationPass> {
  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation()->walk([&](Operation *op) {
      if (op->getNumRegions() == 0 && op != getOperation())
        ops.push_back(op);
    });
    // Post-order walk: within a block, program order. Users come later.
    for (Operation *op : llvm::reverse(ops))
      if (isOpTriviallyDead(op))
        op->erase();
  }
};

} // namespace
} // namespace tfc
