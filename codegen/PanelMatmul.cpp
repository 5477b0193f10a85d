//===- PanelMatmul.cpp - fp32 products on weight panels, prefetched -------===//
//
// The extern stage of PanelMatmul.h. One call computes a block of the result
// (the columns of a few panels by up to ~128 rows, as the kernel's schedule
// asks):
//  1. panel by panel, the block's rows are taken 8 at a time (a row tile);
//     a last, shorter tile's rows are copied once (per batch entry) into a
//     thread-local buffer padded with zero rows;
//  2. a tile's 24 accumulators (8 rows x 3 vectors of 16 columns) run over
//     all of K in order: per step, 3 vectors of the panel's row, 8
//     broadcasts of A, 24 FMAs; 4 steps per loop iteration (one step per
//     iteration lost ~4 % to the loop's own instructions at M = 1024);
//  3. the accumulators are stored into the result, or through a small
//     buffer where the tile is cut by the block's edge;
//  4. the panels come from DRAM the first time. Every 4 steps of K, a few
//     cache lines of the panels of the block this thread most likely
//     computes next are prefetched into L2 (PanelBlocks.h), and the first
//     row tile of each panel prefetches the panel's rows kAhead steps ahead
//     into L1 (for a block the guess missed: the first of a thread's chunk
//     of blocks, or one it helps another thread with).
//
// On the Emerald Rapids machine of session 13, alternated against the
// Halide tile (with its K in 8 parts), BERT-base b1: 180 -> 155 ms at 1
// thread, 95 -> 86 at 2; the spread prefetch alone 170, the look-ahead
// alone ~176 (docs/benchmarks.md).
//
//===----------------------------------------------------------------------===//

#include "codegen/PanelMatmul.h"

#include "codegen/KernelBuilder.h"
#include "codegen/PanelBlocks.h"
#include "ir/TfcOps.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

using namespace tfc::codegen;

