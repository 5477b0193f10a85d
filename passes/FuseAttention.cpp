//===- FuseAttention.cpp - scaled dot-product attention -> one op ---------===//
//
// Pass `fuse-attention`: replaces attention spelled out in primitives with
// tfc.fused_attention. The algorithm, anchored on every tfc.softmax:
//
//  1. The softmax is over the last axis, and its only user is
//     `matmul(P, V)` with P as the lhs (no transpose_b): that matmul is the
//     attention output and V its rhs.
//  2. Walk back from the softmax input through the "score chain" until a
//     tfc.matmul is reached. Every value on the way must have exactly one
//     user (the next op of the chain), otherwise the op that also uses it
//     blocks the fusion. Each chain op must keep the scores' type (no
//     broadcast that grows them). Chain ops:
//       - mul/div by a scalar constant (a constant with one element, a
//         splat, or a constant expression such as sqrt(64)): a scale;
//       - add of another f32 tensor: an additive mask / attention bias (the
//         chain operand is the one computed from the scores);
//       - where(c, s, fill) or where(c, fill, s) with a scalar constant
//         fill: a masked fill, keeping c or `not c`.
//  3. The matmul at the end is Q K^T: `matmul(Q, K) {transpose_b}` or
//     `matmul(Q, transpose(K))` with the last two axes swapped. A scale
//     pre-applied to Q or K (mul/div by a constant whose result has no other
//     user) is folded into the scale.
//  4. The chain is then replayed from the scores outwards to get the fused
//     op's parameters: scales multiply `scale` (and the fill value when they
//     come after a masked fill); an additive mask must come before any masked
//     fill and after all scales; several masked fills must use the same fill
//     value and their conditions are ANDed.
//  5. The mask conditions are split into leaves through `and`, `not` and
//     (negated) `or`. A non-negated tfc.causal_mask leaf whose query and key
//     lengths are provably those of Q and K (the same tensors and axes, or
//     equal static sizes) becomes `causal = true`; the other leaves are
//     ANDed into the `keep` operand (negated leaves get a tfc.not).
//  6. The fused op's inferred type must equal the attention output's type
//     (Q, K, V rank 4 with matching batch and heads); it then replaces
//     matmul(P, V), and the dead chain is erased.
//
// matchAttention() is also used by the fusion report to say why a softmax
// did not fuse.
//
//===----------------------------------------------------------------------===//

#include "passes/Matchers.h"
#include "passes/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/PatternMatch.h"

#include <cmath>

using namespace mlir;
namespace tir = mlir::tfc;

namespace tfc {
#define GEN_PASS_DEF_FUSEATTENTION
#include "passes/Passes.h.inc"
} // namespace tfc

namespace tfc {

namespace {

enum class StepKind { Scale, Bias, Where };

/// One op of the score chain.
struct Step {
  StepKind kind;
  Operation *op;
  double factor = 1.0; // Scale
  Value bias;          // Bias
  Value cond;          // Where
  bool negated = false;
  double fill = 0.0;
};

std::string typeString(Type type) {
  std::string out;
  llvm::raw_string_ostream os(out);
  type.print(os);
  return out;
}

/// Whether `value` is computed from a matmul through score-chain ops; used
/// to tell the scores from the mask in `scores + mask`.
bool reachesScores(Value value, int depth = 0) {
  Operation *def = value.getDefiningOp();
  if (!def || depth > 12)
    return false;
  if (isa<tir::MatmulOp>(def))
    return true;
  if (isa<tir::MulOp, tir::DivOp, tir::AddOp>(def))
    return llvm::any_of(def->getOperands(), [&](Value operand) {
      return !getScalarConstant(operand) && reachesScores(operand, depth + 1);
    });
  if (auto where = dyn_cast<tir::WhereOp>(def))
    return reachesScores(where.getOnTrue(), depth + 1) ||
           reachesScores(where.getOnFalse(), depth + 1);
  return false;
}

/// Splits a mask condition into ANDed leaves.
void collectLeaves(Value cond, bool negated, SmallVectorImpl<MaskLeaf> &leaves,
                   int depth = 0) {
  Operation *def = cond.getDefiningOp();
  if (def && depth < 8) {
    if (auto notOp = dyn_cast<tir::NotOp>(def))
      return collectLeaves(notOp.getInput(), !negated, leaves, depth + 1);
    if ((!negated && isa<tir::AndOp>(def)) ||
        (negated && isa<tir::OrOp>(def))) {
      collectLeaves(def->getOperand(0), negated, leaves, depth + 1);
      collectLeaves(def->getOperand(1), negated, leaves, depth + 1);
      return;
    }
  }
  leaves.push_back({cond, negated});
}

/// A value and one of its axes that has the length of an attention dim.
struct DimRef {
  Value value;
  int64_t axis;
};

/// Whether dim `axis` of `value` has the length `refs` name: the same value
/// and axis as one of them, or equal static sizes.
bool sameLength(Value value, int64_t axis, ArrayRef<DimRef> refs) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type || axis < 0 || axis >= type.getRank())
    return false;
  for (const DimRef &ref : refs) {
    if (ref.value == value && ref.axis == axis)
      return true;
    auto refType = cast<RankedTensorType>(ref.value.getType());
    int64_t a = type.getDimSize(axis), b = refType.getDimSize(ref.axis);
    if (!ShapedType::isDynamic(a) && a == b)
      return true;
  }
  return false;
}

