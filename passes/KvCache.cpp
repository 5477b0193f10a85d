//===- KvCache.cpp - grow key/value caches in place -----------------------===//
//
// Pass `kv-cache`. A decoder entry takes its cache as an argument `past`
// ([layers, ..., past, ...]) and returns it grown by the new positions; the
// frontend spells that as
//
//   %s_i  = tfc.slice %past {axis = 0, start = i, end = i + 1}
//   %p_i  = tfc.reshape %s_i                      // drop the layer axis
//   %c_i  = tfc.concat %p_i, %new_i {axis = a}    // read by attention
//   %u_i  = tfc.reshape %c_i                      // add a leading 1
//   %out  = tfc.concat %u_0, ..., %u_{L-1} {axis = 0}
//   return ..., %out, ...
//
// which copies the whole cache twice per step. The pass matches the
// returned `%out` backwards (stack -> per-layer concat -> layer slice of a
// function argument), checks that layer i is slice i of the same argument
// and that the layer count is the argument's static dim 0, and rewrites:
//
//   %c_i = tfc.kv_append %past, %new_i {layer = i, axis = a + 1}
//   %out = tfc.kv_stack %past, %c_0, ..., %c_{L-1} {axis = a + 1}
//
// The per-layer concats are replaced where they are (attention of layer i
// reads %c_i before layer i + 1 computes %new_{i+1}); the stack where the
// old one was. The slices, reshapes and concats left without users are
// erased. A single-layer cache is stacked by one reshape, which is matched
// too. Nothing else changes: an argument that is grown twice, a concat with
// another order or a slice of another argument are left alone (they stay
// correct, only slower).
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "ir/TfcOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/SmallPtrSet.h"

using namespace mlir;

namespace tfc {
#define GEN_PASS_DEF_KVCACHE
#include "passes/Passes.h.inc"
} // namespace tfc