namespace {
constexpr int kPanel = static_cast<int>(mlir::tfc::kPanelColumns);
constexpr int kTileRows = 8;
constexpr int kVectors = kPanel / 16; // accumulators per row
/// Steps of K per iteration of the tile's loop, and per PanelPrefetch step.
constexpr int kStepsPerPrefetch = 4;
/// How many steps of K ahead the first row tile of a panel prefetches it.
constexpr int kAhead = 32;

#if defined(__x86_64__)
#define TFC_AVX512_TARGET __attribute__((target("avx512f,prfchw")))

#define TFC_AVX512_INLINE                                                      \
  __attribute__((target("avx512f,prfchw"), always_inline)) inline

/// The tile's accumulators: 8 rows x 3 vectors of 16 columns.
struct Acc {
  __m512 v[kTileRows][kVectors];
};

/// One step of K: row `bk` of the panel times A's 8 rows at `p` (rows 0-3,
/// `lda` floats apart) and `q` (rows 4-7), element `kk`.
TFC_AVX512_INLINE void fmaStep(Acc &acc, const float *p, const float *q,
                               long lda, long kk, const float *bk) {
  __m512 b0 = _mm512_loadu_ps(bk);
  __m512 b1 = _mm512_loadu_ps(bk + 16);
  __m512 b2 = _mm512_loadu_ps(bk + 32);
  const float *rows[2] = {p, q};
#pragma GCC unroll 8
  for (int m = 0; m < kTileRows; ++m) {
    __m512 x = _mm512_set1_ps(rows[m / 4][kk + (m % 4) * lda]);
    acc.v[m][0] = _mm512_fmadd_ps(x, b0, acc.v[m][0]);
    acc.v[m][1] = _mm512_fmadd_ps(x, b1, acc.v[m][1]);
    acc.v[m][2] = _mm512_fmadd_ps(x, b2, acc.v[m][2]);
  }
}

/// 8 rows of A (`lda` floats apart) times one panel (K rows of 48), over K =
/// `k`, into `c` (rows `ldc` floats apart, 48 columns). Every kStepsPerPrefetch
/// steps, `pf` takes a step; with `ahead`, the panel's rows kAhead steps on are
/// prefetched into L1 (prefetches never fault: past the panel's end they fetch
/// the next).
TFC_AVX512_TARGET void tile8(const float *a, long lda, const float *panel,
                             int k, float *c, long ldc, PanelPrefetch &pf,
                             bool ahead) {
  Acc acc;
  for (int m = 0; m < kTileRows; ++m)
    for (int j = 0; j < kVectors; ++j)
      acc.v[m][j] = _mm512_setzero_ps();
  const float *p = a, *q = a + 4 * lda;
  long kk = 0;
  for (; kk + kStepsPerPrefetch <= k; kk += kStepsPerPrefetch) {
    pf.step();
    const float *bk = panel + kk * kPanel;
    if (ahead) {
      const char *f = reinterpret_cast<const char *>(bk + kAhead * kPanel);
      for (int i = 0; i < kStepsPerPrefetch * kPanel * 4; i += 64)
        _mm_prefetch(f + i, _MM_HINT_T0);
    }
#pragma GCC unroll 4
    for (int s = 0; s < kStepsPerPrefetch; ++s)
      fmaStep(acc, p, q, lda, kk + s, bk + s * kPanel);
  }
  for (; kk < k; ++kk)
    fmaStep(acc, p, q, lda, kk, panel + kk * kPanel);
#pragma GCC unroll 8
  for (int m = 0; m < kTileRows; ++m)
    for (int j = 0; j < kVectors; ++j)
      _mm512_storeu_ps(c + m * ldc + j * 16, acc.v[m][j]);
}

/// The row tiles of `blk` times the panels under its columns.
void product2D(const Block2D<float> &blk, const float *panels, int k,
               PanelPrefetch &pf) {
  alignas(64) float edge[kTileRows * kPanel];
  // A last, shorter row tile, padded once for all the block's panels.
  thread_local std::vector<float> pad;
  int fullRows = blk.rows / kTileRows * kTileRows;
  const float *tail =
      fullRows < blk.rows ? padRows(blk, fullRows, kTileRows, k, pad) : nullptr;
  int end = blk.col0 + blk.cols;
  for (int p = blk.col0 / kPanel; p * kPanel < end; ++p) {
    const float *panel = panels + long(p) * k * kPanel;
    // The panel's columns in the block: [lo, hi) of its 48.
    int lo = std::max(blk.col0 - p * kPanel, 0);
    int hi = std::min(end - p * kPanel, kPanel);
    float *c = blk.c + (p * kPanel + lo - blk.col0);
    for (int r = 0; r < blk.rows; r += kTileRows) {
      bool full = r < fullRows;
      const float *a = full ? blk.a + r * blk.lda : tail;
      long lda = full ? blk.lda : k;
      if (full && lo == 0 && hi == kPanel) {
        tile8(a, lda, panel, k, c + r * blk.ldc, blk.ldc, pf, r == 0);
        continue;
      }
      tile8(a, lda, panel, k, edge, kPanel, pf, r == 0);
      for (int i = 0; i < kTileRows && r + i < blk.rows; ++i)
        std::memcpy(c + (r + i) * blk.ldc, edge + i * kPanel + lo,
                    size_t(hi - lo) * 4);
    }
  }
}

/// The prefetch of one call (PanelBlocks.h), spread over its steps: row
/// tiles of each batch entry and panel, each K / kStepsPerPrefetch of them.
PanelPrefetch planPrefetch(const halide_buffer_t *a, const halide_buffer_t *b,
                           int k, const void *result, bool rowsOuter,
                           const halide_buffer_t *out) {
  PanelPrefetch pf =
      planPanelPrefetch(a, out, b->host, long(k) * kPanel * 4, b->dim[2].extent,
                        kPanel, result, rowsOuter);
  int col0 = out->dim[0].min, end = col0 + out->dim[0].extent;
  long panels = (end + kPanel - 1) / kPanel - col0 / kPanel;
  long entries = batchEntries(out);
  long tiles = (out->dim[1].extent + kTileRows - 1) / kTileRows;
  pf.spread(entries * panels * tiles *
            ((k + kStepsPerPrefetch - 1) / kStepsPerPrefetch));
  return pf;
}
#endif

/// Why the buffers cannot be read as the header says, or "".
std::string checkBuffers(const halide_buffer_t *a, const halide_buffer_t *b,
                         int32_t k, int32_t n, const halide_buffer_t *out) {
  auto isF32 = [](const halide_buffer_t *buf) {
    return buf->type.code == halide_type_float && buf->type.bits == 32;
  };
  if (k <= 0 || n <= 0)
    return "K and N must be positive";
  if (!isF32(a) || !isF32(b) || !isF32(out) || b->dimensions != 3)
    return "expects f32 activations, panels and result";
  if (b->dim[0].extent != kPanel || b->dim[1].extent != k ||
      b->dim[0].stride != 1 || b->dim[1].stride != kPanel ||
      b->dim[2].stride != long(k) * kPanel)
    return "the panels are not dense [panels, K, 48]";
  if (std::string rows = checkBlockRows(a, k, out); !rows.empty())
    return rows;
  if (out->dim[0].min < 0 ||
      out->dim[0].min + out->dim[0].extent > b->dim[2].extent * kPanel)
    return "the block's columns are not within the panels";
  return "";
}
} // namespace

bool tfc::codegen::hostHasF32PanelStage() {
  static const bool has = avx512fStageAllowed("TFC_HOST_NO_F32_PANEL_STAGE");
  return has;
}

extern "C" int tfc_panel_matmul_f32(halide_buffer_t *a, halide_buffer_t *b,
                                    int32_t k, int32_t n, const void *result,
                                    int32_t rows_outer, halide_buffer_t *out) {
  StageCall call = beginStageCall(
      kPanelMatmulSymbol, {a, b, out},
      [&] {
        answerBlockQuery(a, b, k, out, {kPanel, k, (n + kPanel - 1) / kPanel});
      },
      [&] { return checkBuffers(a, b, k, n, out); }, hostHasF32PanelStage(),
      "this process cannot use AVX-512F");
  if (call != StageCall::Compute)
    return call == StageCall::Answered ? 0 : -1;
#if defined(__x86_64__)
  PanelPrefetch pf = planPrefetch(a, b, k, result, rows_outer != 0, out);
  forEachBlock2D<float>(a, out, [&](const Block2D<float> &blk) {
    product2D(blk, reinterpret_cast<const float *>(b->host), k, pf);
  });
  return 0;
#else
  return -1;
#endif
}