/// Peels mul/div by scalar constants off `value` (Q or K) while the scaled
/// value has `user` as its only user; multiplies `scale` by them. `refs`
/// collects the values seen, which all have the same shape.
Value peelScale(Value value, Operation *user, double &scale, int64_t axis,
                SmallVectorImpl<DimRef> &refs) {
  refs.push_back({value, axis});
  while (Operation *def = value.getDefiningOp()) {
    if (!hasSingleUser(value, user) || !isa<tir::MulOp, tir::DivOp>(def))
      break;
    Value lhs = def->getOperand(0), rhs = def->getOperand(1);
    std::optional<double> cl = getScalarConstant(lhs);
    std::optional<double> cr = getScalarConstant(rhs);
    Value inner;
    double factor;
    if (isa<tir::MulOp>(def) && cr && !cl) {
      inner = lhs;
      factor = *cr;
    } else if (isa<tir::MulOp>(def) && cl && !cr) {
      inner = rhs;
      factor = *cl;
    } else if (isa<tir::DivOp>(def) && cr && !cl && *cr != 0) {
      inner = lhs;
      factor = 1.0 / *cr;
    } else {
      break;
    }
    if (inner.getType() != value.getType())
      break;
    scale *= factor;
    user = def;
    value = inner;
    refs.push_back({value, axis});
  }
  return value;
}

/// Checks that `softmax` is over the last axis and that its only user is
/// `matmul(P, V)` with P as the lhs and no transpose_b; records it in `m`.
LogicalResult matchOutputMatmul(tir::SoftmaxOp softmax, AttentionMatch &m,
                                Blocker *why) {
  auto scoresType = cast<RankedTensorType>(softmax.getInput().getType());
  if (static_cast<int64_t>(softmax.getAxis()) != scoresType.getRank() - 1)
    return block(why, softmax,
                 "the softmax is over axis " + std::to_string(softmax.getAxis()) +
                     ", not the last axis of the scores " +
                     typeString(scoresType));

  Value probs = softmax.getResult();
  if (probs.use_empty())
    return block(why, softmax, "the probabilities are unused");
  tir::MatmulOp output;
  for (Operation *user : probs.getUsers())
    if (auto matmul = dyn_cast<tir::MatmulOp>(user);
        matmul && matmul.getLhs() == probs)
      output = matmul;
  if (!probs.hasOneUse()) {
    Operation *second = output ? otherUser(probs, output)
                               : *std::next(probs.user_begin());
    return block(why, second,
                 "the probabilities have a second user (" + describe(second) +
                     ")");
  }
  if (!output || output.getLhs() != probs)
    return block(why, *probs.user_begin(),
                 "the probabilities feed " + describe(*probs.user_begin()) +
                     ", not the lhs of a matmul with V");
  if (output.getTransposeB())
    return block(why, output,
                 "the probabilities multiply a transposed V (transpose_b), "
                 "which fused_attention does not take");
  m.output = output;
  m.v = output.getRhs();
  return success();
}

