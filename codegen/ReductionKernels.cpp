//===- ReductionKernels.cpp - Reductions, softmax and norms ---------------===//
//
// reduce_sum/mean/max, softmax, layer_norm and rms_norm; and the index
// reductions and scans argmax, topk and cumsum. Accumulation is in
// fp32 for floats (integers accumulate in their own type, as the result
// type says). Softmax subtracts the row max before exp; layer_norm uses the
// two-pass mean and biased variance (PyTorch's definition).
//
// CPU schedules have two shapes, after where the reduced axis lies:
//  - The innermost axis (softmax over keys, the norms, most reductions): the
//    loads along a row are contiguous, so each row's statistics are computed
//    at the row loop, vectorized by splitting the reduction into 16 lanes
//    (rfactor) and summing the lanes at the end. Rows are parallel tasks.
//  - An outer axis: the result is vectorized along the innermost (kept)
//    axis, and the reduction loop runs over whole vectors.
// GPU schedules: softmax over the innermost axis and the norms run a block
// per row (GpuSchedules.cpp); other reductions compute every statistic as
// its own kernel with one thread per row, and the result pointwise.
//
//===----------------------------------------------------------------------===//

#include "codegen/GpuSchedules.h"
#include "codegen/KernelSupport.h"

#include "ir/TfcOps.h"

using namespace Halide;
using namespace mlir::tfc;
using namespace tfc::codegen::detail;

