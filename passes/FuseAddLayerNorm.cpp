//===- FuseAddLayerNorm.cpp - residual add + LayerNorm -> one op ----------===//
//
// Pass `fuse-add-layernorm`: replaces `layer_norm(a + b, gamma, beta)` with
// `tfc.add_layer_norm a, b, gamma, beta`, whose results are the normalized
// output and, where other ops use it (`with_sum`), the sum. The algorithm,
// for every tfc.layer_norm:
//
//  1. Its input must be produced by a tfc.add, one of whose operands has
//     the sum's type (the other may broadcast, as in tfc.add; a two-way
//     broadcast is left unfused).
//  2. Post-LN (`LN(x + f(x))`, BERT): the sum has no other user. The fused
//     op, without the sum, goes where the layer_norm was; `output` replaces
//     the layer_norm.
//  3. Pre-LN (`x = x + f(x); h = LN(x)`, GPT-2): the sum also feeds later
//     ops (the next residual add). The fused op, `with_sum`, goes where the
//     add was, so that it dominates every user of the sum; `sum` replaces
//     the add and `output` the layer_norm. gamma and beta must then be
//     available there:
//     parameters and other weight-only values defined later are moved up
//     (they have no operands but weights, so moving them is always safe).
//     If that is not possible and some user of the sum comes before the
//     layer_norm, the fusion is blocked.
//
// matchAddLayerNorm() is also used by the fusion report.
//
//===----------------------------------------------------------------------===//

#include "passes/Matchers.h"
#include "passes/Passes.h"

#include "mlir/IR/PatternMatch.h"

using namespace mlir;
namespace tir = mlir::tfc;

namespace tfc {
#define GEN_PASS_DEF_FUSEADDLAYERNORM
#include "passes/Passes.h.inc"
} // namespace tfc

namespace tfc {

FailureOr<AddLayerNormMatch> matchAddLayerNorm(tir::LayerNormOp norm,
                                               Blocker *why) {
  Value input = norm.getInput();
  Operation *def = input.getDefiningOp();
  if (!def)
    return block(why, norm,
                 "the input is a function argument, not the result of a "
                 "tfc.add");
  auto add = dyn_cast<tir::AddOp>(def);
  if (!add)
    return block(why, def,
                 "the input is produced by " + describe(def) +
                     ", not by a residual tfc.add");

  // The fused kernel takes the sum's shape from an operand (PlanBuilder's
  // rule for tfc.add_layer_norm): one operand must have the sum's type. A
  // two-way broadcast (f32[1, seq, d] + f32[batch, 1, d]) stays unfused.
  Type sumType = add.getResult().getType();
  if (add.getLhs().getType() != sumType && add.getRhs().getType() != sumType)
    return block(why, add,
                 "both operands of the add broadcast to the sum's shape; the "
                 "fused op needs one operand of that shape");

  AddLayerNormMatch m{norm, add, norm, /*withSum=*/!input.hasOneUse()};
  if (!m.withSum)
    return m;

  // Pre-LN: the sum has other users.
  bool paramsAvailable = canHoistBefore(norm.getGamma(), add) &&
                         canHoistBefore(norm.getBeta(), add);
  if (paramsAvailable) {
    m.insertionPoint = add;
    return m;
  }
  for (Operation *user : input.getUsers())
    if (user != norm.getOperation() &&
        (user->getBlock() != norm->getBlock() || user->isBeforeInBlock(norm)))
      return block(why, user,
                   "the sum is also used by " + describe(user) +
                       " before the layer_norm, and gamma/beta are computed "
                       "after the add");
  return m;
}

namespace {

void rewriteAddLayerNorm(AddLayerNormMatch m, RewriterBase &rewriter) {
  tir::LayerNormOp norm = m.norm;
  tir::AddOp add = m.add;
  if (m.insertionPoint == add.getOperation()) {
    hoistBefore(norm.getGamma(), add, rewriter);
    hoistBefore(norm.getBeta(), add, rewriter);
  }
  rewriter.setInsertionPoint(m.insertionPoint);
  Location loc = rewriter.getFusedLoc({add.getLoc(), norm.getLoc()});
  auto fused = rewriter.create<tir::AddLayerNormOp>(
      loc, add.getLhs(), add.getRhs(), norm.getGamma(), norm.getBeta(),
      norm.getEpsilon().convertToDouble(), m.withSum);
  rewriter.replaceOp(norm, fused.getOutput());
  if (m.withSum)
    rewriter.replaceOp(add, fused.getSum());
  else
    rewriter.eraseOp(add);
}

struct FuseAddLayerNormPass
    : impl::FuseAddLayerNormBase<FuseAddLayerNormPass> {
  void runOnOperation() override {
    rewriteEach<tir::LayerNormOp>(
        getOperation(),
        [](tir::LayerNormOp norm, RewriterBase &rewriter) -> LogicalResult {
          FailureOr<AddLayerNormMatch> m = matchAddLayerNorm(norm);
          if (failed(m))
            return failure();
          rewriteAddLayerNorm(*m, rewriter);
          return success();
        });
  }
};

} // namespace
} // namespace tfc