/// Matches a chain op `def` that is a mul or div by a scalar constant: a
/// scale step. Sets `chainIn` to the operand computed from the scores.
LogicalResult matchScaleStep(Operation *def, Step &step, Value &chainIn,
                             Blocker *why) {
  if (isa<tir::MulOp>(def)) {
    std::optional<double> c0 = getScalarConstant(def->getOperand(0));
    std::optional<double> c1 = getScalarConstant(def->getOperand(1));
    if (c1 && !c0) {
      chainIn = def->getOperand(0);
      step.factor = *c1;
    } else if (c0 && !c1) {
      chainIn = def->getOperand(1);
      step.factor = *c0;
    } else {
      return block(why, def,
                   "the scores are multiplied by a tensor (" + describe(def) +
                       "), not by a constant scale");
    }
    return success();
  }
  std::optional<double> c = getScalarConstant(def->getOperand(1));
  if (!c || *c == 0 || getScalarConstant(def->getOperand(0)))
    return block(why, def,
                 "the scores are divided by a tensor (" + describe(def) +
                     "), not by a non-zero constant");
  chainIn = def->getOperand(0);
  step.factor = 1.0 / *c;
  return success();
}

/// Matches a chain op `def` that is an add of an additive mask / attention
/// bias to the scores.
LogicalResult matchBiasStep(Operation *def, Step &step, Value &chainIn,
                            Blocker *why) {
  Value lhs = def->getOperand(0), rhs = def->getOperand(1);
  bool lhsScores =
      lhs.getType() == def->getResult(0).getType() && reachesScores(lhs);
  bool rhsScores =
      rhs.getType() == def->getResult(0).getType() && reachesScores(rhs);
  if (!lhsScores && !rhsScores)
    return block(why, def,
                 "neither operand of " + describe(def) +
                     " is computed from a matmul of Q and K");
  step.kind = StepKind::Bias;
  chainIn = lhsScores ? lhs : rhs;
  step.bias = lhsScores ? rhs : lhs;
  if (step.bias == chainIn)
    return block(why, def, "the scores are added to themselves");
  return success();
}

/// Matches a chain op that is a masked fill `where(c, s, fill)` or
/// `where(c, fill, s)` with a scalar constant fill.
LogicalResult matchWhereStep(tir::WhereOp where, Step &step, Value &chainIn,
                             Blocker *why) {
  std::optional<double> onTrue =
      getScalarConstant(where.getOnTrue(), /*allowInfinite=*/true);
  std::optional<double> onFalse =
      getScalarConstant(where.getOnFalse(), /*allowInfinite=*/true);
  step.kind = StepKind::Where;
  step.cond = where.getCondition();
  if (onFalse && !onTrue) {
    chainIn = where.getOnTrue();
    step.fill = *onFalse;
  } else if (onTrue && !onFalse) {
    chainIn = where.getOnFalse();
    step.negated = true;
    step.fill = *onTrue;
  } else {
    return block(why, where,
                 "the masked fill " + describe(where) +
                     " does not choose between the scores and a constant");
  }
  return success();
}

/// Classifies one score-chain op `def` into `step`, sets `chainIn` to its
/// operand computed from the scores, and checks that it keeps their type.
LogicalResult matchChainStep(Operation *def, Step &step, Value &chainIn,
                             Blocker *why) {
  LogicalResult matched = failure();
  if (isa<tir::MulOp, tir::DivOp>(def))
    matched = matchScaleStep(def, step, chainIn, why);
  else if (isa<tir::AddOp>(def))
    matched = matchBiasStep(def, step, chainIn, why);
  else if (auto where = dyn_cast<tir::WhereOp>(def))
    matched = matchWhereStep(where, step, chainIn, why);
  else
    return block(why, def,
                 "the scores pass through " + describe(def) +
                     ", which is not a scale, an additive mask or a "
                     "masked fill");
  if (failed(matched))
    return failure();
  if (chainIn.getType() != def->getResult(0).getType())
    return block(why, def,
                 describe(def) + " broadcasts the scores from " +
                     typeString(chainIn.getType()) + " to " +
                     typeString(def->getResult(0).getType()));
  return success();
}