namespace tfc::codegen {

namespace {

/// `vars` without the one of `axis`.
std::vector<Var> without(const std::vector<Var> &vars, int axis) {
  std::vector<Var> rest;
  for (int i = 0; i < static_cast<int>(vars.size()); ++i)
    if (i != axis)
      rest.push_back(vars[i]);
  return rest;
}

/// `vars` as Exprs with `e` in place of axis `axis`.
std::vector<Expr> withAt(const std::vector<Var> &vars, int axis, Expr e) {
  std::vector<Expr> idx = asExprs(vars);
  idx[axis] = std::move(e);
  return idx;
}

/// Schedules per-row statistics `stats` (reductions over `r`, defined over
/// `rowVars`) and the result `out` (over `vars`) for a reduction along the
/// innermost axis of `out`'s input, `axis` == rank-1, on the CPU. `rowed`
/// are Funcs over `vars` to store per row (softmax's exps).
void scheduleInnerAxisCPU(Func out, const std::vector<Var> &vars,
                          std::optional<int64_t> rowLength,
                          const std::vector<Func> &stats, const RVar &r,
                          const std::vector<Func> &rowed) {
  int rank = static_cast<int>(vars.size());
  Var inner = vars[rank - 1];
  out.vectorize(inner, kVectorLanes, outputTail(rowLength, kVectorLanes));
  LoopLevel rowLevel = LoopLevel::root();
  if (rank > 1) {
    std::vector<Var> rows(vars.rbegin() + 1, vars.rend());
    Var row = parallelRows(out, rows, rowsPerTask(rowLength));
    rowLevel = LoopLevel(out, row);
  }
  for (Func s : stats) {
    s.compute_at(rowLevel);
    vectorizeInnerReduction(s, r, rowLevel);
  }
  for (Func f : rowed)
    f.compute_at(rowLevel).vectorize(inner, kVectorLanes,
                                     TailStrategy::GuardWithIf);
}

/// The same for a reduction along an outer axis `axis` < rank-1: `out` is
/// vectorized along its innermost var, the statistics are computed per
/// vector of columns, outside the loop over `axis` (if `out` has it).
void scheduleOuterAxisCPU(Func out, const std::vector<Var> &vars,
                          std::optional<int64_t> innerLength, int axis,
                          bool outHasAxis, const std::vector<Func> &stats,
                          const RVar &r, const std::vector<Var> &statVars) {
  int rank = static_cast<int>(vars.size());
  Var inner = vars[rank - 1];
  Var xo("xo"), xi("xi");
  bool vectorized = !innerLength || *innerLength >= kVectorLanes;
  if (vectorized)
    out.split(inner, xo, xi, kVectorLanes,
              outputTail(innerLength, kVectorLanes))
        .vectorize(xi);
  else
    xo = inner;
  // Loop order, innermost first: xi, [axis], xo, the other vars.
  std::vector<VarOrRVar> order;
  if (vectorized)
    order.push_back(xi);
  if (outHasAxis)
    order.push_back(vars[axis]);
  order.push_back(xo);
  std::vector<Var> others;
  for (int i = rank - 2; i >= 0; --i)
    if (!(outHasAxis && i == axis))
      others.push_back(vars[i]);
  order.insert(order.end(), others.begin(), others.end());
  if (order.size() > 1)
    out.reorder(order);
  if (!others.empty())
    parallelRows(out, others, 1);
  else
    out.parallel(xo);
  Var statInner = statVars.back();
  for (Func s : stats) {
    s.compute_at(out, xo);
    if (vectorized) {
      s.vectorize(statInner, kVectorLanes, TailStrategy::GuardWithIf);
      s.update()
          .reorder(statInner, r)
          .vectorize(statInner, kVectorLanes, TailStrategy::GuardWithIf);
    }
  }
}

/// GPU: each statistic a kernel with a thread per row, `out` pointwise.
void scheduleGPU(const KernelContext &ctx, Func out,
                 const std::vector<Var> &vars, const std::vector<Func> &stats,
                 const std::vector<Var> &statVars) {
  for (Func s : stats) {
    s.compute_root();
    gpuTileStage(s, statVars);
    gpuTileStage(s.update(), statVars);
  }
  gpuTileStage(out, vars);
  (void)ctx;
}

llvm::Expected<Func> buildReduce(KernelContext &ctx, int64_t axis64,
                                 bool keepdim) {
  const TensorInput &in = ctx.inputs[0];
  int rank = in.rank();
  if (axis64 < 0 || axis64 >= rank)
    return ctx.error("axis out of range");
  int axis = static_cast<int>(axis64);
  std::vector<Var> vars = axisVars(ctx.resultRank());
  // The input's vars: the result's, with the reduction in place of `axis`.
  RDom r(0, in.extent(axis), ctx.base + "_r");
  std::vector<Expr> inIdx;
  for (int i = 0, v = 0; i < rank; ++i) {
    if (i == axis) {
      inIdx.push_back(r);
      if (keepdim)
        ++v;
    } else {
      inIdx.push_back(vars[v++]);
    }
  }
  Type t = ctx.resultStorage;
  Expr x = cast(t, in.at(inIdx));

  // Algorithm
  Func acc = ctx.func(llvm::isa<ReduceMaxOp>(ctx.op) ? "max" : "sum");
  std::vector<Expr> idx = asExprs(vars);
  if (llvm::isa<ReduceMaxOp>(ctx.op)) {
    define(acc, vars, lowest(t));
    ref(acc, idx) = max(call(acc, idx), x);
  } else {
    define(acc, vars, cast(t, 0));
    ref(acc, idx) += x;
  }
  Func out = ctx.func();
  Expr result = call(acc, idx);
  if (llvm::isa<ReduceMeanOp>(ctx.op))
    result = result / cast<float>(in.extent(axis));
  define(out, vars, result);

  // Schedule
  if (ctx.gpu()) {
    scheduleGPU(ctx, out, vars, {acc}, vars);
    return out;
  }
  if (vars.empty()) {
    acc.compute_root();
    if (axis == rank - 1)
      vectorizeInnerReduction(acc, RVar(r.x), LoopLevel::root());
    return out;
  }
  if (axis == rank - 1) {
    // The result's innermost var is the kept size-1 axis, or a row var.
    std::vector<Var> rows(vars.rbegin(), vars.rend());
    if (keepdim)
      rows.erase(rows.begin());
    LoopLevel rowLevel = LoopLevel::root();
    if (!rows.empty())
      rowLevel = LoopLevel(
          out, parallelRows(out, rows, rowsPerTask(in.staticExtent(axis))));
    acc.compute_at(rowLevel);
    vectorizeInnerReduction(acc, RVar(r.x), rowLevel);
    return out;
  }
  int resultRank = ctx.resultRank();
  scheduleOuterAxisCPU(out, vars, ctx.resultStaticExtent(resultRank - 1), axis,
                       keepdim, {acc}, RVar(r.x), vars);
  return out;
}

llvm::Expected<Func> buildSoftmax(KernelContext &ctx, SoftmaxOp op) {
  const TensorInput &in = ctx.inputs[0];
  int rank = in.rank();
  if (op.getAxis() >= static_cast<uint64_t>(rank))
    return ctx.error("axis out of range");
  int axis = static_cast<int>(op.getAxis());
  std::vector<Var> vars = axisVars(rank);
  std::vector<Var> rowVars = without(vars, axis);
  std::vector<Expr> rowIdx = asExprs(rowVars);
  RDom r(0, in.extent(axis), ctx.base + "_r");

  // Algorithm
  Func mx = ctx.func("max");
  define(mx, rowVars, lowest(Float(32)));
  ref(mx, rowIdx) = max(call(mx, rowIdx), in.at(withAt(vars, axis, r)));

  Func ex = ctx.func("exp");
  define(ex, vars, exp(in.at(asExprs(vars)) - call(mx, rowIdx)));

  Func sum = ctx.func("sum");
  define(sum, rowVars, 0.0f);
  ref(sum, rowIdx) += call(ex, withAt(vars, axis, r));

  Func out = ctx.func();
  define(out, vars, call(ex, asExprs(vars)) / call(sum, rowIdx));

  // Schedule
  if (ctx.gpu() && axis == rank - 1 && rank > 1) {
    gpu::scheduleRowReduction(out, vars, ctx.resultStaticExtent(axis),
                              {mx, sum}, RVar(r.x), {ex});
    return out;
  }
  if (ctx.gpu()) {
    scheduleGPU(ctx, out, vars, {mx, sum}, rowVars);
    return out;
  }
  if (axis == rank - 1) {
    scheduleInnerAxisCPU(out, vars, ctx.resultStaticExtent(axis), {mx, sum},
                         RVar(r.x), {ex});
    return out;
  }
  scheduleOuterAxisCPU(out, vars, ctx.resultStaticExtent(rank - 1), axis,
                       /*outHasAxis=*/true, {mx, sum}, RVar(r.x), rowVars);
  return out;
}

/// layer_norm (with beta) and rms_norm (without), over the last axis.
llvm::Expected<Func> buildNorm(KernelContext &ctx, bool rms, double epsilon) {
  const TensorInput &in = ctx.inputs[0];
  const TensorInput &gamma = ctx.inputs[1];
  int rank = in.rank();
  if (rank < 1 || gamma.rank() != 1 || (!rms && ctx.inputs[2].rank() != 1))
    return ctx.error("expects a rank >= 1 input and rank-1 gamma and beta");
  int axis = rank - 1;
  std::vector<Var> vars = axisVars(rank);
  std::vector<Var> rowVars = without(vars, axis);
  std::vector<Expr> rowIdx = asExprs(rowVars);
  Var c = vars[axis];
  RDom r(0, in.extent(axis), ctx.base + "_r");
  Expr n = cast<float>(in.extent(axis));
  Expr eps = Expr(static_cast<float>(epsilon));
  Expr xr = in.at(withAt(vars, axis, r));
  Expr x = in.at(asExprs(vars));

  // Algorithm
  Func out = ctx.func();
  std::vector<Func> stats;
  if (rms) {
    Func sumsq = ctx.func("sumsq");
    define(sumsq, rowVars, 0.0f);
    ref(sumsq, rowIdx) += xr * xr;
    Expr inv = 1.0f / sqrt(call(sumsq, rowIdx) / n + eps);
    define(out, vars, x * inv * gamma.at({c}));
    stats = {sumsq};
  } else {
    const TensorInput &beta = ctx.inputs[2];
    Func sum = ctx.func("sum");
    define(sum, rowVars, 0.0f);
    ref(sum, rowIdx) += xr;
    Expr mean = call(sum, rowIdx) / n;
    // Two passes: the squared deviations from the mean, not E[x^2] - E[x]^2,
    // which cancels badly for rows with a large mean.
    Func sqdev = ctx.func("sqdev");
    define(sqdev, rowVars, 0.0f);
    ref(sqdev, rowIdx) += (xr - mean) * (xr - mean);
    Expr inv = 1.0f / sqrt(call(sqdev, rowIdx) / n + eps);
    define(out, vars, (x - mean) * inv * gamma.at({c}) + beta.at({c}));
    stats = {sum, sqdev};
  }

  // Schedule
  if (ctx.gpu() && rank > 1) {
    gpu::scheduleRowReduction(out, vars, ctx.resultStaticExtent(axis), stats,
                              RVar(r.x), {});
    return out;
  }
  if (ctx.gpu()) {
    scheduleGPU(ctx, out, vars, stats, rowVars);
    return out;
  }
  scheduleInnerAxisCPU(out, vars, ctx.resultStaticExtent(axis), stats,
                       RVar(r.x), {});
  return out;
}

} // namespace

/// tfc.argmax: the first index of the row maximum (Halide's argmax keeps
/// the first of equal values).
llvm::Expected<Func> buildArgmax(KernelContext &ctx, ArgmaxOp op) {
  const TensorInput &in = ctx.inputs[0];
  int rank = in.rank();
  if (op.getAxis() >= static_cast<uint64_t>(rank))
    return ctx.error("axis out of range");
  int axis = static_cast<int>(op.getAxis());
  std::vector<Var> vars = axisVars(ctx.resultRank());
  RDom r(0, in.extent(axis), ctx.base + "_r");
  std::vector<Expr> inIdx;
  for (int i = 0, v = 0; i < rank; ++i) {
    if (i == axis) {
      inIdx.push_back(r);
      if (op.getKeepdim())
        ++v;
    } else {
      inIdx.push_back(vars[v++]);
    }
  }
  Func out = ctx.func();
  Tuple best = argmax(r, in.at(inIdx), ctx.base + "_best");
  define(out, vars, cast<int32_t>(best[0]));
  if (!ctx.gpu() && !vars.empty())
    parallelRows(out, std::vector<Var>(vars.rbegin(), vars.rend()), 1);
  return out;
}

/// tfc.topk along the last axis: k passes over each row; pass j selects the
/// largest element that comes after pass j-1's in (value descending,
/// position ascending) order.
llvm::Expected<Func> buildTopk(KernelContext &ctx, TopkOp op) {
  const TensorInput &in = ctx.inputs[0];
  int last = in.rank() - 1;
  if (last < 0)
    return ctx.error("input must have rank >= 1");
  std::vector<Var> vars = axisVars(in.rank());
  std::vector<Expr> idx = asExprs(vars);
  Type t = ctx.resultStorage;
  Func sel = ctx.func("select");
  ref(sel, idx) = Tuple(lowest(t), Expr(-1));
  RDom r(0, in.extent(last), 0, static_cast<int>(op.getK()), ctx.base + "_r");
  auto withLast = [&](Expr e) {
    std::vector<Expr> at = idx;
    at[last] = std::move(e);
    return at;
  };
  Expr x = cast(t, in.at(withLast(r.x)));
  FuncRef prev = ref(sel, withLast(max(r.y - 1, 0)));
  FuncRef cur = ref(sel, withLast(r.y));
  Expr pv = prev[0], pi = prev[1], cv = cur[0], ci = cur[1];
  Expr eligible = r.y == 0 || x < pv || (x == pv && r.x > pi);
  Expr better = eligible && (ci < 0 || x > cv);
  ref(sel, withLast(r.y)) =
      Tuple(select(better, x, cv), select(better, r.x, ci));
  Func out = ctx.func();
  FuncRef selected = ref(sel, idx);
  ref(out, idx) = Tuple(selected[0], selected[1]);
  sel.compute_root();
  return out;
}

/// tfc.cumsum: a scan along `axis` (serial along it; accumulation in the
/// result type, as PyTorch's for f32 and integers).
llvm::Expected<Func> buildCumsum(KernelContext &ctx, CumsumOp op) {
  const TensorInput &in = ctx.inputs[0];
  if (op.getAxis() >= static_cast<uint64_t>(in.rank()))
    return ctx.error("axis out of range");
  int axis = static_cast<int>(op.getAxis());
  std::vector<Var> vars = axisVars(in.rank());
  Type t = ctx.resultStorage;
  Func scan = ctx.func("scan");
  define(scan, vars, cast(t, in.at(asExprs(vars))));
  RDom r(1, max(in.extent(axis) - 1, 0), ctx.base + "_r");
  ref(scan, withAt(vars, axis, r)) =
      call(scan, withAt(vars, axis, r - 1)) + cast(t, in.at(withAt(vars, axis, r)));
  Func out = ctx.func();
  define(out, vars, call(scan, asExprs(vars)));
  scan.compute_root();
  return out;
}

llvm::Expected<Func> buildReduction(KernelContext &ctx) {
  mlir::Operation *op = ctx.op;
  if (auto r = llvm::dyn_cast<ReduceSumOp>(op))
    return buildReduce(ctx, r.getAxis(), r.getKeepdim());
  if (auto r = llvm::dyn_cast<ReduceMeanOp>(op))
    return buildReduce(ctx, r.getAxis(), r.getKeepdim());
  if (auto r = llvm::dyn_cast<ReduceMaxOp>(op))
    return buildReduce(ctx, r.getAxis(), r.getKeepdim());
  if (auto s = llvm::dyn_cast<SoftmaxOp>(op))
    return buildSoftmax(ctx, s);
  if (auto ln = llvm::dyn_cast<LayerNormOp>(op))
    return buildNorm(ctx, /*rms=*/false, ln.getEpsilon().convertToDouble());
  if (auto rn = llvm::dyn_cast<RmsNormOp>(op))
    return buildNorm(ctx, /*rms=*/true, rn.getEpsilon().convertToDouble());
  if (auto a = llvm::dyn_cast<ArgmaxOp>(op))
    return buildArgmax(ctx, a);
  if (auto c = llvm::dyn_cast<CumsumOp>(op))
    return buildCumsum(ctx, c);
  if (auto k = llvm::dyn_cast<TopkOp>(op))
    return buildTopk(ctx, k);
  return ctx.error("not a reduction");
}

} // namespace tfc::codegen
