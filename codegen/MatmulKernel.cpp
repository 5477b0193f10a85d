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
//  - B is packed per column panel (`bpack`: kTileN x K, contiguous): the
//    micro-kernel then streams one dense 192-byte row per k, and a transposed
//    B (nn.Linear's layout, Q @ K^T) is transposed once per panel instead of
//    being gathered in the inner loop. All row tiles of a panel reuse it.
//  - Panels are the parallel tasks. When B has no batch dims (a weight), the
//    batch loops run inside the panel loop so a panel is packed once for all
//    batches.
//  - Edges: a dimension known to be at least a tile is split with
//    ShiftInwards (the last tile overlaps the previous one: no guards). A
//    dynamic or short one is split with GuardWithIf, and the inputs are read
//    at clamped indices there, so the fixed-size tile (bound_extent) never
//    reads outside A or B; the clamps are loop invariant in the k loop.
//
// GPU schedule: one thread per result element, tiles of 32x8 threads per
// block, the batch as a third block dimension.
//
//===----------------------------------------------------------------------===//

#include "codegen/KernelSupport.h"

#include "ir/TfcOps.h"

#include <functional>

using namespace Halide;
using namespace tfc::codegen::detail;

namespace tfc::codegen {

namespace {
/// Micro-kernel tile: 3 x 16 lanes by 8 rows = 24 accumulator registers of
/// the 32 AVX-512 has, leaving room for the 3 B vectors and a broadcast.
constexpr int kTileN = 48;
constexpr int kTileM = 8;
} // namespace

bool isMatmulOp(mlir::Operation *op) {
  return llvm::isa<mlir::tfc::MatmulOp>(op);
}

namespace detail {
/// The matmul of `a` and `b` (see the file comment) with `epilogue` applied
/// to every accumulated element (`epilogue(acc, vars)`, vars axis-ordered
/// over the result; identity for tfc.matmul, bias + activation for
/// tfc.linear), with the schedule above: the epilogue runs on the register
/// tile as it is stored, so it costs no extra pass over the result.
/// `longEpilogue`: the epilogue is more than a few instructions.
llvm::Expected<Func> buildMatmulWithEpilogue(
    KernelContext &ctx, TensorInput &a, TensorInput &b, bool transposeB,
    const std::function<Expr(Expr, const std::vector<Var> &)> &epilogue,
    bool longEpilogue) {
  int rank = ctx.resultRank();
  int ra = a.rank(), rb = b.rank();
  if (ra < 2 || rb < 2 || rank < 2 || ra > rank || rb > rank)
    return ctx.error("operands must have rank >= 2");
  if (!a.elementType.isF32() || !b.elementType.isF32())
    return ctx.error("operands must be f32");

  std::vector<Var> vars = axisVars(rank);
  Var n = vars[rank - 1], m = vars[rank - 2];
  int aK = ra - 1, aM = ra - 2;
  int bK = transposeB ? rb - 1 : rb - 2;
  int bN = transposeB ? rb - 2 : rb - 1;

  // The contraction length: static if either side says so. Every dynamic
  // side is constrained to it, so the kernel refuses mismatched buffers.
  Expr kExtent;
  if (auto s = a.staticExtent(aK))
    kExtent = static_cast<int>(*s);
  else if (auto s = b.staticExtent(bK))
    kExtent = static_cast<int>(*s);
  else
    kExtent = a.param.dim(a.hdim(aK)).extent();
  if (!a.staticExtent(aK) && b.staticExtent(bK))
    a.param.dim(a.hdim(aK)).set_extent(kExtent);
  if (!b.staticExtent(bK))
    b.param.dim(b.hdim(bK)).set_extent(kExtent);

  std::optional<int64_t> staticN = ctx.resultStaticExtent(rank - 1);
  std::optional<int64_t> staticM = ctx.resultStaticExtent(rank - 2);
  TailStrategy tailN = outputTail(staticN, kTileN);
  TailStrategy tailM = outputTail(staticM, kTileM);
  bool guardN = !ctx.gpu() && tailN == TailStrategy::GuardWithIf;
  bool guardM = !ctx.gpu() && tailM == TailStrategy::GuardWithIf;

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
  bool bHasBatch = rb > 2;

  // bpack(batch..., k, n) = B[batch..., k, n]: B in [K, N] orientation.
  Func bpack = ctx.func("bpack");
  {
    Var kv("kv");
    Expr nIdx = guardN ? clamp(Expr(n), 0, b.extent(bN) - 1) : Expr(n);
    std::vector<Expr> bIdx = batchIndices(b);
    if (transposeB) {
      bIdx.push_back(nIdx);
      bIdx.push_back(kv);
    } else {
      bIdx.push_back(kv);
      bIdx.push_back(nIdx);
    }
    // Only a batched B has batch dims here: a weight's panel must not be
    // a function of the batch, or it would be packed once per batch.
    std::vector<Var> packVars = bHasBatch ? batchVars : std::vector<Var>();
    packVars.push_back(kv);
    packVars.push_back(n);
    define(bpack, packVars, b.at(bIdx));
  }

  Func prod = ctx.func("prod");
  {
    define(prod, vars, 0.0f);
    Expr mIdx = guardM ? clamp(Expr(m), 0, a.extent(aM) - 1) : Expr(m);
    std::vector<Expr> aIdx = batchIndices(a);
    aIdx.push_back(mIdx);
    aIdx.push_back(k);
    std::vector<Expr> packIdx =
        bHasBatch ? asExprs(batchVars) : std::vector<Expr>();
    packIdx.push_back(k);
    packIdx.push_back(n);
    std::vector<Expr> prodIdx = asExprs(vars);
    ref(prod, prodIdx) += a.at(aIdx) * call(bpack, packIdx);
  }

  Func out = ctx.func();
  define(out, vars, epilogue(call(prod, asExprs(vars)), vars));

  // Schedule
  if (ctx.gpu()) {
    Var bn("bn"), bm("bm"), tn("tn"), tm("tm");
    out.gpu_tile(n, m, bn, bm, tn, tm, 32, 8, TailStrategy::GuardWithIf);
    if (!batchVars.empty()) {
      std::vector<Var> innerToOuter(batchVars.rbegin(), batchVars.rend());
      out.gpu_blocks(fuseAll(out, innerToOuter, "batch"));
    }
    prod.compute_at(out, tn);
    RVar ko("ko"), ki("ki");
    prod.update().split(k, ko, ki, 4, TailStrategy::GuardWithIf).unroll(ki);
    return out;
  }

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
  Var task = no;
  if (!batchVars.empty()) {
    if (bHasBatch) {
      // Each (batch, panel) is a task with its own B.
      std::vector<Var> innerToOuter = {no};
      innerToOuter.insert(innerToOuter.end(), batchVars.rbegin(),
                          batchVars.rend());
      task = fuseAll(out, innerToOuter, "task");
    } else {
      // One B for all batches: pack each panel once, loop batches inside.
      std::vector<VarOrRVar> order = {ni, mi, mo};
      for (int axis = static_cast<int>(batchVars.size()) - 1; axis >= 0; --axis)
        order.push_back(batchVars[axis]);
      order.push_back(no);
      out.reorder(order);
    }
  }
  out.parallel(task);

  bpack.compute_at(out, task)
      .bound_extent(n, kTileN)
      .vectorize(n, kVectorLanes)
      .unroll(n);

  prod.compute_at(out, mo)
      .bound_extent(n, kTileN)
      .bound_extent(m, kTileM)
      .vectorize(n, kVectorLanes)
      .unroll(n)
      .unroll(m);
  prod.update().reorder(n, m, k).vectorize(n, kVectorLanes).unroll(n).unroll(m);
  return out;
}
} // namespace detail

llvm::Expected<Func> buildMatmul(KernelContext &ctx) {
  auto matmul = llvm::dyn_cast<mlir::tfc::MatmulOp>(ctx.op);
  if (!matmul)
    return ctx.error("not a matmul");
  return buildMatmulWithEpilogue(
      ctx, ctx.inputs[0], ctx.inputs[1], matmul.getTransposeB(),
      [](Expr acc, const std::vector<Var> &) { return acc; },
      /*longEpilogue=*/false);
}

} // namespace tfc::codegen