/// Walks back from the softmax input to the Q K^T matmul (recorded in `m`),
/// collecting the score chain into `steps`, outermost op first.
LogicalResult matchScoreChain(tir::SoftmaxOp softmax, AttentionMatch &m,
                              SmallVectorImpl<Step> &steps, Blocker *why) {
  Value s = softmax.getInput();
  Operation *consumer = softmax;
  while (true) {
    Operation *def = s.getDefiningOp();
    if (!def)
      return block(why, softmax,
                   "the scores are a function argument, not a matmul of Q "
                   "and K");
    if (!s.hasOneUse()) {
      Operation *second = otherUser(s, consumer);
      return block(why, second,
                   "the scores (" + describe(def) + ") have a second user (" +
                       describe(second) + ")");
    }
    if (auto matmul = dyn_cast<tir::MatmulOp>(def)) {
      m.scores = matmul;
      return success();
    }
    Step step{StepKind::Scale, def};
    Value chainIn;
    if (failed(matchChainStep(def, step, chainIn, why)))
      return failure();
    steps.push_back(step);
    consumer = def;
    s = chainIn;
  }
}

/// Matches Q and K^T of the score matmul (`matmul(Q, K) {transpose_b}` or
/// `matmul(Q, transpose(K))`), peeling scales off Q and K into `scale`.
LogicalResult matchQueryKey(AttentionMatch &m, double &scale,
                            SmallVectorImpl<DimRef> &qRefs,
                            SmallVectorImpl<DimRef> &kRefs, Blocker *why) {
  tir::MatmulOp scores = m.scores;
  Value k;
  Operation *kUser;
  if (scores.getTransposeB()) {
    k = scores.getRhs();
    kUser = scores;
  } else if (auto transpose = scores.getRhs().getDefiningOp<tir::TransposeOp>();
             transpose && swapsLastTwoAxes(transpose.getPerm())) {
    kRefs.push_back({scores.getRhs(),
                     cast<RankedTensorType>(scores.getRhs().getType())
                             .getRank() -
                         1});
    k = transpose.getInput();
    kUser = transpose;
  } else {
    return block(why, scores,
                 "the score matmul " + describe(scores) +
                     " multiplies by K, not by K^T (neither transpose_b nor a "
                     "transpose of the last two axes)");
  }
  m.q = peelScale(scores.getLhs(), scores, scale, 2, qRefs);
  m.k = peelScale(k, kUser, scale, 2, kRefs);
  return success();
}

/// Replays the chain from the scores outwards: folds scales into `scale`
/// (and the fill), records the bias and fill in `m`, and collects the masked
/// fills into `wheres`.
LogicalResult replayChain(MutableArrayRef<Step> steps, AttentionMatch &m,
                          double scale, SmallVectorImpl<Step *> &wheres,
                          Blocker *why) {
  std::optional<double> fill;
  for (Step &step : llvm::reverse(steps)) {
    switch (step.kind) {
    case StepKind::Scale:
      if (m.bias)
        return block(why, step.op,
                     "the scores are scaled (" + describe(step.op) +
                         ") after the additive mask");
      scale *= step.factor;
      if (fill)
        *fill *= step.factor;
      break;
    case StepKind::Bias:
      if (m.bias)
        return block(why, step.op,
                     "a second additive mask (" + describe(step.op) + ")");
      if (fill)
        return block(why, step.op,
                     "the additive mask (" + describe(step.op) +
                         ") is added after the masked fill");
      m.bias = step.bias;
      break;
    case StepKind::Where:
      if (fill && *fill != step.fill)
        return block(why, step.op,
                     "two masked fills with different values (" +
                         std::to_string(*fill) + " and " +
                         std::to_string(step.fill) + ")");
      fill = step.fill;
      wheres.push_back(&step);
      break;
    }
  }
  if (!std::isfinite(scale))
    return block(why, m.scores, "the scale is not finite");
  m.scale = scale;
  if (fill)
    m.fill = *fill;
  return success();
}

/// Splits the masked fills' conditions into leaves; a causal mask over Q and
/// K becomes `m.causal`, the other leaves go to `m.keep`.
void collectMask(ArrayRef<Step *> wheres, ArrayRef<DimRef> qRefs,
                 ArrayRef<DimRef> kRefs, AttentionMatch &m) {
  SmallVector<MaskLeaf> leaves;
  for (Step *step : wheres)
    collectLeaves(step->cond, step->negated, leaves);
  for (const MaskLeaf &leaf : leaves) {
    auto causal = leaf.value.getDefiningOp<tir::CausalMaskOp>();
    if (causal && !leaf.negated &&
        sameLength(causal.getQRef(), causal.getQAxis(), qRefs) &&
        sameLength(causal.getKRef(), causal.getKAxis(), kRefs)) {
      m.causal = true;
      continue;
    }
    // Duplicates (the same mask twice) need not be ANDed again.
    if (llvm::none_of(m.keep, [&](const MaskLeaf &seen) {
          return seen.value == leaf.value && seen.negated == leaf.negated;
        }))
      m.keep.push_back(leaf);
  }
}

