//===- GpuSchedules.cpp - GPU schedules of the kernel families ------------===//
//
// Matmul / linear: a block computes a 32 x 64 tile of the result with
// 16 x 8 threads, each a 4 x 4 register tile (the accumulator `prod`,
// computed per thread, fully unrolled: 16 registers). K runs in steps of
// kMatmulKUnroll unrolled rank-1 updates; per step a thread loads its 4 rows
// of A for the kMatmulKUnroll values of K as one 4-wide vector each
// (`aRows`, in registers; A is declared dense so that Halide can prove the
// alignment) and B's row of 4 columns as one 4-wide vector. A and B are
// read from global memory through the L1 cache, which the block's threads
// share (16 threads read each element of A's slice, 8 each of B's). The
// epilogue (bias, activation) is inlined into the store of the micro-tile.
//
// Why not shared-memory staging: Halide 14 keeps an accumulator computed at
// the block level (the only level where a K loop could contain the block's
// shared-memory copies) as one whole allocation per thread
// (FuseGPUThreadLoops' ExtractRegisterAllocations does not narrow it to
// the thread's footprint): a 64 x 64 tile became a 16 KiB per-thread stack
// frame. Staging with accumulators in shared memory instead would cost a
// shared load and store per FMA. So the register tile wins, and the block's
// reuse goes through L1.
//
// GEMV (the matmul's specialization for at most a few result rows, as in a
// decode step, on a weight): with one row the tiles above would compute 31
// rows for nothing and run 12 blocks for N = 768. Instead a block computes
// 32 columns of one result row with 32 x 8 threads: thread (c, s) sums the
// products of k = s, s + 8, ... (rfactor; per step the block reads 8 whole
// rows of its 32 columns of B, coalesced; 4 steps unrolled for loads in
// flight) into shared memory, and a thread per column adds the 8 partial
// sums and applies the epilogue. The weights are read once per row.
//
// Row reductions (softmax, LayerNorm, RMSNorm, add+LayerNorm): one block
// per row. A statistic is rfactored over the block's threads: thread t
// reduces elements t, t + T, t + 2T, ... of the row (coalesced) into a
// shared slot, and one thread combines the T slots. Per-row intermediates
// (softmax's exps, add+LayerNorm's sum) are kept in shared memory, so the
// row is read from global memory once for them.
//
// Fused attention: one block per (batch, head, block of queries); the
// online softmax's chunks are a serial loop inside the block. Per chunk the
// block's 64 x queryBlock threads compute K^T, the scores and the weights
// into shared memory (a thread per key and query row), the chunk max and
// sum per row, and then each thread updates its (value channel, row) of
// the running state with its P V dot product. Scores are never
// materialized beyond one chunk.
//
//===----------------------------------------------------------------------===//

#include "codegen/GpuSchedules.h"

using namespace Halide;

