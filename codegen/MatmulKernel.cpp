//===- MatmulKernel.cpp - tfc.matmul as a Halide pipeline -----------------===//
//
// Batched matrix product `[..., M, K] x [..., K, N]` (`[..., N, K]` with
// transpose_b), batch dims broadcasting like tfc.add, fp32 accumulation.
//
// CPU schedule: a register-blocked micro-kernel in the style of BLIS/GotoBLAS.
//  - The result is cut into tiles of kTileN columns (3 AVX-512 vectors) by
//    kTileM rows. A tile's accumulators (`prod`, 24 vectors) live in
//    registers: prod is computed per tile, its loops unrolled, and its update
//    runs k outermost, so each k step loads 3 vectors of B, broadcasts 8
//    scalars of A and issues 24 FMAs.
//  - B is read per column panel of kTileN x K, one dense 192-byte row per
//    k. A weight comes in panels already (`packed_n`: tfc.pack_panels laid
//    it out once, in the weight prologue, as [ceil(N / kTileN), K, kTileN]
//    with a zero-padded last panel; passes/WeightLayout.cpp), and the
//    micro-kernel reads it as stored. Any other B (activations: Q @ K^T,
//    P @ V; hand-written IR) is copied per call into such a panel
//    (`bpack`), and a transposed one is transposed once per panel instead
//    of being gathered in the inner loop. All row tiles of a panel reuse it.
//    The copy was ~24 % of a linear at M = 32 (Transformer base).
//  - A is copied once per call (`apack`, [rows, K], in parallel tasks of
//    rows) where K is static: the tile's 8 rows of A then lie at constant
//    offsets (multiples of K) from one address, and each row broadcast is
//    one instruction with a constant displacement. Read where it lies
//    (clamped rows, a dynamic row stride), LLVM computed the 8 row
//    addresses with ~14 vector integer instructions per k step (the SLP
//    vectorizer's doing), next to the 24 FMAs: ~2 % of a BERT-size linear.
//  - On weight panels with a static K and at most kStreamRows rows (a
//    specialization of the tile's update; where the fp32 extern variant
//    below serves, as in process on AVX-512, it replaces this), K is read
//    in kKStreams parts side by side: iteration k takes step k of each
//    part (k, K/8 + k, 2K/8 + k, ...), so a panel is read as 8 sequential
//    streams, not one.
//    A row tile's sums are the same, added in another order. The first
//    row tile of a panel waits on the panel from DRAM, and the hardware's
//    stream prefetchers run only so far ahead of each stream: with 8 of
//    them the lines arrive ~8x as early. With more rows the panel is in
//    L2 for all but the first tile, and K in order is faster. On the
//    Emerald Rapids machine of session 12 (alternated): the Transformer
//    base at 32 tokens (4 row tiles per panel) 61.1 -> 49.1 ms at 1
//    thread, 27.6 -> 21.7 at 2, BERT-base b1 3-4 %; 4 parts measured as
//    8, 16 6 % slower than 8. (Halide 14's prefetch directive is no help:
//    PanelBlocks.h.)
//  - Panels are the parallel tasks. When B has no batch dims (a weight), the
//    batch loops run inside the panel loop so a panel is packed once for all
//    batches.
//  - Edges: a dimension known to be at least a tile is split with
//    ShiftInwards (the last tile overlaps the previous one: no guards). A
//    dynamic or short one is split with GuardWithIf, and the inputs are read
//    at clamped indices there, so the fixed-size tile (bound_extent) never
//    reads outside A or B; the clamps are loop invariant in the k loop.
//    Panels: a column tile is a panel; an N that is not a multiple of
//    kTileN is split with GuardWithIf (a shifted tile would straddle two
//    panels), and the last tile reads its panel's padding, no clamps.
//
// GEMV variant (CPU, a rank-2 B, i.e. a weight): when the rows of the result
// (M times the batch dims) are at most kGemvRows, as in a decode step, the
// 8-row tiles above would compute up to 7 rows for nothing and copy every
// weight panel once more. The kernel tests the rows at run time
// (Func::specialize on `rows <= kGemvRows`, so the same compiled kernel
// serves prefill and decode) and then streams each weight element once,
// for all rows at a time:
//  - Panels (`packed_n`, every weight weight-layout could lay out): one
//    task per panel; step k adds x[m, k] * panel[k, 0:48] to every result
//    row's 3 accumulator vectors: the panel, and the weight panel after
//    panel, is read front to back, one sequential stream.
//  - [K, N] weights: tasks of up to kGemvColumns columns (whole rows of B
//    for the models' weights). Step k adds x[m, k] * B[k, :] to every
//    result row's accumulator row (vectors of 16 columns, in L1 or L2): B
//    is read front to back, one sequential stream.
//  - [N, K] weights (transpose_b: an unpacked weight read as stored): tasks of
//    kGemvRowsPerTask rows of B, read one after another, each front to back;
//    each result element is a dot product over K in 32 lanes (two vectors,
//    two independent FMA chains per row of B; 16 lanes when K is a multiple
//    of 16 but not of 32), and the lanes are summed at the end.
//  At one result row (a decode step) a nested specialization on the
//  result's row extents being 1 makes the accumulators constant-size: LLVM
//  keeps them in registers across the k loop (the panel loop is 3
//  vfmadd231ps from memory per k). With more rows their extents are
//  dynamic and each k step loads and stores them.
//  One stream, not several read side by side: the weights lie in huge pages
//  (runtime/Tensor.h allocateBlock), where one core reads one stream faster
//  than 8 (bench/membw.c here: read ~30 GB/s, read8 ~25 GB/s; in 4 KiB
//  pages it was the other way round). GPT-2 small decode, past 128, one
//  thread: 8 streams 12.8 ms linear + 6.5 ms LM head, one stream 11.9 +
//  5.4 ms; even 2 rows side by side (3 KB apart) halved the speed.
// No bpack, no clamps: the loops run over the exact rows.
//
// Swapped variant (CPU, a rank-2 [N, K] B read with transpose_b that
// weight-layout left unpacked, e.g. one also read some other way; a tied
// LM head now reads panels, the embedding gathering from the same panels:
// the panel tile ran GPT-2's head ~11 % faster than this one, 88.5 against
// 99.2 ms at M = 128, docs/benchmarks.md): when A has at least kSwapTileM
// rows (a run-time test,
// Func::specialize), the roles of A and B in the register tile swap. The
// tile is kSwapTileN rows of B (columns of the result) by kSwapTileM rows
// of A (2 vectors): each k step broadcasts kSwapTileN elements of B, read
// from B's rows as stored (contiguous, each element once per call, no
// panel to pack), loads 2 vectors of A^T (`atrans`, [K, M], A transposed
// once per call) and issues 24 FMAs. The result tile is stored transposed
// (scalar stores, ~1 per 32 FMAs at K = 512). The tiled kernel would have
// to transpose B into its panels on every call, a gather per vector.
//
// bf16 variant (CPU, a bf16 B: a weight under `--dtype bf16`): the
// same register tile, on AVX512_BF16's `vdpbf16ps`, which adds the products
// of 16 pairs of bf16 to 16 f32 accumulators. K is taken in pairs:
//  - A is rounded to bf16 once per call (`apack`, [rows, K], all rows);
//  - B's panels hold the pairs (k, k + 1) of a column side by side,
//    (k / 2, n, k % 2), so that one 64-byte load holds the pairs of 16
//    columns: as laid out once by tfc.pack_panels (bf16-weights:
//    [ceil(N / kTileN), K / 2, kTileN, 2]), or, for an unpacked rank-2
//    [K, N] bf16 B, copied so per call (`bpack`);
//  - `prod`'s update runs over RDom (k % 2, k / 2) with the pair innermost,
//    atomic and vectorized with the 16 columns: a VectorReduce of 32 f32
//    products into 16 lanes, which Halide's x86 backend emits as vdpbf16ps
//    (target feature avx512_sapphirerapids) once the A operand reads as a
//    bf16 vector (KernelSupport.h: bf16DotProductLowering).
// On a CPU with AMX (KernelOptions::amxTiles, kernels run in this process
// only) a bf16 product on panels instead runs on the tile unit through the
// extern stage of AmxMatmul.h: A is rounded to bf16 once per call
// (`bf16_a`, parallel rows, as `apack` above), the result is cut into blocks
// of kExternBlockN columns (whole panels) by kExternBlockM rows, the
// columns' blocks are the parallel tasks, and each block is one extern call
// on the rounded rows, computed just before the epilogue reads it (in
// L1/L2).
// (Rounding A in each block instead cost ~10 % of a BERT-size product: A
// was rounded N / 96 times.) Where K is not a multiple of 32, or the CPU
// has no AMX (KernelOptions::bf16PanelStage: AVX512_BF16, e.g. AMD Zen 4
// and 5), the same blocks run PanelMatmul.h's bf16 stage instead: the fp32
// stage's tile and prefetch on vdpbf16ps, K even. On Zen 5, against the
// vdpbf16ps kernel, whole models: 1.15x at 32 rows (the Transformer base),
// 1.02x at 128, 0.976x at 8 x 128 (BERT-base b8), where the weights come
// from L3 anyway and the kernel's epilogue in its stores wins
// (docs/benchmarks.md, session 23). Where A broadcasts over the result's batch,
// the vdpbf16ps kernel serves. The GEMV variant reads the bf16 weight as it is
// (half the bytes; panels one after another) and widens it to f32 for the FMAs;
// A stays f32 there. On bf16 panels it accumulates the two members of each pair
// of K in separate lanes (32 lanes per 16 columns, one dense load per pair row)
// and adds them at the end: reading the pairs apart (a strided load per k)
// made GPT-2 bf16 decode ~20 % slower.
//
// fp32 extern variant (CPU with AVX-512F, KernelOptions::f32PanelStage,
// kernels run in this process only): an fp32 product on weight panels with
// a static K runs through the extern stage of PanelMatmul.h in the same
// blocks (one panel wide from a K that depends on the core's L2:
// onePanelFromK), on A's rows as the kernel's input holds them (a copy of A
// per call, as `apack`, cost BERT-base b8 2-5 % at 1 thread): the same register
// tile, K in order, plus software prefetches of the panels (prefetcht1, which
// Halide 14 cannot emit). It replaces the tile and its 8 parts of K there:
// BERT-base b1 ~14 % faster at 1 thread on Emerald Rapids (alternated), and
// GPT-2's cold compile shorter: no unrolled tile to lower (docs/benchmarks.md,
// session 13). The GEMV variant still serves up to kGemvRows rows. The stage
// takes K as an argument, and the GEMV on panels loops over K and one panel per
// task, so both serve a shape-generic copy of the op
// (PlanOptions::genericPanelProducts: K, the panel count and N read at run
// time), so that a layer's linears that differ only in K and N share one
// kernel.
//
// GPU schedule (GpuSchedules.cpp): a block per result tile, a register
// micro-tile per thread, A and B read through the L1 cache, the epilogue
// fused into the store; the batch as a third block dimension. Reads past
// the last row or column are clamped (apack, bpack) so that whole tiles are
// read. The GEMV specialization (rows <= kGemvRows, as on the CPU; panels
// or a [K, N] weight, static K a multiple of gpu::kGemvSlices) serves a
// decode step there too: a block per gpu::kGemvColumns columns of one row,
// K split across the block's threads, B's columns clamped at N (GPT-2 small
// decode on an H200: 19.7 -> 4.2 ms, docs/cuda.md).
//
//===----------------------------------------------------------------------===//