namespace tfc {
namespace {

using mlir::tfc::ConcatOp;
using mlir::tfc::KvAppendOp;
using mlir::tfc::KvStackOp;
using mlir::tfc::ReshapeOp;
using mlir::tfc::SliceOp;

/// `to` is `from` with a leading dimension of size 1 (a reshape that only
/// adds or drops that axis).
bool addsLeadingOne(RankedTensorType from, RankedTensorType to) {
  return to.getRank() == from.getRank() + 1 && to.getDimSize(0) == 1 &&
         to.getShape().drop_front() == from.getShape();
}

/// One layer of a matched growth: the per-layer concat and its new part.
struct Layer {
  ConcatOp concat;
  Value fresh;
};

/// A matched `stack(concat(past[i], new_i))` returned by an entry.
struct Growth {
  Operation *stack = nullptr; // the axis-0 concat, or the one reshape
  BlockArgument past;
  int64_t axis = 0; // of the positions, in the cache's dimensions
  SmallVector<Layer> layers;
};

/// The parts that `stack` stacks: the operands of an axis-0 concat of
/// leading-1 reshapes, or one such reshape.
SmallVector<Value> stackedParts(Operation *stack) {
  SmallVector<Value> reshaped;
  if (auto concat = dyn_cast<ConcatOp>(stack)) {
    if (concat.getAxis() != 0)
      return {};
    reshaped.append(concat.getInputs().begin(), concat.getInputs().end());
  } else if (isa<ReshapeOp>(stack)) {
    reshaped.push_back(stack->getResult(0));
  } else {
    return {};
  }
  SmallVector<Value> parts;
  for (Value v : reshaped) {
    auto reshape = v.getDefiningOp<ReshapeOp>();
    if (!reshape)
      return {};
    auto from = cast<RankedTensorType>(reshape.getInput().getType());
    if (!addsLeadingOne(from, cast<RankedTensorType>(reshape.getType())))
      return {};
    parts.push_back(reshape.getInput());
  }
  return parts;
}

/// Layer `layer` of a cache argument: `reshape(slice(arg, 0, layer))`.
BlockArgument layerOf(Value value, int64_t layer) {
  auto squeeze = value.getDefiningOp<ReshapeOp>();
  if (!squeeze)
    return {};
  auto slice = squeeze.getInput().getDefiningOp<SliceOp>();
  if (!slice || slice.getAxis() != 0 || slice.getStep() != 1 ||
      slice.getStart() != static_cast<uint64_t>(layer) ||
      slice.getEnd() != static_cast<uint64_t>(layer + 1) ||
      !addsLeadingOne(cast<RankedTensorType>(squeeze.getType()),
                      cast<RankedTensorType>(slice.getType())))
    return {};
  return dyn_cast<BlockArgument>(slice.getInput());
}

/// Matches a returned value as the growth of one cache argument.
std::optional<Growth> matchGrowth(Value returned) {
  Operation *stack = returned.getDefiningOp();
  if (!stack)
    return std::nullopt;
  SmallVector<Value> parts = stackedParts(stack);
  if (parts.empty())
    return std::nullopt;
  Growth g;
  g.stack = stack;
  for (auto [i, part] : llvm::enumerate(parts)) {
    auto concat = part.getDefiningOp<ConcatOp>();
    if (!concat || concat.getInputs().size() != 2)
      return std::nullopt;
    BlockArgument past = layerOf(concat.getInputs()[0], i);
    if (!past || (g.past && past != g.past))
      return std::nullopt;
    g.past = past;
    g.axis = static_cast<int64_t>(concat.getAxis()) + 1;
    if (i > 0 && g.axis != static_cast<int64_t>(g.layers[0].concat.getAxis()) + 1)
      return std::nullopt;
    g.layers.push_back({concat, concat.getInputs()[1]});
  }
  auto pastType = cast<RankedTensorType>(g.past.getType());
  if (pastType.getDimSize(0) != static_cast<int64_t>(g.layers.size()))
    return std::nullopt;
  return g;
}

/// Rewrites one growth; fails (changing nothing) when an op would not get
/// the type of the op it replaces.
LogicalResult rewrite(Growth &g) {
  OpBuilder builder(g.stack->getContext());
  SmallVector<KvAppendOp> appends;
  auto undo = [&] {
    for (KvAppendOp a : appends)
      a.erase();
    return failure();
  };
  for (auto [i, layer] : llvm::enumerate(g.layers)) {
    builder.setInsertionPoint(layer.concat);
    auto append = builder.create<KvAppendOp>(
        layer.concat.getLoc(), g.past, layer.fresh, static_cast<int64_t>(i),
        g.axis);
    appends.push_back(append);
    if (append.getType() != layer.concat.getType())
      return undo();
  }
  SmallVector<Value> appended(appends.begin(), appends.end());
  builder.setInsertionPoint(g.stack);
  auto stack =
      builder.create<KvStackOp>(g.stack->getLoc(), g.past, appended, g.axis);
  if (stack.getType() != g.stack->getResult(0).getType()) {
    stack.erase();
    return undo();
  }
  for (auto [append, layer] : llvm::zip(appends, g.layers))
    layer.concat.getResult().replaceAllUsesWith(append.getResult());
  g.stack->getResult(0).replaceAllUsesWith(stack.getResult());
  return success();
}

/// Erases the ops of the old spelling that lost their last user, users
/// first.
void eraseDead(func::FuncOp func) {
  SmallVector<Operation *> ops;
  func.walk([&](Operation *op) {
    if (isa<ConcatOp, ReshapeOp, SliceOp>(op))
      ops.push_back(op);
  });
  for (Operation *op : llvm::reverse(ops))
    if (op->use_empty())
      op->erase();
}

void growInPlace(func::FuncOp func) {
  if (func.isExternal())
    return;
  auto ret = dyn_cast<func::ReturnOp>(func.getBody().front().getTerminator());
  if (!ret)
    return;
  llvm::SmallPtrSet<Value, 4> grown;
  bool changed = false;
  for (Value returned : ret.getOperands()) {
    std::optional<Growth> g = matchGrowth(returned);
    if (!g || !grown.insert(g->past).second)
      continue;
    changed |= succeeded(rewrite(*g));
  }
  if (changed)
    eraseDead(func);
}

struct KvCachePass : impl::KvCacheBase<KvCachePass> {
  void runOnOperation() override {
    getOperation()->walk([](func::FuncOp func) { growInPlace(func); });
  }
};

} // namespace
} // namespace tfc
