//===- GpuSchedules.h - GPU schedules of the kernel families ----*- C++ -*-===//
//
// Internal to codegen/. The builders define their algorithms once; when the
// target has a GPU feature (CUDA, or OpenCL for the offline numerics checks)
// their `if (ctx.gpu())` branches hand the Funcs to one of these functions.
// docs/cuda.md describes the schedules, their shared-memory use and launch
// counts. Halide's GPU schedules are backend-independent: the same schedule
// lowers to PTX (CUDA) and to OpenCL C.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_CODEGEN_GPUSCHEDULES_H
#define TFC_CODEGEN_GPUSCHEDULES_H

#include "codegen/KernelSupport.h"

namespace tfc::codegen::detail::gpu {

/// Matmul tiles: a block computes kMatmulTileM x kMatmulTileN results with
/// (kMatmulTileN / kMatmulMicroN) x (kMatmulTileM / kMatmulMicroM) threads,
/// each a kMatmulMicroM x kMatmulMicroN register tile; K unrolled
/// kMatmulKUnroll at a time. Chosen on an H100 (docs/cuda.md "Tuning").
constexpr int kMatmulTileM = 32;
constexpr int kMatmulTileN = 64;
/// A thread's register tile: kMatmulMicroN columns (one 4-wide vector of B)
/// by kMatmulMicroM rows.
constexpr int kMatmulMicroN = 4;
constexpr int kMatmulMicroM = 4;
constexpr int kMatmulKUnroll = 4;

/// GEMV (a matmul of at most a few result rows on a weight, as in a decode
/// step): a block computes kGemvColumns columns of one result row with
/// kGemvColumns x kGemvSlices threads; thread (c, s) sums the products of
/// k = s, s + kGemvSlices, ... and the block adds the slices' partial sums.
constexpr int kGemvColumns = 32;
constexpr int kGemvSlices = 8;
/// Steps of each slice's loop over K unrolled (independent loads in flight).
constexpr int kGemvKUnroll = 4;

/// Fused attention: keys per chunk of the online softmax on the GPU (the
/// chunk's K^T, scores and weights live in shared memory).
constexpr int kAttentionKeyChunk = 64;

/// The Funcs of a matmul (MatmulKernel.cpp): `out` over axis-ordered `vars`
/// (..., m, n) reads `prod` (the accumulator, an update over `k`), which
/// reads `apack` (A as [..., M, K]) and `bpack` (B as [..., K, N]). Their
/// reads of A and B at rows or columns past the result's are clamped.
struct MatmulStages {
  Halide::Func out, prod, apack, bpack;
  Halide::RDom k;
  std::vector<Halide::Var> vars;
  bool transposeB = false;
  /// K, when static.
  std::optional<int64_t> staticK;
};

/// Block tiles and per-thread register micro-tiles (see GpuSchedules.cpp
/// and docs/cuda.md).
void scheduleMatmul(MatmulStages s);

/// The Funcs of the GEMV variant (MatmulKernel.cpp): `stage` (the output
/// `out` or its specialization for few rows) over axis-ordered `vars`
/// (..., m, n) reads `acc`, an update over `k` (static K, a multiple of
/// kGemvSlices) of products of A's row and B's rows at clamped columns.
struct GemvStages {
  Halide::Func out;
  Halide::Stage stage;
  Halide::Func acc;
  Halide::RDom k;
  std::vector<Halide::Var> vars;
};

/// A block per (kGemvColumns columns, result row); K split across the
/// block's threads (see GpuSchedules.cpp and docs/cuda.md).
void scheduleGemv(GemvStages s);

/// A reduction along the innermost axis of each row: `out` over axis-ordered
/// `vars` (the last is the reduced axis, of static length `rowLength` if
/// known; rank >= 2); `stats` are per-row reductions over `r` (defined over the other
/// vars), each update a sum or max of one term per r; `rowBuffers` are
/// Funcs over `vars` worth keeping per row in shared memory (softmax's
/// exps, add+LayerNorm's sum). One block per row; see docs/cuda.md.
void scheduleRowReduction(Halide::Func out, const std::vector<Halide::Var> &vars,
                          std::optional<int64_t> rowLength,
                          const std::vector<Halide::Func> &stats,
                          const Halide::RVar &r,
                          const std::vector<Halide::Func> &rowBuffers);

/// The stages of tfc.fused_attention (FusedKernels.cpp) with their Halide
/// vars: `out(e, i, h, b)`, the running state `acc(e, ii, qb, h, b)` (an
/// update over the chunks `rc`), and per chunk: `kt(j, d, h, b)` (K^T),
/// `raw(j, i, h, b)` (scaled scores, reading the reduction `sacc` over
/// `rd`), `bmax`/`bsum(ch, i, h, b)` (over `rj`), the weights
/// `p(jj, ch, i, h, b)` and `pv(e, ch, i, h, b)` (over `rj`).
struct AttentionStages {
  Halide::Func kin, kt, sacc, raw, bmax, p, bsum, pv, acc, out;
  Halide::RDom rd, rj, rc;
  Halide::Var e, d, j, jj, ch, i, ii, qb, h, b;
  /// Queries per block (the algorithm's block of the running state).
  int queryBlock = 0;
};

/// One kernel per (batch, head, block of queries): the online softmax's
/// chunks are a serial loop in the block; per chunk, K^T, the scores and
/// the weights are computed into shared memory by the block's threads.
void scheduleAttention(AttentionStages s);

} // namespace tfc::codegen::detail::gpu

#endif // TFC_CODEGEN_GPUSCHEDULES_H
