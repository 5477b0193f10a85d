//===- MergeQKV.cpp - projections of one input -> one linear --------------===//
//
// Pass `merge-qkv`: attention projects one input three times (Q, K and V;
// for cross-attention K and V of the encoder output). One matmul on the
// concatenated weights reads the input once and gives the kernel a wider
// N. The algorithm:
//
//  1. Candidates are tfc.linear ops, and tfc.matmul ops by a rank-2 weight
//     (taken as a linear without bias and activation), whose weight (and
//     bias) are weight-only values: tfc.params or constants, possibly
//     sliced/transposed/reshaped.
//  2. Candidates are grouped by their input value and by everything that
//     must agree for one linear to compute them all: transpose_b, the
//     activation, the presence of a bias, the weight and bias types, and the
//     layer of the weight's parameter (its name's prefix up to the layer
//     index, e.g. "encoder.layer.3"), so that projections of different
//     layers are never merged even when they read the same tensor (the
//     cross-attention K/V projections of every decoder layer read the same
//     encoder output).
//  3. Each group of two or more, in program order, becomes at the position
//     of its first member: `w = concat(w_1..w_n)` along the output axis
//     (axis 0 for nn.Linear's [out, in] with transpose_b, else 1), likewise
//     the biases along axis 0, one tfc.linear on them, and one tfc.slice per
//     member along the last axis, which replaces that member. Weight-only
//     operands defined after that position are moved up first.
//
// The concatenations read weights only; the runtime computes them once when
// it loads the model. A concat of adjacent slices of one packed tensor
// (nn.MultiheadAttention's in_proj_weight) folds back into the tensor in
// tfc-simplify.
//
//===----------------------------------------------------------------------===//

#include "passes/FusionUtils.h"
#include "passes/Passes.h"

#include "ir/TfcOps.h"

#include "mlir/IR/PatternMatch.h"
#include <map>
#include <tuple>

using namespace mlir;
namespace tir = mlir::tfc;

namespace tfc {
#define GEN_PASS_DEF_MERGEQKV
#include "passes/Passes.h.inc"
} // namespace tfc

namespace tfc {
namespace {

/// A projection: a tfc.linear or a matmul by a weight.
struct Projection {
  Operation *op;
  Value x, w, bias;
  bool transposeB;
  std::string activation;
};

std::optional<Projection> asProjection(Operation *op) {
  Projection p;
  p.op = op;
  if (auto linear = dyn_cast<tir::LinearOp>(op)) {
    p.x = linear.getX();
    p.w = linear.getW();
    p.bias = linear.getBias();
    p.transposeB = linear.getTransposeB();
    p.activation = linear.getActivation().str();
  } else if (auto matmul = dyn_cast<tir::MatmulOp>(op)) {
    p.x = matmul.getLhs();
    p.w = matmul.getRhs();
    p.transposeB = matmul.getTransposeB();
    p.activation = "none";
  } else {
    return std::nullopt;
  }
  auto wType = cast<RankedTensorType>(p.w.getType());
  if (wType.getRank() != 2 || !wType.hasStaticShape() || !isWeightOnly(p.w) ||
      (p.bias && !isWeightOnly(p.bias)))
    return std::nullopt;
  return p;
}

std::string layerKey(Value weight) {
  if (Operation *param = rootParam(weight))
    return layerOfParamName(cast<tir::ParamOp>(param).getName());
  return "";
}

/// Merges `group` (program order, two or more). Returns false, changing
/// nothing, if an operand cannot be made available at the first member.
bool mergeGroup(ArrayRef<Projection> group, RewriterBase &rewriter) {
  Operation *first = group.front().op;
  for (const Projection &p : group)
    if (p.op->getBlock() != first->getBlock() ||
        !canHoistBefore(p.w, first) ||
        (p.bias && !canHoistBefore(p.bias, first)))
      return false;

  SmallVector<Value> weights, biases;
  SmallVector<Location> locs;
  for (const Projection &p : group) {
    hoistBefore(p.w, first, rewriter);
    if (p.bias)
      hoistBefore(p.bias, first, rewriter);
    weights.push_back(p.w);
    if (p.bias)
      biases.push_back(p.bias);
    locs.push_back(p.op->getLoc());
  }
  rewriter.setInsertionPoint(first);
  Location loc = rewriter.getFusedLoc(locs);
  const Projection &head = group.front();
  int64_t outAxis = head.transposeB ? 0 : 1;
  Value w = rewriter.create<tir::ConcatOp>(loc, weights, outAxis);
  Value bias;
  if (!biases.empty())
    bias = rewriter.create<tir::ConcatOp>(loc, biases, 0);
  auto merged = rewriter.create<tir::LinearOp>(loc, head.x, w, bias,
                                               head.transposeB,
                                               head.activation);
  auto mergedType = cast<RankedTensorType>(merged.getType());
  int64_t lastAxis = mergedType.getRank() - 1;
  // All slices first: replacing a member erases it, and the first member
  // is the insertion point.
  SmallVector<Value> slices;
  int64_t start = 0;
  rewriter.setInsertionPoint(first);
  for (const Projection &p : group) {
    auto wType = cast<RankedTensorType>(p.w.getType());
    int64_t n = wType.getDimSize(outAxis);
    slices.push_back(rewriter.create<tir::SliceOp>(p.op->getLoc(), merged,
                                                   lastAxis, start, start + n));
    start += n;
  }
  for (auto [p, slice] : llvm::zip(group, slices))
    rewriter.replaceOp(p.op, slice);
  return true;
}

struct MergeQKVPass : impl::MergeQKVBase<MergeQKVPass> {
  void runOnOperation() override {
    // Everything one linear must share; Values and Types by identity.
    using Key = std::tuple<const void *, bool, std::string, bool, const void *,
                           const void *, std::string>;
    std::map<Key, size_t> index;
    SmallVector<SmallVector<Projection>> groups; // first-seen order
    getOperation()->walk([&](Operation *op) {
      std::optional<Projection> p = asProjection(op);
      if (!p)
        return;
      Key key{p->x.getAsOpaquePointer(),
              p->transposeB,
              p->activation,
              static_cast<bool>(p->bias),
              p->w.getType().getAsOpaquePointer(),
              p->bias ? p->bias.getType().getAsOpaquePointer() : nullptr,
              layerKey(p->w)};
      auto [it, inserted] = index.try_emplace(key, groups.size());
      if (inserted)
        groups.emplace_back();
      groups[it->second].push_back(*p);
    });
    IRRewriter rewriter(&getContext());
    for (SmallVector<Projection> &group : groups) {
      if (group.size() < 2)
        continue;
      // Members are in walk (program) order within one block.
      mergeGroup(group, rewriter);
    }
  }
};

} // namespace
} // namespace tfc
