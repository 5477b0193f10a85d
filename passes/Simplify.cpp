//===- Simplify.cpp - canonicalization plus tfc cleanups ------------------===//
//
// Pass `tfc-simplify`: the greedy pattern driver (as `-canonicalize` runs it:
// top-down, folding, constant deduplication, dead-op removal) with every
// canonicalization pattern of the loaded dialects plus the rewrites below,
// which put the graph into the form the fusion passes match. The primitive
// ops' ODS stays as the frontend needs it, so these patterns live here rather
// than as op canonicalizers.
//
//  - MatmulOfTranspose: `matmul(a, transpose(b, perm))` where perm takes the
//    last two axes from b in reversed order becomes `matmul(a, transpose(b,
//    perm'))` with transpose_b flipped, perm' = perm with its last two
//    entries swapped (no transpose at all when perm' is the identity).
//    `x @ transpose(w)` then matches a linear layer, and `q @ transpose(k)`
//    reads K in its [batch, heads, seq, dim] layout even after the folder
//    composed the head-split transpose with the K^T transpose. The same for
//    tfc.linear with a transposed rank-2 weight.
//  - WhereOfNot: `where(not c, x, y)` becomes `where(c, y, x)`
//    (masked_fill(s, not keep, v) is where(keep, s, v)).
//  - ConcatOfSlices: in a concat along axis a, a run of operands that are
//    adjacent slices (end of one = start of the next) of one tensor along
//    the same axis becomes one slice; a slice covering the whole (static)
//    axis is the tensor itself. Undoes the split of a packed weight when
//    merge-qkv concatenates the pieces again.
//  - ReshapeOfSlice: `reshape(slice(x, last axis, [a, b)), [..., H, D])`,
//    which splits only the sliced axis, becomes `slice(reshape(x, [...,
//    N / D, D]), axis -2, [a / D, b / D))` when D divides a, b and x's
//    static last axis N. The head split after a merged Q/K/V projection
//    then reshapes the projection once (a view) and slices whole heads
//    with the innermost axis dense, which the executor binds as strided
//    views instead of copying (docs/runtime.md, "Views").
//
//===----------------------------------------------------------------------===//

#include "passes/FusionUtils.h"
#include "passes/Passes.h"

#include "ir/TfcOps.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;
namespace tir = mlir::tfc;

namespace tfc {
#define GEN_PASS_DEF_TFCSIMPLIFY
#include "passes/Passes.h.inc"
} // namespace tfc

namespace tfc {
namespace {

/// The result type `OpTy::build(args...)` would infer, without creating the
/// op (a pattern that fails must not change the IR).
template <typename OpTy, typename... Args>
Type inferredType(OpBuilder &builder, Location loc, Args &&...args) {
  OperationState state(loc, OpTy::getOperationName());
  OpTy::build(builder, state, std::forward<Args>(args)...);
  return state.types.size() == 1 ? state.types.front() : Type();
}

struct MatmulOfTranspose : OpRewritePattern<tir::MatmulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tir::MatmulOp matmul,
                                PatternRewriter &rewriter) const override {
    // rhs = transpose(x, perm). With perm' = perm with its last two entries
    // swapped, transpose(x, perm) = swap_last_two(transpose(x, perm')), and
    // the swap is what transpose_b does. Rewrite when the last two axes of
    // the rhs come from x in reversed order (perm[n-1] < perm[n-2]): perm'
    // then keeps them in order, so the rewrite never applies twice.
    auto transpose = matmul.getRhs().getDefiningOp<tir::TransposeOp>();
    if (!transpose)
      return failure();
    SmallVector<int64_t> perm(transpose.getPerm());
    int64_t n = perm.size();
    if (n < 2 || perm[n - 1] > perm[n - 2])
      return failure();
    std::swap(perm[n - 1], perm[n - 2]);
    bool identity = llvm::all_of(llvm::enumerate(perm), [](auto entry) {
      return static_cast<int64_t>(entry.index()) == entry.value();
    });
    Value rhs = transpose.getInput();
    if (!identity) {
      if (inferredType<tir::TransposeOp>(rewriter, transpose.getLoc(), rhs,
                                         ArrayRef<int64_t>(perm)) ==
          Type())
        return failure();
      rhs = rewriter.create<tir::TransposeOp>(transpose.getLoc(), rhs,
                                              ArrayRef<int64_t>(perm));
    }
    // transpose_b undoes the swap exactly, so the result type is unchanged.
    rewriter.replaceOpWithNewOp<tir::MatmulOp>(
        matmul, matmul.getLhs(), rhs, !matmul.getTransposeB());
    return success();
  }
};

struct LinearOfTranspose : OpRewritePattern<tir::LinearOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tir::LinearOp linear,
                                PatternRewriter &rewriter) const override {
    auto transpose = linear.getW().getDefiningOp<tir::TransposeOp>();
    if (!transpose || !swapsLastTwoAxes(transpose.getPerm()))
      return failure();
    rewriter.modifyOpInPlace(linear, [&] {
      linear.getWMutable().assign(transpose.getInput());
      linear.setTransposeB(!linear.getTransposeB());
    });
    return success();
  }
};

struct WhereOfNot : OpRewritePattern<tir::WhereOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tir::WhereOp where,
                                PatternRewriter &rewriter) const override {
    auto notOp = where.getCondition().getDefiningOp<tir::NotOp>();
    if (!notOp)
      return failure();
    if (inferredType<tir::WhereOp>(rewriter, where.getLoc(), notOp.getInput(),
                                   where.getOnFalse(), where.getOnTrue()) !=
        where.getType())
      return failure();
    rewriter.replaceOpWithNewOp<tir::WhereOp>(
        where, notOp.getInput(), where.getOnFalse(), where.getOnTrue());
    return success();
  }
};