#include "codegen/AmxMatmul.h"
#include "codegen/GpuSchedules.h"
#include "codegen/KernelSupport.h"
#include "codegen/PanelMatmul.h"

#include "ir/TfcOps.h"

#include <algorithm>
#include <functional>
#include <optional>
#include <utility>

using namespace Halide;
using namespace tfc::codegen::detail;

namespace tfc::codegen {

namespace {
/// Micro-kernel tile: 3 x 16 lanes by 8 rows = 24 accumulator registers of
/// the 32 AVX-512 has, leaving room for the 3 B vectors and a broadcast.
constexpr int kTileN = static_cast<int>(mlir::tfc::kPanelColumns);
constexpr int kTileM = 8;

/// GEMV variant (see the file comment): at most this many result rows.
constexpr int kGemvRows = 8;
/// [K, N] weights: columns per task, and rows of B per accumulator update.
/// Whole rows for every weight of the models: a task then reads B from
/// start to end (GPT-2 decode, 1 thread: 4096 columns ~20 % less time than
/// 256, whose tasks read 1 KB of every row).
constexpr int kGemvColumns = 4096;
/// [N, K] weights: rows of B per task.
constexpr int kGemvRowsPerTask = 256;

/// How the GEMV variant of one matmul runs, if it has one.
struct GemvPlan {
  /// Columns of the result per task ([K, N]: a multiple of the vector;
  /// panels: one panel).
  int columns = 0;
  bool transposeB = false;
  /// B is in column panels (tfc.pack_panels); `tailN` splits N into them.
  bool packed = false;
  /// bf16 panels: pairs of K side by side, accumulated per pair member.
  bool pairs = false;
  /// [N, K]: partial dot products per result element, over k = dotLanes *
  /// ko + lane: two vectors where K allows (two independent FMA chains per
  /// row of B: half the latency of one), else one.
  int dotLanes = kVectorLanes;
  TailStrategy tailN = TailStrategy::ShiftInwards;
};

/// The GEMV plan for a matmul on panels, or on a rank-2 B with static K and
/// N (on the GPU: a static K), or none (then the tiled kernel serves every
/// M).
std::optional<GemvPlan> planGemv(const KernelContext &ctx, const TensorInput &b,
                                 bool transposeB, bool packed,
                                 TailStrategy tailN,
                                 std::optional<int64_t> staticN,
                                 std::optional<int64_t> staticK) {
  GemvPlan plan;
  if (ctx.gpu()) {
    // Rows of B read across threads (panels, or [K, N]: never transposed),
    // K in whole steps of the threads' slices.
    if (!staticK || *staticK % gpu::kGemvSlices != 0 ||
        b.elementType.isBF16() || (!packed && (transposeB || b.rank() != 2)))
      return std::nullopt;
    plan.packed = packed;
    return plan;
  }
  // Panels: one task per panel, K a loop bound; both may be read at run
  // time (a shape-generic kernel, plan/PlanBuilder.cpp).
  if (!packed && (!staticN || !staticK))
    return std::nullopt;
  plan.transposeB = transposeB;
  if (packed) {
    plan.packed = true;
    plan.pairs = b.elementType.isBF16();
    plan.columns = kTileN;
    plan.tailN = tailN;
    return plan;
  }
  if (b.rank() != 2)
    return std::nullopt;
  if (transposeB) {
    if (*staticK % kVectorLanes != 0)
      return std::nullopt;
    if (*staticK % (2 * kVectorLanes) == 0)
      plan.dotLanes = 2 * kVectorLanes;
    plan.columns =
        static_cast<int>(std::min<int64_t>(kGemvRowsPerTask, *staticN));
    return plan;
  }
  if (*staticN < kVectorLanes)
    return std::nullopt;
  int64_t columns = std::min<int64_t>(kGemvColumns, *staticN);
  plan.columns = static_cast<int>(columns - columns % kVectorLanes);
  return plan;
}
} // namespace

namespace {
/// The run-time test of the GEMV variant: the rows of the result (every axis
/// of `a` but K) are at most kGemvRows. Constant when `a` is static.
Expr gemvCondition(const TensorInput &a) {
  Expr rows = 1;
  for (int axis = 0; axis < a.rank() - 1; ++axis)
    rows = rows * a.extent(axis);
  return Internal::simplify(rows <= kGemvRows);
}

/// The GEMV variant's Funcs: `acc` accumulates (over (..., m, n) for [K, N];
/// over (..., m, n, lane) for [N, K]) and `value` is the product at the
/// result's vars.
struct GemvFuncs {
  Func acc;
  RDom k;
  Expr value;
};

/// Defines the GEMV variant of `a` x `b` (b of rank 2, K = `kExtent`).
GemvFuncs defineGemv(const KernelContext &ctx, const TensorInput &a,
                     const TensorInput &b, const std::vector<Var> &vars,
                     const GemvPlan &plan, Expr kExtent,
                     const std::function<Expr(Expr, Expr)> &bAt) {
  int rank = static_cast<int>(vars.size());
  Var n = vars[rank - 1], m = vars[rank - 2];
  std::vector<Expr> aIdx;
  for (int axis = 0; axis < rank - 2; ++axis)
    aIdx.push_back(a.shape[axis] == 1 ? Expr(0) : Expr(vars[axis]));
  aIdx.push_back(m);
  GemvFuncs g;
  g.acc = ctx.func("gemv");
  if (plan.pairs) {
    // acc(..., m, n, ki) sums the products of k = 2 ko + ki: per ko, one
    // dense load of a panel row's 16 x 2 bf16 feeds 32 lanes; the two
    // halves are added at the end.
    Var ki("gemv_ki");
    std::vector<Var> pairVars = vars;
    pairVars.push_back(ki);
    g.k = RDom(0, kExtent / 2, ctx.base + "_gk");
    define(g.acc, pairVars, 0.0f);
    aIdx.push_back(2 * g.k + ki);
    ref(g.acc, asExprs(pairVars)) +=
        a.at(aIdx) * cast<float>(b.at({Expr(n) / kTileN, Expr(g.k),
                                       Expr(n) % kTileN, Expr(ki)}));
    std::vector<Expr> even = asExprs(vars), odd = asExprs(vars);
    even.push_back(0);
    odd.push_back(1);
    g.value = call(g.acc, even) + call(g.acc, odd);
    return g;
  }
  if (!plan.transposeB) {
    g.k = RDom(0, kExtent, ctx.base + "_gk");
    define(g.acc, vars, 0.0f);
    aIdx.push_back(g.k);
    ref(g.acc, asExprs(vars)) += a.at(aIdx) * cast<float>(bAt(g.k, n));
    g.value = call(g.acc, asExprs(vars));
    return g;
  }
  // plan.dotLanes partial dot products per element, over
  // k = plan.dotLanes ko + lane.
  Var lane("lane");
  std::vector<Var> laneVars = vars;
  laneVars.push_back(lane);
  g.k = RDom(0, kExtent / plan.dotLanes, ctx.base + "_gk");
  Expr kIdx = g.k * plan.dotLanes + lane;
  define(g.acc, laneVars, 0.0f);
  aIdx.push_back(kIdx);
  ref(g.acc, asExprs(laneVars)) +=
      a.at(aIdx) * cast<float>(b.at({Expr(n), kIdx}));
  // The lanes' sum, as a balanced tree of adds.
  std::vector<Expr> terms;
  for (int l = 0; l < plan.dotLanes; ++l) {
    std::vector<Expr> idx = asExprs(vars);
    idx.push_back(l);
    terms.push_back(call(g.acc, idx));
  }
  while (terms.size() > 1) {
    std::vector<Expr> next;
    for (size_t i = 0; i + 1 < terms.size(); i += 2)
      next.push_back(terms[i] + terms[i + 1]);
    terms = std::move(next);
  }
  g.value = terms[0];
  return g;
}

/// The result has one row (every axis of `out` but the last has extent 1):
/// in a specialization on it the accumulators' extents are constants, so
/// they are kept in registers across the k loop, not loaded and stored per
/// step.
Expr oneResultRow(Func out, int rank) {
  Expr one = Internal::const_true();
  // Halide's dimension 0 is the last axis (the columns).
  for (int dim = 1; dim < rank; ++dim)
    one = one && out.output_buffer().dim(dim).extent() == 1;
  return one;
}

/// Schedules the GEMV variant on `stage` (the output `out` itself, or its
/// specialization for few rows). See the file comment.
void scheduleGemv(const KernelContext &ctx, Func out, Stage stage, GemvFuncs &g,
                  const std::vector<Var> &vars, const GemvPlan &plan) {
  if (ctx.gpu()) {
    gpu::scheduleGemv({out, stage, g.acc, g.k, vars});
    return;
  }
  int rank = static_cast<int>(vars.size());
  Var n = vars[rank - 1], m = vars[rank - 2];
  Var task("gemv_task"), col("gemv_col");
  stage.split(n, task, col, plan.columns, plan.tailN);
  // Loops, innermost first: the columns of a task, the rows, the batch.
  auto order = [&](std::vector<VarOrRVar> inner) {
    inner.push_back(m);
    for (int axis = rank - 3; axis >= 0; --axis)
      inner.push_back(vars[axis]);
    inner.push_back(task);
    return inner;
  };
  if (plan.packed) {
    // One panel per task, read front to back once: per k, its 3 vectors
    // for every result row, the rows' accumulators in registers. On bf16
    // pairs the accumulators have a pair-member axis (ki, 2 lanes) too.
    stage.vectorize(col, kVectorLanes).reorder(order({col})).parallel(task);
    std::optional<Var> ki;
    if (plan.pairs)
      ki = g.acc.args()[0];
    g.acc.compute_at(out, task).bound_extent(n, kTileN);
    if (ki)
      g.acc.bound_extent(*ki, 2).vectorize(*ki);
    g.acc.vectorize(n, kVectorLanes).unroll(n);
    Var vo("gemv_vo"), vi("gemv_vi");
    std::vector<VarOrRVar> updateOrder = {vi, vo, m};
    if (ki)
      updateOrder.insert(updateOrder.begin(), *ki);
    for (int axis = rank - 3; axis >= 0; --axis)
      updateOrder.push_back(vars[axis]);
    updateOrder.push_back(g.k);
    Stage update = g.acc.update();
    update.split(n, vo, vi, kVectorLanes).reorder(updateOrder);
    if (ki)
      update.vectorize(*ki);
    update.vectorize(vi).unroll(vo);
    stage.specialize(oneResultRow(out, rank));
    return;
  }
  if (!plan.transposeB) {
    stage.vectorize(col, kVectorLanes).reorder(order({col})).parallel(task);
    g.acc.compute_at(out, task)
        .bound_extent(n, plan.columns)
        .vectorize(n, kVectorLanes);
    // One row of B (k) at a time, for every result row.
    Var vo("gemv_vo"), vi("gemv_vi");
    std::vector<VarOrRVar> updateOrder = {vi, vo, m};
    for (int axis = rank - 3; axis >= 0; --axis)
      updateOrder.push_back(vars[axis]);
    updateOrder.push_back(g.k);
    g.acc.update()
        .split(n, vo, vi, kVectorLanes, TailStrategy::GuardWithIf)
        .reorder(updateOrder)
        .vectorize(vi);
    return;
  }
  // [N, K]: the task's rows of B one after another, each for every result
  // row, its 16 lanes in registers. The lanes of 16 results are summed at
  // once (vectors over the results: a 16 x 16 block of the accumulators),
  // not one result at a time.
  stage.reorder(order({col})).parallel(task);
  if (plan.columns % kVectorLanes == 0)
    stage.vectorize(col, kVectorLanes);
  Var lane = g.acc.args()[0];
  g.acc.compute_at(out, task)
      .bound_extent(lane, plan.dotLanes)
      .bound_extent(n, plan.columns)
      .vectorize(lane);
  std::vector<VarOrRVar> updateOrder = {lane, g.k, m};
  for (int axis = rank - 3; axis >= 0; --axis)
    updateOrder.push_back(vars[axis]);
  updateOrder.push_back(n);
  g.acc.update().reorder(updateOrder).vectorize(lane);
  stage.specialize(oneResultRow(out, rank));
}

/// The tiled kernel's Funcs: A (clamped rows; stored where K is static), B's
/// panels and the register tile's product.
struct TiledFuncs {
  Func apack, bpack, prod;
  RDom k;
  std::optional<int64_t> staticK;
  bool transposeB = false;
  /// B is in column panels: the CPU kernel reads it as stored (bpack
  /// inline; bf16: no bpack).
  bool packed = false;
  /// Defined where `k` is (step within a part, part) (streamsOfK): the
  /// parts are read side by side where it holds, one after another (K in
  /// order) elsewhere.
  Expr streamWhen;
};

/// The fp32 tile reads its panel of B in kKStreams parts of K side by side
/// (see the file comment) where B is a weight in panels with a static K of
/// at least kKStreamMin steps per part (streamsOfK).
constexpr int kKStreams = 8;
constexpr int kKStreamMin = 32;
/// Rows up to which the parts are read side by side (a specialization of
/// the tile's update): with more row tiles per panel, the panel is in L2
/// for all but the first, and K in order reads it faster (BERT's FFN chain
/// at 1 thread, alternated: parts side by side 17 % faster at M = 64, 1-4 %
/// at 128, 9 % slower at 256 and 512, 10-15 % at 1024).
constexpr int kStreamRows = 128;

/// How many parts of K the fp32 tile reads side by side: kKStreams or 1.
int streamsOfK(const KernelContext &ctx, bool packed, bool bf16,
               std::optional<int64_t> staticK) {
  if (ctx.gpu() || !packed || bf16 || !staticK ||
      *staticK % kKStreams != 0 || *staticK / kKStreams < kKStreamMin)
    return 1;
  return kKStreams;
}

/// The run-time test of the streamed order: the result has at most
/// kStreamRows rows (A's rows times its batch dims). Constant when A is
/// static.
Expr streamRows(const TensorInput &a) {
  Expr rows = 1;
  for (int axis = 0; axis < a.rank() - 1; ++axis)
    rows = rows * a.extent(axis);
  return Internal::simplify(rows <= kStreamRows);
}

/// The register tile's loops on `out` (see the file comment): panels of
/// kTileN columns outermost, tiles of kTileM rows, the tile vectorized and
/// unrolled. `batchesInPanel`: one B for all batches, so the batch loops run
/// inside the panel loop (each panel is packed once). Returns the panel and
/// row-tile vars.
std::pair<Var, Var> tileLoops(Func out, const std::vector<Var> &vars,
                              TailStrategy tailN, TailStrategy tailM,
                              bool longEpilogue, bool batchesInPanel) {
  int rank = static_cast<int>(vars.size());
  Var n = vars[rank - 1], m = vars[rank - 2];
  Var no("no"), mo("mo"), ni("ni"), mi("mi");
  out.split(n, no, ni, kTileN, tailN)
      .split(m, mo, mi, kTileM, tailM)
      .reorder(ni, mi, mo, no)
      .vectorize(ni, kVectorLanes)
      .unroll(ni);
  // A long epilogue (GELU, SiLU) unrolled over all 24 vectors of the tile
  // spills registers all over the tile's store; a loop over its rows runs
  // it from registers.
  if (!longEpilogue)
    out.unroll(mi);
  if (batchesInPanel && rank > 2) {
    std::vector<VarOrRVar> order = {ni, mi, mo};
    for (int axis = rank - 3; axis >= 0; --axis)
      order.push_back(vars[axis]);
    order.push_back(no);
    out.reorder(order);
  }
  return {no, mo};
}

/// The register tile `prod` at the row tile `mo` of `out`, in registers.
Stage scheduleTileProd(Func prod, Func out, Var mo,
                       const std::vector<Var> &vars) {
  int rank = static_cast<int>(vars.size());
  Var n = vars[rank - 1], m = vars[rank - 2];
  prod.compute_at(out, mo)
      .bound_extent(n, kTileN)
      .bound_extent(m, kTileM)
      .vectorize(n, kVectorLanes)
      .unroll(n)
      .unroll(m);
  return prod.update();
}

/// A's elements as a Func over the result's last rank(a) vars: (batch...,
/// m, k), or (batch..., k, m) with `rowsInner`; a static-1 batch dim reads
/// index 0, rows are clamped into A where `guardM`, elements cast to `type`.
Func defineA(const KernelContext &ctx, const std::string &name,
             const TensorInput &a, const std::vector<Var> &vars, bool guardM,
             bool rowsInner, Type type) {
  int rank = static_cast<int>(vars.size());
  int ra = a.rank();
  Var m = vars[rank - 2], kv("kv");
  std::vector<Var> aVars(vars.end() - ra, vars.end() - 2);
  std::vector<Expr> aIdx = asExprs(aVars);
  for (int axis = 0; axis < ra - 2; ++axis)
    if (a.shape[axis] == 1)
      aIdx[axis] = 0;
  aIdx.push_back(guardM ? clamp(Expr(m), 0, a.extent(ra - 2) - 1) : Expr(m));
  aIdx.push_back(kv);
  aVars.push_back(rowsInner ? kv : m);
  aVars.push_back(rowsInner ? m : kv);
  Func f = ctx.func(name);
  define(f, aVars, cast(type, a.at(aIdx)));
  return f;
}

/// Stores `t.apack` once per call (rows of a static K, in parallel tasks of
/// rows), so that the register tile reads its rows of A at constant offsets
/// from one address (see the file comment).
void packARows(TiledFuncs &t) {
  std::vector<Var> aVars = t.apack.args(); // Halide order: k, m, batch...
  std::vector<Var> rows(aVars.begin() + 1, aVars.end());
  t.apack.compute_root().vectorize(aVars[0], kVectorLanes,
                                   TailStrategy::GuardWithIf);
  parallelRows(t.apack, rows, rowsPerTask(t.staticK));
}

/// The schedule of the tiled kernel (see the file comment) on `out`, which
/// reads `t.prod` through the epilogue.
void scheduleTiled(const KernelContext &ctx, Func out, TiledFuncs &t,
                   const std::vector<Var> &vars, TailStrategy tailN,
                   TailStrategy tailM, bool bHasBatch, bool longEpilogue) {
  int rank = static_cast<int>(vars.size());
  Var n = vars[rank - 1], m = vars[rank - 2];
  std::vector<Var> batchVars(vars.begin(), vars.end() - 2);
  Func bpack = t.bpack, prod = t.prod;
  RDom k = t.k;
  if (ctx.gpu()) {
    gpu::scheduleMatmul(
        {out, prod, t.apack, bpack, k, vars, t.transposeB, t.staticK});
    return;
  }

  auto [no, mo] =
      tileLoops(out, vars, tailN, tailM, longEpilogue, !bHasBatch);
  Var task = no;
  if (!batchVars.empty() && bHasBatch) {
    // Each (batch, panel) is a task with its own B.
    std::vector<Var> innerToOuter = {no};
    innerToOuter.insert(innerToOuter.end(), batchVars.rbegin(),
                        batchVars.rend());
    task = fuseAll(out, innerToOuter, "task");
  }
  out.parallel(task);

  if (t.staticK)
    packARows(t);

  if (!t.packed)
    bpack.compute_at(out, task)
        .bound_extent(n, kTileN)
        .vectorize(n, kVectorLanes)
        .unroll(n);

  Stage update = scheduleTileProd(prod, out, mo, vars);
  auto tile = [&](Stage s) {
    s.vectorize(n, kVectorLanes).unroll(n).unroll(m);
  };
  if (!t.streamWhen.defined()) {
    tile(update.reorder(n, m, k));
    return;
  }
  // Few rows: the parts side by side; else one after another, i.e. K in
  // order.
  if (!Internal::is_const_zero(t.streamWhen))
    tile(update.specialize(t.streamWhen)
             .reorder(n, m, k.y, k.x)
             .unroll(k.y));
  if (!Internal::is_const_one(t.streamWhen))
    tile(update.reorder(n, m, k.x, k.y));
}
} // namespace

namespace {
/// The tiled kernel's Funcs for a bf16 weight `b` (rank 2, even static K;
/// see the file comment). `batchIdx` gives A's batch indices.
TiledFuncs defineTiledBf16(const KernelContext &ctx, const TensorInput &a,
                           const TensorInput &b, const std::vector<Var> &vars,
                           bool transposeB, bool packed, int k, bool guardN,
                           bool guardM, const std::vector<Expr> &batchIdx) {
  int rank = static_cast<int>(vars.size());
  Var n = vars[rank - 1], m = vars[rank - 2];
  TiledFuncs t;
  t.transposeB = transposeB;
  t.packed = packed;
  t.staticK = k;
  // apack(batch..., m, k) = bf16(A[batch..., m, k]), rows clamped.
  t.apack = defineA(ctx, "apack", a, vars, guardM, /*rowsInner=*/false,
                    BFloat(16));
  // bpack(ko, n, ki) = B[2 ko + ki, n]: pairs of K innermost. Written as a
  // select of two rows so that it vectorizes as two dense row loads and a
  // shuffle (B[2 ko + ki, n] vectorized over ki and n is a gather of 16-bit
  // elements, for which LLVM's sapphirerapids target uses AVX512-FP16's
  // vmovw, which Zen 4 lacks).
  // Panels (packed) are read as stored: the pairs of 16 columns are one
  // 64-byte load already.
  if (!packed) {
    t.bpack = ctx.func("bpack");
    Var ko("ko"), ki("ki");
    Expr nIdx = guardN ? clamp(Expr(n), 0, b.extent(1) - 1) : Expr(n);
    define(t.bpack, {ko, n, ki},
           select(ki == 0, b.at({2 * ko, nIdx}), b.at({2 * ko + 1, nIdx})));
  }
  t.prod = ctx.func("prod");
  t.k = RDom(0, 2, 0, k / 2, ctx.base + "_k");
  RVar ki = t.k.x, ko = t.k.y;
  define(t.prod, vars, 0.0f);
  std::vector<Expr> aIdx = batchIdx;
  aIdx.push_back(m);
  aIdx.push_back(2 * ko + ki);
  Expr bValue = packed ? b.at({Expr(n) / kTileN, Expr(ko), Expr(n) % kTileN,
                               Expr(ki)})
                       : call(t.bpack, {Expr(ko), Expr(n), Expr(ki)});
  ref(t.prod, asExprs(vars)) +=
      cast<float>(call(t.apack, aIdx)) * cast<float>(bValue);
  return t;
}

/// The schedule of the bf16 tiled kernel on `out` (see the file comment):
/// the fp32 kernel's loops, with the pair of K vectorized with the columns.
void scheduleTiledBf16(Func out, TiledFuncs &t, const std::vector<Var> &vars,
                       TailStrategy tailN, TailStrategy tailM,
                       bool longEpilogue) {
  int rank = static_cast<int>(vars.size());
  Var n = vars[rank - 1], m = vars[rank - 2];
  // One weight for all batches: each panel is packed once.
  auto [no, mo] = tileLoops(out, vars, tailN, tailM, longEpilogue,
                            /*batchesInPanel=*/true);
  out.parallel(no);

  // A in bf16, once per call, in parallel rows.
  packARows(t);

  if (t.bpack.defined()) {
    std::vector<Var> bVars = t.bpack.args(); // ki, n, ko
    t.bpack.compute_at(out, no)
        .bound_extent(bVars[0], 2)
        .bound_extent(bVars[1], kTileN)
        .vectorize(bVars[0])
        .vectorize(bVars[1], kVectorLanes)
        .unroll(bVars[1]);
  }

  RVar ki = t.k.x, ko = t.k.y;
  Var nv("nv"), nvi("nvi");
  scheduleTileProd(t.prod, out, mo, vars)
      .split(n, nv, nvi, kVectorLanes)
      .reorder(ki, nvi, nv, m, ko)
      .atomic()
      .vectorize(ki)
      .vectorize(nvi)
      .unroll(nv)
      .unroll(m);
}

/// Why `b` cannot be the column panels (tfc.pack_panels) of the result's N
/// columns of a matmul built for `ctx`, if it can't. f32 panels may have a
/// dynamic K and panel count (a shape-generic kernel); then the kernel's
/// bounds checks refuse panels that do not cover the result at run time.
llvm::Error checkPanels(const KernelContext &ctx, const TensorInput &b) {
  bool bf16 = b.elementType.isBF16();
  std::optional<int64_t> n = ctx.resultStaticExtent(ctx.resultRank() - 1);
  bool generic = !bf16 && b.rank() == 3 && b.staticExtent(2) == kTileN;
  for (int axis = 0; axis < b.rank(); ++axis)
    if (!b.staticExtent(axis) && !generic)
      return ctx.error("a packed rhs must have a static shape (f32 panels: "
                       "a static panel width)");
  if (n && b.staticExtent(0) && b.staticExtent(1)) {
    int64_t k = *b.staticExtent(1) * (bf16 ? 2 : 1);
    std::vector<int64_t> shape(b.shape.begin(), b.shape.end());
    llvm::SmallVector<int64_t> expected =
        mlir::tfc::panelShape(k, *n, b.elementType);
    if (shape != std::vector<int64_t>(expected.begin(), expected.end()))
      return ctx.error("the rhs is not a panel layout (tfc.pack_panels) of " +
                       llvm::Twine(*n) + " columns");
  }
  if (bf16 && !n)
    return ctx.error("bf16 panels need a static N");
  if (bf16 && ctx.gpu())
    return ctx.error("bf16 weights (--dtype bf16) run on the CPU only");
  if (bf16 && !supportsBf16Products(ctx.target))
    return ctx.error("bf16 weights (--dtype bf16) need a CPU with "
                     "AVX512_BF16; the target is " +
                     ctx.target.to_string());
  return llvm::Error::success();
}

/// Declares the strides of a dense `b` (panels, which the prologue
/// allocates), so that the kernel's offsets into it are constants (or, past
/// a dynamic extent, one product) and a stride-2 load of bf16 pairs is a
/// dense load and a shuffle.
void setDenseStrides(TensorInput &b) {
  Expr stride = 1;
  for (int axis = b.rank() - 1; axis >= 0; --axis) {
    b.param.dim(b.hdim(axis)).set_stride(stride);
    stride = Internal::simplify(stride * b.extent(axis));
  }
}

/// Why `b` cannot be a bf16 weight of a matmul built for `ctx`, if it can't.
llvm::Error checkBf16Weight(const KernelContext &ctx, const TensorInput &b,
                            bool transposeB) {
  if (ctx.gpu())
    return ctx.error("bf16 weights (--dtype bf16) run on the CPU only");
  if (!supportsBf16Products(ctx.target))
    return ctx.error("bf16 weights (--dtype bf16) need a CPU with "
                     "AVX512_BF16; the target is " +
                     ctx.target.to_string());
  // A whole column tile: a narrower one would read B at clamped columns,
  // a gather of 16-bit elements (AVX512-FP16 vmovw, see bpack).
  std::optional<int64_t> k = b.staticExtent(0);
  std::optional<int64_t> n = b.rank() == 2 ? b.staticExtent(1) : std::nullopt;
  if (b.rank() != 2 || transposeB || !k || *k % 2 != 0 || !n ||
      *n < kTileN)
    return ctx.error("a bf16 rhs must be a rank-2 [K, N] weight (no "
                     "transpose_b) with a static, even K and a static N >= " +
                     llvm::Twine(kTileN));
  return llvm::Error::success();
}
} // namespace

namespace {
/// Extern stages' blocks (see the file comment): two panels by up to 128
/// rows; the panel stages' hold one panel from onePanelFromK on.
constexpr int kExternBlockN = 2 * kTileN;
constexpr int kExternBlockM = 128;
/// A per-core L2 the panel stages' blocks are sized for where the options
/// do not say (KernelOptions::panelL2Bytes): Emerald Rapids', where the
/// rule below was first measured.
constexpr int64_t kDefaultPanelL2Bytes = int64_t(2) << 20;

/// The extern stages that compute a product on panels, in place of the
/// kernel's own tile.
enum class ExternProduct { None, AmxBf16, PanelBf16, PanelF32 };

/// Which extern stage serves `a` x `b` (panels), if the options allow one:
/// A must have the result's rank and no batch dim it broadcasts; AMX needs a
/// static K, a multiple of the tiles' 32, else the bf16 panel stage serves
/// bf16 where allowed (a static, even K); the fp32 stage takes K at run
/// time.
ExternProduct externProduct(const KernelContext &ctx, const TensorInput &a,
                            bool packed, bool bf16,
                            std::optional<int64_t> staticK) {
  if (ctx.gpu() || !packed || a.rank() != ctx.resultRank())
    return ExternProduct::None;
  for (int axis = 0; axis < a.rank() - 2; ++axis)
    if (a.shape[axis] == 1 && ctx.resultType.getShape()[axis] != 1)
      return ExternProduct::None;
  if (bf16) {
    if (ctx.options.amxTiles && staticK && *staticK % 32 == 0)
      return ExternProduct::AmxBf16;
    return ctx.options.bf16PanelStage && staticK && *staticK % 2 == 0
               ? ExternProduct::PanelBf16
               : ExternProduct::None;
  }
  return ctx.options.f32PanelStage ? ExternProduct::PanelF32
                                   : ExternProduct::None;
}

/// The product as the extern stage `which` (AmxMatmul.h, PanelMatmul.h),
/// over the result's axis-ordered `vars`, reading `a`: A with dense rows of K
/// (the bf16 stages' copy, stored once per call, or the fp32 stage's input
/// itself: each block reads all of K). `k` and `n` as the stage takes
/// them (constants, or read at run time); `rowsOuter`: whether the blocks run
/// with the row blocks outermost (rowsOuterBlocks), which the stage's
/// prefetch needs to know; `prefetchA`: whether the panel stages' tiles
/// prefetch their rows of A (prefetchRowsOfA; the AMX stage takes no such
/// argument).
Func defineExternProduct(const KernelContext &ctx, ExternProduct which,
                         ExternFuncArgument a, const TensorInput &b,
                         const std::vector<Var> &vars, Expr k, Expr n,
                         const Func &result, const Expr &rowsOuter,
                         const Expr &prefetchA) {
  bool amx = which == ExternProduct::AmxBf16;
  const char *symbol = amx ? kAmxMatmulSymbol
                       : which == ExternProduct::PanelBf16
                           ? kBf16PanelMatmulSymbol
                           : kPanelMatmulSymbol;
  Func prod = ctx.func(amx ? "amx" : "panel");
  // `result`, the kernel's output (buildMatmulWithEpilogue's callers return
  // it as the pipeline), as a handle to its halide_buffer_t, which Halide
  // names "<name>.buffer" (its name as created: Halide may have made it
  // unique): the stage prefetches its block's lines of it for the epilogue
  // (PanelBlocks.h).
  Expr resultBuffer =
      Internal::Variable::make(Handle(), result.name() + ".buffer");
  std::vector<ExternFuncArgument> args = {
      a, b.param, k, n, resultBuffer, cast<int32_t>(rowsOuter)};
  if (!amx)
    args.push_back(cast<int32_t>(prefetchA));
  prod.define_extern(symbol, args, Float(32),
                     std::vector<Var>(vars.rbegin(), vars.rend()));
  return prod;
}

/// From which K the panel stage `stage` (fp32 or bf16) computes blocks one
/// panel wide, for a per-core L2 of `l2Bytes`: where a block of two panels,
/// its kExternBlockM rows of A and the next block's two panels (prefetched
/// during it) would take more than half of L2. Measured (docs/benchmarks.md,
/// "Session 20", "Session 23" and "Session 24"):
/// - Emerald Rapids, 2 MiB (from K = 820): one panel 4-5 % faster at K =
///   2048 and 3072, 1-2 % at 1024; two panels 0-4 % faster at K = 768 (C
///   harness);
/// - Zen 5, 1 MiB (fp32 from K = 410, bf16 from 820): fp32 one panel at K =
///   768 (the rows of BERT-base b8 still outermost), two alternated runs
///   against two panels: BERT-base b1 1.003-1.014 at 1 thread, 0.994-1.011
///   at 2; b8 1.003-1.010, 1.002-1.021; GPT-2 prefill 0.999-1.000,
///   1.008-1.020; the Transformer base (K = 512) 1.012, 1.028 (at 2 threads
///   a loop's last block, which the other thread may wait for, is half as
///   long); bf16 one panel 1.5-3 % faster at K = 3072, 3-5 % slower at K =
///   768.
int64_t onePanelFromK(ExternProduct stage, int64_t l2Bytes) {
  int64_t elemBytes = stage == ExternProduct::PanelBf16 ? 2 : 4;
  int64_t perK = elemBytes * (kExternBlockM + 2 * kExternBlockN);
  return std::min<int64_t>(l2Bytes / 2 / perK + 1, INT32_MAX);
}

/// The columns of one of `stage`'s blocks for a product over `k`: whole
/// panels (kExternBlockN, or one panel for the fp32 and bf16 panel stages
/// from onePanelFromK on; a constant where K is).
Expr externBlockN(ExternProduct stage, const Expr &k, int64_t l2Bytes) {
  if (stage != ExternProduct::PanelF32 && stage != ExternProduct::PanelBf16)
    return kExternBlockN;
  Expr onePanel = static_cast<int>(onePanelFromK(stage, l2Bytes));
  return Internal::simplify(select(k >= onePanel, kTileN, kExternBlockN));
}

/// The extern blocks run with the row blocks outermost where A (counted in
/// floats) is larger than the core's L2, each batch entry has at least
/// kExternBlockM rows, and K is below kRowsOuterBelowK.
/// A block's 128 rows of A then stay in L2 while the columns' blocks stream
/// the panels (from L3 after the first row block). With the columns
/// outermost, each column block reads all of A again, which at BERT b8 (3
/// MiB of A) comes from L3: 81-82 % of the FMA peak against 86-88 %
/// (bench/tile_levels.cpp); `bench/micro/linear.tfm` at M = 1024, K = 768:
/// 4-5 % faster, fp32 and bf16 (docs/benchmarks.md, "Session 21"); on Zen 5
/// with one-panel blocks, BERT-base b8 1.3 % faster at 1 thread (Session
/// 24). Not:
/// - with fewer rows per entry: every entry would stream every panel again
///   (64 rows x 16 entries: 2 % slower);
/// - where A fits L2 (Emerald Rapids, 2 MiB: M = 256 1 % slower, 512
///   level). On Zen 5 (1 MiB), rows outermost from A > 1 MiB instead of 2:
///   BERT-base b3 and b4 1.022 / 1.001 at 1 thread, 1.010 / 1.020 at 2
///   (10 x 2 alternated);
/// - from K = 1024 on (Emerald Rapids), where 128 rows of A (1.5 MB at K =
///   3072) and the panels no longer fit L2 together (3 % slower).
constexpr int kRowsOuterBelowK = 1024;

/// The elements of `a` (its rows of K = `k`, all batch entries) a product
/// reads, as an Int(64) Expr.
Expr elementsOfA(const TensorInput &a, const Expr &k) {
  Expr elements = cast<int64_t>(k);
  for (int axis = 0; axis < a.rank() - 1; ++axis)
    elements *= cast<int64_t>(a.extent(axis));
  return elements;
}

/// Whether the product of `a` (with the result's rank and batch dims:
/// externProduct) over K = `k` runs with the row blocks outermost, for a
/// per-core L2 of `l2Bytes` (A counted in floats).
Expr rowsOuterBlocks(const TensorInput &a, const Expr &k, int64_t l2Bytes) {
  return Internal::simplify(
      k < kRowsOuterBelowK && a.extent(a.rank() - 2) >= kExternBlockM &&
      elementsOfA(a, k) > Internal::make_const(Int(64), l2Bytes / 4));
}

/// From how many times the per-core L2 the panel stages' tiles prefetch
/// their rows of A (prefetchRowsOfA). On Zen 5 (1 MiB L2), BERT-base b8's
/// FFN down-projection (A 12 MiB, columns outermost) went from 86 to 91 % of
/// the FMA peak, while at b1 (A 1.5 MiB) the prefetch cost 1-1.5 %
/// (docs/benchmarks.md, "Session 25").
constexpr int64_t kPrefetchAFromL2s = 4;

/// Whether the panel stages' tiles prefetch their rows of A (`elemBytes`
/// each; PanelMatmul.cpp): where each column block streams all of A (the
/// columns outermost) and A is more than kPrefetchAFromL2s times the
/// per-core L2 `l2Bytes`, so that its rows come from L3 or DRAM.
Expr prefetchRowsOfA(const TensorInput &a, const Expr &k, int64_t l2Bytes,
                     int64_t elemBytes, const Expr &rowsOuter) {
  int64_t limit = kPrefetchAFromL2s * l2Bytes / elemBytes;
  return Internal::simplify(
      !rowsOuter && elementsOfA(a, k) > Internal::make_const(Int(64), limit));
}

/// A's copy (if any) stored once, in parallel rows; blocks of `blockN` x
/// kExternBlockM on `out`, the column blocks in parallel, the extern stage
/// per block, the epilogue in vectors. Columns outermost, or rows outermost
/// where `rowsOuter` (a specialization; rowsOuterBlocks).
void scheduleExternBlocks(Func out, TiledFuncs &t, const std::vector<Var> &vars,
                          const Expr &rowsOuter, const Expr &blockN) {
  int rank = static_cast<int>(vars.size());
  Var n = vars[rank - 1], m = vars[rank - 2];
  // The block's loop, the third innermost in both orders, is named "xmo"
  // in both (the columns' loop when the rows are outermost), so that the
  // product is computed at it in each; `other` is the other blocks' loop.
  Var block("xmo"), other("xno"), ni("xni"), mi("xmi");
  auto blocks = [&](Stage s, bool rowsOuter) {
    Var no = rowsOuter ? block : other, mo = rowsOuter ? other : block;
    std::vector<VarOrRVar> order = {ni, mi, block};
    if (rowsOuter)
      order.push_back(other);
    for (int axis = rank - 3; axis >= 0; --axis)
      order.push_back(vars[axis]);
    if (!rowsOuter)
      order.push_back(other);
    s.split(n, no, ni, blockN, TailStrategy::GuardWithIf)
        .split(m, mo, mi, kExternBlockM, TailStrategy::GuardWithIf)
        .reorder(order)
        .vectorize(ni, kVectorLanes)
        .parallel(no);
  };
  if (!Internal::is_const_zero(rowsOuter))
    blocks(out.specialize(rowsOuter), true);
  blocks(out, false);
  // The block's size is dynamic (its edge blocks are cut): in Halide's
  // pseudostack it is allocated once per task, not malloc'd per block
  // (no difference measurable in whole-model runs; the attention's blocks
  // gained ~10 % the same way, FusedKernels.cpp).
  t.prod.compute_at(out, block).store_in(MemoryType::Stack);
  if (t.apack.defined())
    packARows(t);
}

/// How an extern stage's blocks run: whether the row blocks are outermost
/// (rowsOuterBlocks) and how many columns a block has (externBlockN).
struct ExternBlocks {
  Expr rowsOuter = Expr(false);
  Expr n;
};

/// `stage`'s product of `a` and the panels `b` (`n` columns) over K = `k`
/// as `tiled.prod`, and its blocks for the per-core L2 of the options. The
/// bf16 stages read A's rows rounded to bf16 once per call (`tiled.apack`);
/// the fp32 stage reads them where they are (a kernel input's innermost
/// axis is dense; the stage takes the rows' strides).
ExternBlocks defineExternStage(const KernelContext &ctx, ExternProduct stage,
                               const TensorInput &a, const TensorInput &b,
                               const std::vector<Var> &vars, const Expr &k,
                               const Expr &n, const Func &out,
                               TiledFuncs &tiled) {
  int64_t l2Bytes = ctx.options.panelL2Bytes > 0 ? ctx.options.panelL2Bytes
                                                 : kDefaultPanelL2Bytes;
  ExternBlocks blocks{rowsOuterBlocks(a, k, l2Bytes),
                      externBlockN(stage, k, l2Bytes)};
  bool f32 = stage == ExternProduct::PanelF32;
  tiled.apack = f32 ? Func()
                    : defineA(ctx, "bf16_a", a, vars, /*guardM=*/false,
                              /*rowsInner=*/false, BFloat(16));
  ExternFuncArgument rowsOfA =
      f32 ? ExternFuncArgument(a.param) : ExternFuncArgument(tiled.apack);
  Expr prefetchA =
      prefetchRowsOfA(a, k, l2Bytes, f32 ? 4 : 2, blocks.rowsOuter);
  tiled.prod = defineExternProduct(ctx, stage, rowsOfA, b, vars, k, n, out,
                                   blocks.rowsOuter, prefetchA);
  return blocks;
}

/// Swapped variant (see the file comment): the tile, rows of B by rows of
/// A; 12 x 2 = 24 accumulator vectors.
constexpr int kSwapTileN = 12;
constexpr int kSwapTileM = 2 * kVectorLanes;

/// The swapped variant's Funcs: A transposed and the register tile.
struct SwappedFuncs {
  Func atrans, prod;
};

/// Whether the swapped variant serves a CPU matmul with this B.
bool canSwap(const KernelContext &ctx, const TensorInput &b, bool transposeB,
             std::optional<int64_t> staticN, std::optional<int64_t> staticK) {
  return !ctx.gpu() && transposeB && b.rank() == 2 && staticN && staticK &&
         *staticN >= kSwapTileN;
}

/// The run-time test of the swapped variant: A has at least kSwapTileM
/// rows (then the row tiles shift inwards and read no row outside A).
/// Constant when A's rows are static.
Expr swapRows(const TensorInput &a) {
  return Internal::simplify(a.extent(a.rank() - 2) >= kSwapTileM);
}

/// B's rows are dense: always, but as a specialization Halide substitutes
/// the stride, and the tile's rows of B are one address and constant
/// offsets.
Expr swapDenseB(const TensorInput &b, int64_t k) {
  return b.param.dim(1).stride() == static_cast<int>(k);
}

/// Defines the swapped variant of `a` x `b`^T (b: [N, K]); `aBatchIdx`
/// gives A's batch indices at the result's vars.
SwappedFuncs defineSwapped(const KernelContext &ctx, const TensorInput &a,
                           const TensorInput &b, const std::vector<Var> &vars,
                           const RDom &k, const std::vector<Expr> &aBatchIdx) {
  int rank = static_cast<int>(vars.size());
  Var n = vars[rank - 1], m = vars[rank - 2];
  SwappedFuncs s;
  // atrans(batch..., k, m) = A[batch..., m, k]: rows of A innermost.
  s.atrans = defineA(ctx, "atrans", a, vars, /*guardM=*/false,
                     /*rowsInner=*/true, Float(32));
  s.prod = ctx.func("sprod");
  define(s.prod, vars, 0.0f);
  std::vector<Expr> aIdx = aBatchIdx;
  aIdx.push_back(k);
  aIdx.push_back(m);
  ref(s.prod, asExprs(vars)) +=
      call(s.atrans, aIdx) * b.at({Expr(n), Expr(k)});
  return s;
}

/// Schedules the swapped variant on `stage` (`out` itself, or one of its
/// specializations). See the file comment. Returns the row-tile var.
Var scheduleSwappedLoops(Stage stage, const std::vector<Var> &vars,
                         bool longEpilogue) {
  int rank = static_cast<int>(vars.size());
  Var n = vars[rank - 1], m = vars[rank - 2];
  Var no("sno"), ni("sni"), mo("smo"), mi("smi");
  std::vector<VarOrRVar> order = {mi, ni, mo};
  for (int axis = rank - 3; axis >= 0; --axis)
    order.push_back(vars[axis]);
  order.push_back(no);
  stage.split(n, no, ni, kSwapTileN, TailStrategy::ShiftInwards)
      .split(m, mo, mi, kSwapTileM, TailStrategy::ShiftInwards)
      .reorder(order)
      .vectorize(mi, kVectorLanes)
      .unroll(mi)
      .parallel(no);
  if (!longEpilogue)
    stage.unroll(ni);
  return mo;
}

/// Schedules the swapped variant's producers for the loops above on `out`
/// (`mo`: their row-tile var).
void scheduleSwappedFuncs(Func out, SwappedFuncs &s,
                          const std::vector<Var> &vars, const RDom &k, Var mo) {
  int rank = static_cast<int>(vars.size());
  Var n = vars[rank - 1], m = vars[rank - 2];
  // A^T once per call: small next to B (M x K against N x K).
  std::vector<Var> aVars = s.atrans.args(); // m, k, batch...
  s.atrans.compute_root().vectorize(aVars[0], kVectorLanes,
                                    TailStrategy::GuardWithIf);

  // Rows of A innermost in the tile too: its vectors stay in registers.
  s.prod.reorder_storage(m, n)
      .compute_at(out, mo)
      .bound_extent(n, kSwapTileN)
      .bound_extent(m, kSwapTileM)
      .vectorize(m, kVectorLanes)
      .unroll(m)
      .unroll(n);
  s.prod.update()
      .reorder(m, n, k)
      .vectorize(m, kVectorLanes)
      .unroll(m)
      .unroll(n);
}
/// Checks the ranks and element types of a matmul's operands, and B's
/// panels (`packed`) or bf16 layout.
llvm::Error checkOperands(const KernelContext &ctx, const TensorInput &a,
                          const TensorInput &b, bool transposeB, bool packed) {
  int rank = ctx.resultRank();
  int ra = a.rank(), rb = b.rank();
  if (ra < 2 || rb < 2 || rank < 2 || ra > rank || (rb > rank && !packed))
    return ctx.error("operands must have rank >= 2");
  bool bf16 = b.elementType.isBF16();
  if (!a.elementType.isF32() || !(b.elementType.isF32() || bf16))
    return ctx.error("operands must be f32 (rhs: f32 or bf16)");
  if (packed)
    return checkPanels(ctx, b);
  if (bf16)
    return checkBf16Weight(ctx, b, transposeB);
  return llvm::Error::success();
}

/// The contraction length of `a` (K innermost) and `b` (K in dim `bK`, or
/// panels holding K, bf16: K / 2 pairs, in their dim 1).
struct Contraction {
  Expr extent;
  /// K, when static.
  std::optional<int64_t> staticK;
};

/// The contraction length: static if either side says so. Every dynamic
/// side is constrained to it, so the kernel refuses mismatched buffers.
Contraction constrainContraction(TensorInput &a, TensorInput &b, int bK,
                                 bool packed) {
  int aK = a.rank() - 1;
  std::optional<int64_t> aStaticK = a.staticExtent(aK);
  std::optional<int64_t> bStaticK = b.staticExtent(bK);
  if (packed && bStaticK && b.elementType.isBF16())
    *bStaticK *= 2; // pairs of K
  Contraction c{Expr(), aStaticK ? aStaticK : bStaticK};
  c.extent = c.staticK ? Expr(static_cast<int>(*c.staticK))
                       : a.param.dim(a.hdim(aK)).extent();
  if (!aStaticK && bStaticK)
    a.param.dim(a.hdim(aK)).set_extent(c.extent);
  if (!bStaticK)
    b.param.dim(b.hdim(bK)).set_extent(c.extent);
  return c;
}

/// Declares `a` dense: each dim's stride is the next inner one's stride
/// times extent. On the GPU it is (the executor binds no views of device
/// buffers), and saying so lets the GPU schedule load a row's values of K
/// as vectors.
void declareDenseRows(TensorInput &a) {
  for (int axis = a.rank() - 2; axis >= 0; --axis)
    a.param.dim(a.hdim(axis))
        .set_stride(a.param.dim(a.hdim(axis + 1)).stride() *
                    a.param.dim(a.hdim(axis + 1)).extent());
}

/// bpack(batch..., k, n) = B[batch..., k, n] as f32: `b` in [K, N]
/// orientation. `batchVars` are bpack's batch dims (empty for a weight),
/// `batchIdx` B's indices for them; columns clamped to `nLast` where it is
/// defined; `panelAt(k, n)` reads B from panels where it is given.
Func defineB(const KernelContext &ctx, const TensorInput &b, const Var &n,
             std::vector<Var> batchVars, std::vector<Expr> batchIdx,
             Expr nLast, bool transposeB,
             const std::function<Expr(Expr, Expr)> &panelAt) {
  Var kv("kv");
  Expr nIdx = nLast.defined() ? clamp(Expr(n), 0, nLast) : Expr(n);
  Expr value;
  if (panelAt) {
    value = panelAt(kv, nIdx);
  } else {
    batchIdx.push_back(transposeB ? nIdx : Expr(kv));
    batchIdx.push_back(transposeB ? Expr(kv) : nIdx);
    value = b.at(batchIdx);
  }
  batchVars.push_back(kv);
  batchVars.push_back(n);
  Func bpack = ctx.func("bpack");
  define(bpack, batchVars, cast<float>(value));
  return bpack;
}

/// Whether B is in panels (`packed_n` given): N is the result's, and a
/// `packed_n` that names another N is an error. A shape-generic copy of the
/// op (plan/PlanBuilder.cpp) has a dynamic N, read at run time.
llvm::Expected<bool> packedWeight(const KernelContext &ctx,
                                  std::optional<uint64_t> packedN) {
  if (!packedN)
    return false;
  std::optional<int64_t> n = ctx.resultStaticExtent(ctx.resultRank() - 1);
  if (n && static_cast<uint64_t>(*n) != *packedN)
    return ctx.error("packed_n = " + llvm::Twine(*packedN) +
                     " but the result has " + llvm::Twine(*n) + " columns");
  return true;
}
} // namespace

namespace detail {
/// The matmul of `a` and `b` (see the file comment) with `epilogue` applied
/// to every accumulated element (`epilogue(acc, vars)`, vars axis-ordered
/// over the result; identity for tfc.matmul, bias + activation for
/// tfc.linear), with the schedule above: the epilogue runs on the register
/// tile as it is stored, so it costs no extra pass over the result.
/// `longEpilogue`: the epilogue is more than a few instructions.
llvm::Expected<Func> buildMatmulWithEpilogue(
    KernelContext &ctx, TensorInput &a, TensorInput &b, bool transposeB,
    std::optional<uint64_t> packedN,
    const std::function<Expr(Expr, const std::vector<Var> &)> &epilogue,
    bool longEpilogue) {
  llvm::Expected<bool> isPacked = packedWeight(ctx, packedN);
  if (!isPacked)
    return isPacked.takeError();
  bool packed = *isPacked;
  if (llvm::Error err = checkOperands(ctx, a, b, transposeB, packed))
    return std::move(err);
  int rank = ctx.resultRank();
  int rb = b.rank();
  bool bf16 = b.elementType.isBF16();

  std::vector<Var> vars = axisVars(rank);
  Var n = vars[rank - 1], m = vars[rank - 2];
  // Panels hold K (bf16: its pairs) in their dim 1.
  int bK = packed ? 1 : transposeB ? rb - 1 : rb - 2;
  int bN = transposeB ? rb - 2 : rb - 1;

  Contraction contraction = constrainContraction(a, b, bK, packed);
  Expr kExtent = contraction.extent;
  std::optional<int64_t> staticK = contraction.staticK;
  if (ctx.gpu())
    declareDenseRows(a);

  std::optional<int64_t> staticN = ctx.resultStaticExtent(rank - 1);
  std::optional<int64_t> staticM = ctx.resultStaticExtent(rank - 2);
  // Panels: a column tile is a panel (the last one padded); tiles start at
  // multiples of kTileN (GuardWithIf: never shifted across two panels;
  // no guard where N is a multiple), so a tile's column in its panel is
  // known to the simplifier and its loads are dense.
  TailStrategy tailN =
      packed ? TailStrategy::GuardWithIf : outputTail(staticN, kTileN);
  if (packed)
    setDenseStrides(b);
  TailStrategy tailM = outputTail(staticM, kTileM);
  // The GPU tiles always read whole tiles (see GpuSchedules.cpp); the CPU
  // reads panels' padding instead of clamping.
  bool guardN =
      ctx.gpu() || (tailN == TailStrategy::GuardWithIf && !packed);
  bool guardM = ctx.gpu() || tailM == TailStrategy::GuardWithIf;
  // B at (k, n) of the product (rank 2 or panels).
  auto bAt = [&](Expr kk, Expr nn) {
    if (!packed)
      return transposeB ? b.at({nn, kk}) : b.at({kk, nn});
    if (bf16)
      return b.at({nn / kTileN, kk / 2, nn % kTileN, kk % 2});
    return b.at({nn / kTileN, kk, nn % kTileN});
  };

  // Batch indices of an operand for the result's batch vars (broadcast).
  auto batchIndices = [&](const TensorInput &t) {
    std::vector<Expr> idx;
    int offset = rank - t.rank();
    for (int axis = 0; axis < t.rank() - 2; ++axis)
      idx.push_back(t.shape[axis] == 1 ? Expr(0) : Expr(vars[axis + offset]));
    return idx;
  };

  // Algorithm
  RDom k(0, kExtent, ctx.base + "_k");
  std::vector<Var> batchVars(vars.begin(), vars.end() - 2);
  bool bHasBatch = rb > 2 && !packed;

  // bpack(batch..., k, n) = B[batch..., k, n]: B in [K, N] orientation.
  // Only a batched B has batch dims here: a weight's panel must not be a
  // function of the batch, or it would be packed once per batch. Panels
  // without a static N: their last column (zero padding past N).
  Expr nLast = !packed   ? b.extent(bN) - 1
               : staticN ? Expr(static_cast<int>(*staticN) - 1)
                         : b.extent(0) * kTileN - 1;
  // (Panels have no batch indices: their rank is not the result's.)
  Func bpack = defineB(ctx, b, n, bHasBatch ? batchVars : std::vector<Var>(),
                       packed ? std::vector<Expr>() : batchIndices(b),
                       guardN ? nLast : Expr(), transposeB,
                       packed ? std::function<Expr(Expr, Expr)>(bAt)
                              : std::function<Expr(Expr, Expr)>());

  // apack(batch..., m, k) = A[batch..., m, k] (rows clamped where tiles
  // may pass the last one). Stored once per call where K is static (the
  // CPU, packARows) and by the GPU schedule; inlined otherwise.
  Func apack = defineA(ctx, "apack", a, vars, guardM, /*rowsInner=*/false,
                       Float(32));

  Func prod = ctx.func("prod");
  ExternProduct stage = externProduct(ctx, a, packed, bf16, staticK);
  int streams = stage == ExternProduct::None
                    ? streamsOfK(ctx, packed, bf16, staticK)
                    : 1;
  RDom kt = streams > 1 ? RDom(0, static_cast<int>(*staticK) / streams, 0,
                               streams, ctx.base + "_ks")
                        : k;
  Expr kIdx = streams > 1
                  ? kt.y * static_cast<int>(*staticK / streams) + kt.x
                  : Expr(k);
  {
    define(prod, vars, 0.0f);
    std::vector<Expr> aIdx = batchIndices(a);
    aIdx.push_back(m);
    aIdx.push_back(kIdx);
    std::vector<Expr> packIdx =
        bHasBatch ? asExprs(batchVars) : std::vector<Expr>();
    packIdx.push_back(kIdx);
    packIdx.push_back(n);
    std::vector<Expr> prodIdx = asExprs(vars);
    ref(prod, prodIdx) += call(apack, aIdx) * call(bpack, packIdx);
  }

  Func out = ctx.func();
  TiledFuncs tiled{apack, bpack, prod, kt, staticK, transposeB, packed};
  if (streams > 1)
    tiled.streamWhen = streamRows(a);
  ExternBlocks blocks;
  if (stage != ExternProduct::None)
    blocks = defineExternStage(ctx, stage, a, b, vars, kExtent,
                               Internal::simplify(nLast + 1), out, tiled);
  else if (bf16)
    tiled = defineTiledBf16(ctx, a, b, vars, transposeB, packed,
                            static_cast<int>(*staticK), guardN, guardM,
                            batchIndices(a));
  std::function<void(Func)> schedule = [&](Func out) {
    if (stage != ExternProduct::None)
      scheduleExternBlocks(out, tiled, vars, blocks.rowsOuter, blocks.n);
    else if (bf16)
      scheduleTiledBf16(out, tiled, vars, tailN, tailM, longEpilogue);
    else
      scheduleTiled(ctx, out, tiled, vars, tailN, tailM, bHasBatch,
                    longEpilogue);
  };
  Expr gemmValue = epilogue(call(tiled.prod, asExprs(vars)), vars);
  // The swapped variant where it applies. Static rows (enough of them):
  // the whole kernel, specialized for a dense B. Dynamic rows: one
  // specialization on both tests, the tiles serve the rest.
  std::optional<SwappedFuncs> swapped;
  Expr useSwap = Expr(false);
  if (!packed && canSwap(ctx, b, transposeB, staticN, staticK)) {
    useSwap = swapRows(a);
    if (!Internal::is_const_zero(useSwap))
      swapped = defineSwapped(ctx, a, b, vars, k, batchIndices(a));
  }
  if (swapped) {
    Expr swapValue = epilogue(call(swapped->prod, asExprs(vars)), vars);
    Expr denseB = swapDenseB(b, *staticK);
    bool always = Internal::is_const_one(useSwap);
    if (!always)
      useSwap = useSwap && denseB;
    gemmValue = always ? swapValue : select(useSwap, swapValue, gemmValue);
    schedule = [&, always, denseB, tiledSchedule = schedule](Func out) {
      Var mo = scheduleSwappedLoops(out.specialize(always ? denseB : useSwap),
                                    vars, longEpilogue);
      scheduleSwappedFuncs(out, *swapped, vars, k, mo);
      if (always)
        scheduleSwappedLoops(out, vars, longEpilogue);
      else
        tiledSchedule(out);
    };
  }
  std::optional<GemvPlan> gemv =
      planGemv(ctx, b, transposeB, packed, tailN, staticN, staticK);
  Expr useGemv = gemv ? gemvCondition(a) : Expr(false);
  if (Internal::is_const_zero(useGemv)) {
    define(out, vars, gemmValue);
    schedule(out);
    return out;
  }

  // The GPU's blocks of columns may pass N: their reads are clamped.
  auto gemvB = [&](Expr kk, Expr nn) {
    return bAt(kk, ctx.gpu() ? min(nn, nLast) : nn);
  };
  GemvFuncs g = defineGemv(ctx, a, b, vars, *gemv, kExtent, gemvB);
  Expr gemvValue = epilogue(g.value, vars);
  if (Internal::is_const_one(useGemv)) {
    define(out, vars, gemvValue);
    scheduleGemv(ctx, out, out, g, vars, *gemv);
    return out;
  }
  // Both: the condition is substituted in each branch of the
  // specialization, so each computes only its own producers.
  define(out, vars, select(useGemv, gemvValue, gemmValue));
  Stage special = out.specialize(useGemv);
  scheduleGemv(ctx, out, special, g, vars, *gemv);
  schedule(out);
  return out;
}
} // namespace detail

llvm::Expected<Func> buildPackPanels(KernelContext &ctx) {
  auto op = llvm::dyn_cast<mlir::tfc::PackPanelsOp>(ctx.op);
  if (!op || ctx.inputs.size() != 1 || ctx.inputs[0].rank() != 2)
    return ctx.error("expects one rank-2 weight");
  const TensorInput &w = ctx.inputs[0];
  bool transposeB = op.getTransposeB();
  bool bf16 = w.elementType.isBF16();
  // N is read at run time: one kernel packs f32 weights of every shape (the
  // planner compiles a copy with a dynamic weight, plan/PlanBuilder.cpp).
  Expr n = w.extent(transposeB ? 0 : 1);
  std::vector<Var> vars = axisVars(ctx.resultRank());
  // (panel, k, j) or bf16 (panel, k / 2, j, k % 2).
  Var p = vars[0], j = vars[2];
  Expr col = p * kTileN + j;
  Expr kIdx = bf16 ? 2 * vars[1] + vars[3] : Expr(vars[1]);
  Expr colIn = min(col, n - 1);
  Expr value = transposeB ? w.at({colIn, kIdx}) : w.at({kIdx, colIn});
  Expr padded = select(col < n, value, cast(value.type(), 0));
  // f32 [N, K]: the input's rows (zero past N) through a Func, so that the
  // CPU schedule can load 16 x 16 tiles of it (below).
  Func rowsIn = ctx.func("rows_in");
  Var rk("rk"), rc("rc");
  if (!bf16 && transposeB) {
    define(rowsIn, {rc, rk},
           select(rc < n, w.at({min(Expr(rc), n - 1), Expr(rk)}), 0.0f));
    padded = call(rowsIn, {col, kIdx});
  }
  // bf16 pairs of a [K, N] input: a select of two rows, so that it
  // vectorizes as two dense row loads and a shuffle (not a gather of
  // 16-bit elements: AVX512-FP16's vmovw, which Zen 4 lacks).
  if (bf16 && !transposeB)
    value = select(vars[3] == 0, w.at({2 * vars[1], colIn}),
                   w.at({2 * vars[1] + 1, colIn}));
  Func out = ctx.func();
  define(out, vars, padded);
  if (ctx.gpu()) {
    gpuTileStage(out, vars);
    return out;
  }
  // Once, in the weight prologue: panels in parallel, rows of a panel as
  // vectors. An f32 [N, K] input (a tied LM head) is transposed in tiles
  // of 16 x 16, as scheduleTiledTranspose does: 16 dense loads along the
  // input's rows, a transpose in registers (read down its columns, a gather
  // per vector, GPT-2's 154 MB `wte` took ~0.4 s). bf16 [N, K]: scalar.
  if (bf16 && !transposeB) {
    out.vectorize(vars[3]).vectorize(j, kVectorLanes).unroll(j);
  } else if (!bf16 && transposeB) {
    // K >= 16 (every model's): whole tiles, the last one shifted inwards,
    // so that the input tile is 16 x 16 and transposes in registers.
    // Shorter K: tiles of one k (16 gathered columns). Guarded 16 x 16
    // tiles there took 0.4 s of GPT-2's cold compile, for no model.
    Var k = vars[1], ko("ko"), ki("ki"), jo("jo"), ji("ji");
    auto tiles = [&](Stage stage, int rows) {
      stage.tile(j, k, jo, ko, ji, ki, kVectorLanes, rows,
                 TailStrategy::ShiftInwards)
          .reorder(ji, ki, jo, ko, p)
          .vectorize(ji)
          .unroll(ki)
          .parallel(p);
    };
    tiles(out.specialize(w.extent(1) >= kVectorLanes), kVectorLanes);
    tiles(out, 1);
    rowsIn.compute_at(out, jo)
        .vectorize(rk, kVectorLanes, TailStrategy::GuardWithIf)
        .unroll(rc);
  } else if (!bf16) {
    out.vectorize(j, kVectorLanes).unroll(j);
  }
  out.parallel(p);
  return out;
}

llvm::Expected<Func> buildMatmul(KernelContext &ctx) {
  auto matmul = llvm::dyn_cast<mlir::tfc::MatmulOp>(ctx.op);
  if (!matmul)
    return ctx.error("not a matmul");
  return buildMatmulWithEpilogue(
      ctx, ctx.inputs[0], ctx.inputs[1], matmul.getTransposeB(),
      matmul.getPackedN(),
      [](Expr acc, const std::vector<Var> &) { return acc; },
      /*longEpilogue=*/false);
}

} // namespace tfc::codegen