namespace tfc::codegen::detail::gpu {

//===----------------------------------------------------------------------===//
// Matmul
//===----------------------------------------------------------------------===//

void scheduleMatmul(MatmulStages s) {
  int rank = static_cast<int>(s.vars.size());
  Var n = s.vars[rank - 1], m = s.vars[rank - 2];
  std::vector<Var> batchVars(s.vars.begin(), s.vars.end() - 2);
  Func out = s.out, prod = s.prod;

  Var nb("nb"), mb("mb"), ni("ni"), mi("mi"), tx("tx"), ty("ty"), nr("nr"),
      mr("mr");
  out.tile(n, m, nb, mb, ni, mi, kMatmulTileN, kMatmulTileM,
           TailStrategy::GuardWithIf);
  // Thread (tx, ty) computes columns tx * microN + nr, rows ty * microM + mr.
  out.split(ni, tx, nr, kMatmulMicroN, TailStrategy::GuardWithIf)
      .split(mi, ty, mr, kMatmulMicroM, TailStrategy::GuardWithIf);
  out.reorder(nr, mr, tx, ty, nb, mb)
      .unroll(nr)
      .unroll(mr)
      .gpu_threads(tx, ty)
      .gpu_blocks(nb, mb);
  if (!batchVars.empty()) {
    std::vector<Var> innerToOuter(batchVars.rbegin(), batchVars.rend());
    out.gpu_blocks(fuseAll(out, innerToOuter, "batch"));
  }

  // The accumulators: the thread's micro-tile, in registers (fully
  // unrolled, constant indices). A and B are read where they are used
  // (apack and bpack inline, rows and columns clamped): the block's 16
  // threads along a row of the tile read the same A elements and the 16
  // along a column the same B elements, which the L1 cache serves.
  prod.compute_at(out, tx)
      .store_in(MemoryType::Register)
      .bound_extent(n, kMatmulMicroN)
      .bound_extent(m, kMatmulMicroM)
      .vectorize(n)
      .unroll(m);
  Stage update = prod.update();
  update.reorder(n, m, RVar(s.k.x)).vectorize(n).unroll(m);
  if (s.staticK && *s.staticK % kMatmulKUnroll == 0) {
    RVar ko("ko"), ki("ki");
    update.split(RVar(s.k.x), ko, ki, kMatmulKUnroll).reorder(n, m, ki, ko)
        .unroll(ki);
    // The thread's kMatmulMicroM rows of A for the kMatmulKUnroll steps, in
    // registers: one vector load per row (A is contiguous along K) instead
    // of a scalar load per row and step.
    Func aRows = s.apack.in(prod);
    std::vector<Var> aVars = aRows.args(); // k, m, batch...
    aRows.compute_at(prod, ko)
        .store_in(MemoryType::Register)
        .vectorize(aVars[0])
        .unroll(aVars[1]);
  }
}

//===----------------------------------------------------------------------===//
// GEMV
//===----------------------------------------------------------------------===//

void scheduleGemv(GemvStages s) {
  int rank = static_cast<int>(s.vars.size());
  Var n = s.vars[rank - 1];
  std::vector<Var> rows(s.vars.rbegin() + 1, s.vars.rend());
  Var row = fuseAll(s.stage, rows, "gemv_rows");
  Var nb("gemv_nb"), nt("gemv_nt");
  s.stage.split(n, nb, nt, kGemvColumns, TailStrategy::GuardWithIf)
      .reorder(nt, nb, row)
      .gpu_threads(nt)
      .gpu_blocks(nb, row);
  LoopLevel block(s.out, nb);

  // partial(..., slice) sums k = ko * kGemvSlices + slice: per ko, the
  // block's threads read kGemvSlices whole rows of its columns of B.
  RVar ko("gemv_ko"), slice("gemv_slice");
  Var lane("gemv_lane");
  Func partial = s.acc.update()
                     .split(RVar(s.k.x), ko, slice, kGemvSlices)
                     .rfactor(slice, lane);
  partial.compute_at(block)
      .store_in(MemoryType::GPUShared)
      .gpu_threads(n, lane);
  Stage update = partial.update();
  update.reorder(ko, n, lane).gpu_threads(n, lane);
  Expr steps = s.k.x.extent() / kGemvSlices;
  if (const int64_t *k = Internal::as_const_int(Internal::simplify(steps));
      k && *k % kGemvKUnroll == 0) {
    RVar koo("gemv_koo"), koi("gemv_koi");
    update.split(ko, koo, koi, kGemvKUnroll).unroll(koi);
  }
  // The slices' sum: a thread per column.
  s.acc.compute_at(block).gpu_threads(n);
  s.acc.update().reorder(slice, n).gpu_threads(n);
}

//===----------------------------------------------------------------------===//
// Row reductions
//===----------------------------------------------------------------------===//

namespace {
/// Threads per row: the smallest of 32, 64, 128, 256 that covers a row of
/// `rowLength` (256 for longer or unknown rows).
int threadsPerRow(std::optional<int64_t> rowLength) {
  int threads = 32;
  while (threads < 256 && (!rowLength || *rowLength > threads))
    threads *= 2;
  return threads;
}
} // namespace

void scheduleRowReduction(Func out, const std::vector<Var> &vars,
                          std::optional<int64_t> rowLength,
                          const std::vector<Func> &stats, const RVar &r,
                          const std::vector<Func> &rowBuffers) {
  int rank = static_cast<int>(vars.size());
  int threads = threadsPerRow(rowLength);
  Var c = vars[rank - 1];
  Var co("co"), tx("tx");
  // Thread t writes elements t, t + T, ...: coalesced.
  out.split(c, co, tx, threads, TailStrategy::GuardWithIf)
      .reorder(co, tx)
      .gpu_threads(tx);
  std::vector<Var> rows(vars.rbegin() + 1, vars.rend());
  Var row = fuseAll(out, rows, "rows");
  out.gpu_blocks(row);
  LoopLevel rowLevel(out, row);

  for (Func f : rowBuffers)
    f.compute_at(rowLevel)
        .store_in(MemoryType::GPUShared)
        .split(c, co, tx, threads, TailStrategy::GuardWithIf)
        .reorder(co, tx)
        .gpu_threads(tx);

  for (Func s : stats) {
    RVar ro("ro"), ri("ri");
    Var lane("lane");
    Func partial = s.update()
                       .split(r, ro, ri, threads, TailStrategy::GuardWithIf)
                       .rfactor(ri, lane);
    s.compute_at(rowLevel);
    partial.compute_at(rowLevel).store_in(MemoryType::GPUShared).gpu_threads(
        lane);
    partial.update().gpu_threads(lane);
  }
}

//===----------------------------------------------------------------------===//
// Fused attention
//===----------------------------------------------------------------------===//

namespace {
/// Threads along keys and value channels; the other thread dimension is the
/// block's query rows.
constexpr int kAttentionThreads = kAttentionKeyChunk;

/// Runs `stage` over (`x`, `row`) with `x` split across kAttentionThreads
/// threads (serial beyond that) and a thread per `row`.
void threadsOver(Stage stage, const VarOrRVar &x, const VarOrRVar &row) {
  Var xo("xo"), xt("xt");
  stage.split(x, xo, xt, kAttentionThreads, TailStrategy::GuardWithIf)
      .reorder(xo, xt, row)
      .gpu_threads(xt, row);
}
} // namespace

void scheduleAttention(AttentionStages s) {
  Var io("io"), in("in");
  Func out = s.out;
  out.split(s.i, io, in, s.queryBlock, TailStrategy::GuardWithIf);
  threadsOver(out, s.e, in);
  out.gpu_blocks(io, s.h, s.b);

  // The running state per (value channel, row), in shared memory.
  Func acc = s.acc;
  acc.compute_at(out, io).store_in(MemoryType::GPUShared);
  threadsOver(acc, s.e, s.ii);
  Stage update = acc.update();
  RVar rc(s.rc.x);
  {
    Var xo("xo"), xt("xt");
    update.split(s.e, xo, xt, kAttentionThreads, TailStrategy::GuardWithIf)
        .reorder(xo, xt, s.ii, rc)
        .gpu_threads(xt, s.ii);
    // Each thread's P V dot product, in a register.
    s.pv.compute_at(acc, xo);
  }

  // Per chunk (the serial loop over rc), in shared memory.
  LoopLevel chunk(acc, rc);
  // K^T: threads along d read K's rows coalesced.
  s.kt.compute_at(chunk).store_in(MemoryType::GPUShared);
  {
    Var jo("jo"), jy("jy"), dO("dO"), dx("dx");
    s.kt.split(s.j, jo, jy, s.queryBlock, TailStrategy::GuardWithIf)
        .split(s.d, dO, dx, kAttentionThreads, TailStrategy::GuardWithIf)
        .reorder(jo, dO, dx, jy)
        .gpu_threads(dx, jy);
  }
  // Scores: a thread per (key, row), its dot product over d in a register.
  s.raw.compute_at(chunk).store_in(MemoryType::GPUShared);
  threadsOver(s.raw, s.j, s.i);
  {
    Var xo("xo");
    s.sacc.compute_at(s.raw, xo);
  }
  for (Func stat : {s.bmax, s.bsum}) {
    stat.compute_at(chunk).store_in(MemoryType::GPUShared).gpu_threads(s.i);
    stat.update().gpu_threads(s.i);
  }
  s.p.compute_at(chunk).store_in(MemoryType::GPUShared);
  threadsOver(s.p, s.jj, s.i);
}

} // namespace tfc::codegen::detail::gpu