struct ConcatOfSlices : OpRewritePattern<tir::ConcatOp> {
  using OpRewritePattern::OpRewritePattern;

  /// One operand of the new concat: an old operand, or the slice
  /// [start, end) of `source` (all of it when `whole`).
  struct Piece {
    Value value;
    Value source;
    int64_t start = 0, end = 0;
    bool whole = false;
  };

  LogicalResult matchAndRewrite(tir::ConcatOp concat,
                                PatternRewriter &rewriter) const override {
    int64_t axis = concat.getAxis();
    SmallVector<Value> inputs(concat.getInputs());
    SmallVector<Piece> pieces;
    bool changed = false;
    for (size_t i = 0; i < inputs.size();) {
      auto slice = inputs[i].getDefiningOp<tir::SliceOp>();
      if (!slice || static_cast<int64_t>(slice.getAxis()) != axis ||
          slice.getStep() != 1) {
        pieces.push_back({inputs[i++]});
        continue;
      }
      Value source = slice.getInput();
      int64_t start = slice.getStart(), end = slice.getEnd();
      size_t j = i + 1;
      for (; j < inputs.size(); ++j) {
        auto next = inputs[j].getDefiningOp<tir::SliceOp>();
        if (!next || next.getInput() != source ||
            static_cast<int64_t>(next.getAxis()) != axis ||
            next.getStep() != 1 || static_cast<int64_t>(next.getStart()) != end)
          break;
        end = next.getEnd();
      }
      if (j == i + 1) {
        pieces.push_back({inputs[i++]});
        continue;
      }
      changed = true;
      auto sourceType = cast<RankedTensorType>(source.getType());
      bool whole = start == 0 && sourceType.getDimSize(axis) == end;
      pieces.push_back({Value(), source, start, end, whole});
      i = j;
    }
    if (!changed)
      return failure();
    // Whole-tensor pieces have the type of the slices they replace along
    // every other axis, so the concat's type is unchanged.
    if (pieces.size() == 1 && pieces.front().whole &&
        pieces.front().source.getType() != concat.getType())
      return failure();
    SmallVector<Value> values;
    for (Piece &piece : pieces) {
      if (piece.value)
        values.push_back(piece.value);
      else if (piece.whole)
        values.push_back(piece.source);
      else
        values.push_back(rewriter.create<tir::SliceOp>(
            concat.getLoc(), piece.source, axis, piece.start, piece.end));
    }
    if (values.size() == 1)
      rewriter.replaceOp(concat, values.front());
    else
      rewriter.replaceOpWithNewOp<tir::ConcatOp>(concat, values, axis);
    return success();
  }
};

struct ReshapeOfSlice : OpRewritePattern<tir::ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tir::ReshapeOp reshape,
                                PatternRewriter &rewriter) const override {
    auto slice = reshape.getInput().getDefiningOp<tir::SliceOp>();
    if (!slice || slice.getStep() != 1)
      return failure();
    auto input = cast<RankedTensorType>(slice.getInput().getType());
    auto sliced = cast<RankedTensorType>(slice.getType());
    auto result = cast<RankedTensorType>(reshape.getType());
    int64_t rank = input.getRank();
    int64_t n = rank > 0 ? input.getDimSize(rank - 1) : 0;
    if (rank == 0 || static_cast<int64_t>(slice.getAxis()) != rank - 1 ||
        ShapedType::isDynamic(n) || result.getRank() != rank + 1)
      return failure();
    // The reshape keeps every axis but the last and splits it into H x D.
    if (result.getShape().drop_back(2) != sliced.getShape().drop_back())
      return failure();
    int64_t d = result.getDimSize(rank);
    int64_t start = slice.getStart(), end = slice.getEnd();
    if (ShapedType::isDynamic(d) || d <= 0 || n % d != 0 || start % d != 0 ||
        end % d != 0)
      return failure();
    SmallVector<int64_t> wholeShape(reshape.getShape().drop_back(2));
    wholeShape.append({n / d, d});
    Location loc = reshape.getLoc();
    if (inferredType<tir::ReshapeOp>(rewriter, loc, slice.getInput(),
                                     ArrayRef<int64_t>(wholeShape)) == Type())
      return failure();
    // The slice of `whole` has the reshape's type: the axes before the
    // last two are x's (the slice's, the reshape's), then (b - a) / D = H.
    Value whole = rewriter.create<tir::ReshapeOp>(
        loc, slice.getInput(), ArrayRef<int64_t>(wholeShape));
    rewriter.replaceOpWithNewOp<tir::SliceOp>(reshape, whole, rank - 1,
                                              start / d, end / d);
    return success();
  }
};

struct TfcSimplifyPass : impl::TfcSimplifyBase<TfcSimplifyPass> {
  void runOnOperation() override {
    MLIRContext *context = &getContext();
    RewritePatternSet patterns(context);
    for (Dialect *dialect : context->getLoadedDialects())
      dialect->getCanonicalizationPatterns(patterns);
    for (RegisteredOperationName op : context->getRegisteredOperations())
      op.getCanonicalizationPatterns(patterns, context);
    patterns.add<MatmulOfTranspose, LinearOfTranspose, WhereOfNot,
                 ConcatOfSlices, ReshapeOfSlice>(context);
    GreedyRewriteConfig config;
    config.useTopDownTraversal = true;
    config.enableRegionSimplification = GreedySimplifyRegionLevel::Normal;
    // Not converging is no error: the IR is still valid, only less simple.
    (void)applyPatternsAndFoldGreedily(getOperation(), std::move(patterns),
                                       config);
  }
};

} // namespace
} // namespace tfc