/// Checks that the fused op would produce exactly the attention output's
/// type.
LogicalResult checkFusedType(const AttentionMatch &m, Blocker *why) {
  tir::MatmulOp output = m.output;
  tir::SoftmaxOp softmax = m.softmax;
  OpBuilder builder(softmax.getContext());
  OperationState state(output.getLoc(),
                       tir::FusedAttentionOp::getOperationName());
  tir::FusedAttentionOp::build(builder, state, m.q, m.k, m.v, Value(), m.bias,
                               m.scale, m.causal, m.fill);
  if (state.types.size() == 1 && state.types[0] == output.getType())
    return success();
  if (state.types.size() == 1 && isa<RankedTensorType>(state.types[0]))
    return block(why, output,
                 "tfc.fused_attention would return " +
                     typeString(state.types[0]) +
                     " but the attention output is " +
                     typeString(output.getType()));
  return block(why, m.scores,
               "q " + typeString(m.q.getType()) + ", k " +
                   typeString(m.k.getType()) + ", v " +
                   typeString(m.v.getType()) +
                   " do not fit tfc.fused_attention (rank 4 [batch, "
                   "heads, len, dim], equal batch and heads)");
}

} // namespace

FailureOr<AttentionMatch> matchAttention(tir::SoftmaxOp softmax, Blocker *why) {
  AttentionMatch m;
  m.softmax = softmax;
  // 1. The output matmul.
  if (failed(matchOutputMatmul(softmax, m, why)))
    return failure();
  // 2. The score chain, outermost op first.
  SmallVector<Step> steps;
  if (failed(matchScoreChain(softmax, m, steps, why)))
    return failure();
  // 3. Q and K^T.
  SmallVector<DimRef> qRefs, kRefs;
  double scale = 1.0;
  if (failed(matchQueryKey(m, scale, qRefs, kRefs, why)))
    return failure();
  // 4. Replay the chain from the scores outwards.
  SmallVector<Step *> wheres;
  if (failed(replayChain(steps, m, scale, wheres, why)))
    return failure();
  // 5. Mask leaves; the causal mask becomes a flag.
  collectMask(wheres, qRefs, kRefs, m);
  // 6. The fused op must produce exactly the attention output's type.
  if (failed(checkFusedType(m, why)))
    return failure();
  return m;
}

namespace {

/// Replaces the attention `m` with one tfc.fused_attention and erases what
/// became dead.
void rewriteAttention(AttentionMatch m, RewriterBase &rewriter) {
  rewriter.setInsertionPoint(m.output);
  Location loc = rewriter.getFusedLoc(
      {m.scores.getLoc(), m.softmax.getLoc(), m.output.getLoc()});
  Value keep;
  for (const MaskLeaf &leaf : m.keep) {
    Value value = leaf.value;
    if (leaf.negated)
      value = rewriter.create<tir::NotOp>(loc, value);
    keep = keep ? rewriter.create<tir::AndOp>(loc, keep, value).getResult()
                : value;
  }
  auto fused = rewriter.create<tir::FusedAttentionOp>(
      loc, m.q, m.k, m.v, keep, m.bias, m.scale, m.causal, m.fill);
  Operation *softmax = m.softmax;
  rewriter.replaceOp(m.output, fused.getResult());
  eraseIfDead(softmax, rewriter);
}

struct FuseAttentionPass : impl::FuseAttentionBase<FuseAttentionPass> {
  void runOnOperation() override {
    rewriteEach<tir::SoftmaxOp>(
        getOperation(),
        [](tir::SoftmaxOp softmax, RewriterBase &rewriter) -> LogicalResult {
          FailureOr<AttentionMatch> m = matchAttention(softmax);
          if (failed(m))
            return failure();
          rewriteAttention(*m, rewriter);
          return success();
        });
  }
};

} // namespace
} // namespace tfc
