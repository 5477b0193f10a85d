//===- DataMovementKernels.cpp - Copies, index math and index generators --===//
//
// transpose, reshape, slice, concat, gather, and the ops that only read
// shapes: positions and causal_mask. All are pointwise in the result, so
// they share schedulePointwise: vectorized along the innermost result axis,
// where most of them read contiguous memory (a transpose that moves the last
// axis gathers instead).
//
//===----------------------------------------------------------------------===//

#include "codegen/KernelSupport.h"

#include "ir/TfcOps.h"

using namespace Halide;
using namespace mlir::tfc;
using namespace tfc::codegen::detail;

namespace tfc::codegen {

namespace {

llvm::Expected<Func> buildTranspose(KernelContext &ctx, TransposeOp op,
                                    const std::vector<Var> &vars) {
  const TensorInput &in = ctx.inputs[0];
  llvm::ArrayRef<int64_t> perm = op.getPerm();
  if (static_cast<int>(perm.size()) != in.rank())
    return ctx.error("perm does not match the rank");
  // Result axis i is input axis perm[i].
  std::vector<Expr> idx(in.rank());
  for (int i = 0; i < in.rank(); ++i) {
    if (perm[i] < 0 || perm[i] >= in.rank())
      return ctx.error("perm entry out of range");
    idx[perm[i]] = vars[i];
  }
  Func out = ctx.func();
  define(out, vars, in.at(idx));
  return out;
}

/// Row-major regrouping. The dynamic dims are carried one to one (the IR's
/// rule), so the shapes split into segments of static dims between the
/// dynamic ones. If every segment keeps its element count, each segment is
/// regrouped on its own with constant strides (divisions by constants,
/// which Halide strength-reduces). Otherwise the element's flat index is
/// computed and decomposed, dividing by run-time extents.
llvm::Expected<Func> buildReshape(KernelContext &ctx,
                                  const std::vector<Var> &vars) {
  const TensorInput &in = ctx.inputs[0];
  llvm::ArrayRef<int64_t> outShape = ctx.resultType.getShape();
  int inRank = in.rank(), outRank = ctx.resultRank();

  // Segments: [begin, end) ranges of static dims; dynamic dims between.
  auto segments = [](llvm::ArrayRef<int64_t> shape) {
    std::vector<std::pair<int, int>> segs;
    int begin = 0;
    for (int i = 0; i <= static_cast<int>(shape.size()); ++i) {
      if (i == static_cast<int>(shape.size()) ||
          mlir::ShapedType::isDynamic(shape[i])) {
        segs.push_back({begin, i});
        begin = i + 1;
      }
    }
    return segs;
  };
  auto product = [](llvm::ArrayRef<int64_t> shape, std::pair<int, int> seg) {
    int64_t p = 1;
    for (int i = seg.first; i < seg.second; ++i)
      p *= shape[i];
    return p;
  };
  auto inSegs = segments(in.shape);
  auto outSegs = segments(outShape);
  if (inSegs.size() != outSegs.size())
    return ctx.error("input and result have different numbers of dynamic "
                     "dimensions");
  bool segmentwise = true;
  for (size_t s = 0; s < inSegs.size(); ++s)
    segmentwise &=
        product(in.shape, inSegs[s]) == product(outShape, outSegs[s]);

  std::vector<Expr> idx(inRank);
  if (segmentwise) {
    for (size_t s = 0; s < inSegs.size(); ++s) {
      Expr flat = 0;
      for (int i = outSegs[s].first; i < outSegs[s].second; ++i)
        flat = flat * static_cast<int>(outShape[i]) + vars[i];
      for (int i = inSegs[s].second - 1; i >= inSegs[s].first; --i) {
        int extent = static_cast<int>(in.shape[i]);
        idx[i] = i == inSegs[s].first ? flat : flat % extent;
        flat = flat / extent;
      }
      // The dynamic dim after the segment maps to its counterpart.
      if (s + 1 < inSegs.size())
        idx[inSegs[s].second] = vars[outSegs[s].second];
    }
  } else {
    // Extents of the result's dims: static, or the matching dynamic input
    // dim (the k-th dynamic dim of one is the k-th of the other).
    std::vector<Expr> outExtents(outRank);
    for (size_t s = 0; s < outSegs.size(); ++s) {
      for (int i = outSegs[s].first; i < outSegs[s].second; ++i)
        outExtents[i] = static_cast<int>(outShape[i]);
      if (s + 1 < outSegs.size())
        outExtents[outSegs[s].second] = in.extent(inSegs[s].second);
    }
    Expr flat = 0;
    for (int i = 0; i < outRank; ++i)
      flat = flat * outExtents[i] + vars[i];
    for (int i = inRank - 1; i >= 0; --i) {
      idx[i] = i == 0 ? flat : flat % in.extent(i);
      flat = flat / in.extent(i);
    }
  }
  Func out = ctx.func();
  define(out, vars, in.at(idx));
  return out;
}

llvm::Expected<Func> buildSlice(KernelContext &ctx, SliceOp op,
                                const std::vector<Var> &vars) {
  const TensorInput &in = ctx.inputs[0];
  if (op.getAxis() >= static_cast<uint64_t>(in.rank()))
    return ctx.error("axis out of range");
  std::vector<Expr> idx = asExprs(vars);
  Expr &i = idx[op.getAxis()];
  if (op.getStep() != 1)
    i = i * static_cast<int>(op.getStep());
  i += static_cast<int>(op.getStart());
  Func out = ctx.func();
  define(out, vars, in.at(idx));
  return out;
}

llvm::Expected<Func> buildConcat(KernelContext &ctx, ConcatOp op,
                                 const std::vector<Var> &vars) {
  int axis = static_cast<int>(op.getAxis());
  if (ctx.inputs.empty() || axis >= ctx.resultRank())
    return ctx.error("axis out of range");
  // Walk the inputs from the last: value = select(i < end_0, in_0, i <
  // end_1, in_1, ..., in_last). Each input is read at an index clamped into
  // its own range, so that bounds inference asks every input only for what
  // it holds (the select evaluates both sides).
  std::vector<Expr> offsets = {0};
  for (const TensorInput &in : ctx.inputs)
    offsets.push_back(offsets.back() + in.extent(axis));
  Expr i = vars[axis];
  Expr value;
  for (int k = static_cast<int>(ctx.inputs.size()) - 1; k >= 0; --k) {
    const TensorInput &in = ctx.inputs[k];
    std::vector<Expr> idx = asExprs(vars);
    Expr extent = in.extent(axis);
    idx[axis] = clamp(i - offsets[k], 0, extent - 1);
    if (!in.staticExtent(axis)) {
      // A dynamic part may be empty (an empty KV cache, past = 0): then it
      // is never selected, but select reads both sides. It is read at its
      // first element (every runtime buffer has one allocated), and bounds
      // inference is told that the part needs [0, extent - 1], nothing when
      // it is empty.
      Expr empty = extent == 0;
      for (Expr &e : idx)
        e = select(empty, 0, e);
      idx[axis] = unsafe_promise_clamped(idx[axis], 0, extent - 1);
    }
    Expr v = in.at(idx);
    value = value.defined() ? select(i < offsets[k + 1], v, value) : v;
  }
  Func out = ctx.func();
  define(out, vars, value);
  return out;
}

llvm::Expected<Func> buildGather(KernelContext &ctx, GatherOp op,
                                 const std::vector<Var> &vars) {
  const TensorInput &table = ctx.inputs[0];
  const TensorInput &ids = ctx.inputs[1];
  std::optional<uint64_t> packedRows = op.getPackedRows();
  if (table.rank() < 1 || (packedRows && table.rank() != 3))
    return ctx.error("table must have rank >= 1 (panels: rank 3)");
  // Result = ids.shape ++ table.shape[1:] (panels: ids.shape ++ [D]).
  std::vector<Expr> idIdx(vars.begin(), vars.begin() + ids.rank());
  Expr id = ids.at(idIdx);
  Type idType = id.type();
  Expr rows = packedRows ? Expr(static_cast<int>(*packedRows))
                         : table.extent(0);
  // Clamped in the ids' own type so that a huge i64 id cannot wrap into
  // range when narrowed.
  Expr row = cast<int>(clamp(id, cast(idType, 0), cast(idType, rows - 1)));
  std::vector<Expr> tableIdx = {row};
  if (packedRows) {
    // Row v of a [V, D] table in its transpose_b panels (tfc.pack_panels):
    // table[v / 48, d, v % 48], a stride of 48 along the row.
    int panel = static_cast<int>(mlir::tfc::kPanelColumns);
    tableIdx = {row / panel, vars.back(), row % panel};
  } else {
    tableIdx.insert(tableIdx.end(), vars.begin() + ids.rank(), vars.end());
  }
  Func out = ctx.func();
  define(out, vars, table.at(tableIdx));
  return out;
}

llvm::Expected<Func> buildPositions(KernelContext &ctx, PositionsOp op,
                                    const std::vector<Var> &vars) {
  const TensorInput &ref = ctx.inputs[0];
  if (op.getAxis() >= static_cast<uint64_t>(ref.rank()))
    return ctx.error("axis out of range");
  Expr offset = 0;
  if (ctx.inputs.size() > 1) {
    const TensorInput &offsetRef = ctx.inputs[1];
    std::optional<uint64_t> offsetAxis = op.getOffsetAxis();
    if (!offsetAxis || *offsetAxis >= static_cast<uint64_t>(offsetRef.rank()))
      return ctx.error("offset_axis missing or out of range");
    offset = offsetRef.extent(static_cast<int>(*offsetAxis));
  }
  Func out = ctx.func();
  define(out, vars, cast<int32_t>(vars[0] + offset));
  // The length comes from `ref`: refuse an output of another length.
  out.output_buffer().dim(0).set_extent(
      ref.extent(static_cast<int>(op.getAxis())));
  return out;
}

llvm::Expected<Func> buildArange(KernelContext &ctx, ArangeOp op,
                                 const std::vector<Var> &vars) {
  Expr start(static_cast<int64_t>(op.getStart()));
  Expr step(static_cast<int64_t>(op.getStep()));
  Expr value = start + step * cast<int64_t>(vars[0]);
  Func out = ctx.func();
  define(out, vars, cast<int32_t>(value));
  if (op.getRef()) {
    std::optional<uint64_t> axis = op.getAxis();
    if (!axis || *axis >= static_cast<uint64_t>(ctx.inputs[0].rank()))
      return ctx.error("axis missing or out of range");
    // The length comes from `ref`: refuse an output of another length.
    out.output_buffer().dim(0).set_extent(
        ctx.inputs[0].extent(static_cast<int>(*axis)));
  }
  return out;
}

llvm::Expected<Func> buildCausalMask(KernelContext &ctx, CausalMaskOp op,
                                     const std::vector<Var> &vars) {
  const TensorInput &qRef = ctx.inputs[0];
  const TensorInput &kRef = ctx.inputs[1];
  if (op.getQAxis() >= static_cast<uint64_t>(qRef.rank()) ||
      op.getKAxis() >= static_cast<uint64_t>(kRef.rank()))
    return ctx.error("axis out of range");
  Expr q = qRef.extent(static_cast<int>(op.getQAxis()));
  Expr k = kRef.extent(static_cast<int>(op.getKAxis()));
  Func out = ctx.func();
  // The queries are the last Q of the K positions.
  define(out, vars, storeBool(vars[1] <= vars[0] + (k - q)));
  out.output_buffer().dim(1).set_extent(q);
  out.output_buffer().dim(0).set_extent(k);
  return out;
}

/// A transpose that moves the innermost axis reads the input with a stride
/// along the result's innermost axis: a gather per vector. When both axes
/// involved are static and at least 16 long (weights: nn.Linear's [out, in]
/// turned into [in, out] once, GPT-2's tied LM head), the result is computed
/// in 16x16 tiles instead: 16 dense vector loads along the input's rows,
/// transposed in registers, 16 dense stores. Returns false (leaving the
/// pointwise schedule to the caller) when it does not apply.
bool scheduleTiledTranspose(KernelContext &ctx, Func out, TransposeOp op,
                            const std::vector<Var> &vars) {
  const TensorInput &in = ctx.inputs[0];
  int rank = in.rank();
  llvm::ArrayRef<int64_t> perm = op.getPerm();
  if (rank < 2 || perm[rank - 1] == rank - 1)
    return false;
  // x: the result's innermost axis (input axis perm[rank - 1]); y: the
  // result axis that reads the input's innermost axis.
  int yAxis = -1;
  for (int a = 0; a < rank; ++a)
    if (perm[a] == rank - 1)
      yAxis = a;
  std::optional<int64_t> xExtent = ctx.resultStaticExtent(rank - 1);
  std::optional<int64_t> yExtent = ctx.resultStaticExtent(yAxis);
  if (yAxis < 0 || !xExtent || !yExtent || *xExtent < kVectorLanes ||
      *yExtent < kVectorLanes)
    return false;
  Var x = vars[rank - 1], y = vars[yAxis];
  Var xo("xo"), yo("yo"), xi("xi"), yi("yi");
  out.tile(x, y, xo, yo, xi, yi, kVectorLanes, kVectorLanes,
           TailStrategy::ShiftInwards)
      .vectorize(xi)
      .unroll(yi);
  // Loops, innermost first: xi, yi, xo, yo, then the other axes; tasks are
  // rows of tiles (yo and the other axes).
  std::vector<VarOrRVar> order = {xi, yi, xo, yo};
  std::vector<Var> outer = {yo};
  for (int a = rank - 1; a >= 0; --a)
    if (a != rank - 1 && a != yAxis) {
      order.push_back(vars[a]);
      outer.push_back(vars[a]);
    }
  out.reorder(order);
  out.parallel(fuseAll(out, outer, "tile_rows"));
  // The input tile: 16 rows of 16, loaded along the input's innermost axis.
  ImageParam param = in.param;
  Func tile = param.in(out);
  std::vector<Var> args = tile.args();
  tile.compute_at(out, xo)
      .vectorize(args[0])
      .unroll(args[in.hdim(perm[rank - 1])]);
  return true;
}

} // namespace

llvm::Expected<Func> buildDataMovement(KernelContext &ctx) {
  mlir::Operation *op = ctx.op;
  if (llvm::isa<PackPanelsOp>(op))
    return buildPackPanels(ctx);
  std::vector<Var> vars = axisVars(ctx.resultRank());

  // Algorithm
  auto build = [&]() -> llvm::Expected<Func> {
    if (auto t = llvm::dyn_cast<TransposeOp>(op))
      return buildTranspose(ctx, t, vars);
    if (llvm::isa<ReshapeOp>(op))
      return buildReshape(ctx, vars);
    if (auto s = llvm::dyn_cast<SliceOp>(op))
      return buildSlice(ctx, s, vars);
    if (auto c = llvm::dyn_cast<ConcatOp>(op))
      return buildConcat(ctx, c, vars);
    if (auto g = llvm::dyn_cast<GatherOp>(op))
      return buildGather(ctx, g, vars);
    if (auto p = llvm::dyn_cast<PositionsOp>(op))
      return buildPositions(ctx, p, vars);
    if (auto m = llvm::dyn_cast<CausalMaskOp>(op))
      return buildCausalMask(ctx, m, vars);
    if (auto a = llvm::dyn_cast<ArangeOp>(op))
      return buildArange(ctx, a, vars);
    return ctx.error("not a data movement op");
  };
  llvm::Expected<Func> out = build();
  if (!out)
    return out.takeError();

  // Schedule
  if (auto t = llvm::dyn_cast<TransposeOp>(op); t && !ctx.gpu())
    if (scheduleTiledTranspose(ctx, *out, t, vars))
      return out;
  schedulePointwise(ctx, *out, vars, ctx.resultType.getShape());
  return out;
}

} // namespace tfc::codegen
