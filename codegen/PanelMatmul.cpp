//===- PanelMatmul.cpp - Products on weight panels, prefetched ------------===//
//
// The extern stages of PanelMatmul.h, fp32 and bf16: one tile, templated on
// its step of K (F32Step: one element, 24 FMAs; Bf16Step: a pair of K, 24
// vdpbf16ps). One call computes a block of the result
// (the columns of a few panels by up to ~128 rows, as the kernel's schedule
// asks):
//  1. panel by panel, the block's rows are taken 8 at a time (a row tile);
//     a last, shorter tile's rows are copied once (per batch entry) into a
//     thread-local buffer padded with zero rows;
//  2. a tile's 24 accumulators (8 rows x 3 vectors of 16 columns) run over
//     all of K in order: per step, 3 vectors of the panel's row, 8
//     broadcasts of A (an element, or a pair of bf16), 24 FMAs (or
//     vdpbf16ps); 4 steps per loop iteration (one step per iteration lost
//     ~4 % to the loop's own instructions at M = 1024);
//  3. the accumulators are stored into the result, or through a small
//     buffer where the tile is cut by the block's edge;
//  4. the panels come from DRAM the first time. Every 4 steps of K, a few
//     cache lines of the panels of the block this thread most likely
//     computes next are prefetched into L2 (PanelBlocks.h), and the first
//     row tile of each panel prefetches the panel's rows kAhead steps ahead
//     into L1 (for a block the guess missed: the first of a thread's chunk
//     of blocks, or one it helps another thread with);
//  5. where the kernel says A comes from beyond L2 (prefetch_a), each tile
//     prefetches its rows of A a few lines ahead into L1, two rows per 4
//     steps: 8 streams of single floats are more than the hardware's
//     prefetchers keep ahead of from L3 (BERT-base b8's FFN down-projection,
//     A 12 MB: 86 -> 91 % of the FMA peak; docs/benchmarks.md, "Session 25");
//  6. while counting is on (tfc bench --profile, startPanelTileCounts), each
//     tile's time-stamp-counter ticks are added up per K and kind of tile.
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
#include <atomic>
#include <chrono>
#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#include <x86intrin.h>
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
/// How many cache lines ahead a tile prefetches its rows of A, where the
/// kernel asks for it (prefetch_a): of 2, 4, 6 and 8, compared on BERT-base
/// b8 (docs/benchmarks.md, "Session 25"), 4 was the fastest.
constexpr int kALinesAhead = 4;

//===----------------------------------------------------------------------===//
// Tile counts (startPanelTileCounts)
//===----------------------------------------------------------------------===//

/// The tiles of one K, element type and kind; `key` is 0 while the slot is
/// free (tileKey otherwise).
struct TileSlot {
  std::atomic<int64_t> key{0};
  std::atomic<uint64_t> tiles{0}, ticks{0};
};
/// More (K, type, kind) than a model has (BERT and GPT-2: 4).
constexpr int kTileSlots = 64;
TileSlot gTileSlots[kTileSlots];
std::atomic<bool> gCountTiles{false};
/// The time-stamp counter and the clock when counting started.
uint64_t gStartTicks = 0;
std::chrono::steady_clock::time_point gStartTime;

int64_t tileKey(int k, bool bf16, bool first) {
  return (int64_t(k) << 2 | int64_t(bf16) << 1 | int64_t(first)) + 1;
}

/// Adds one tile of `ticks` to its slot (none once all slots are taken).
void countTile(int k, bool bf16, bool first, uint64_t ticks) {
  int64_t key = tileKey(k, bf16, first);
  for (TileSlot &slot : gTileSlots) {
    int64_t seen = slot.key.load(std::memory_order_relaxed);
    if (seen == 0 && slot.key.compare_exchange_strong(seen, key))
      seen = key;
    if (seen != key)
      continue;
    slot.tiles.fetch_add(1, std::memory_order_relaxed);
    slot.ticks.fetch_add(ticks, std::memory_order_relaxed);
    return;
  }
}

/// The time-stamp counter, where it runs at a constant rate (CPUID
/// 0x80000007: EDX bit 8, "invariant TSC"); else 0.
uint64_t readTicks() {
#if defined(__x86_64__)
  static const bool invariant = [] {
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    return __get_cpuid(0x80000007, &eax, &ebx, &ecx, &edx) &&
           (edx & (1u << 8)) != 0;
  }();
  return invariant ? __rdtsc() : 0;
#else
  return 0;
#endif
}

#if defined(__x86_64__)
// One target for both tiles (a template cannot take its target from its
// argument): the fp32 tile's code uses no AVX512_BF16 instruction and is
// the same as with AVX-512F alone; only the bf16 stage's calls need the CPU
// to have it (hostHasBf16PanelStage).
#define TFC_PANEL_TARGET __attribute__((target("avx512f,avx512bf16,prfchw")))

#define TFC_PANEL_INLINE                                                       \
  __attribute__((target("avx512f,avx512bf16,prfchw"), always_inline)) inline

/// The tile's accumulators: 8 rows x 3 vectors of 16 columns.
struct Acc {
  __m512 v[kTileRows][kVectors];
};

/// fp32 panels: one step is one element of K; FMAs.
struct F32Step {
  using Elem = float;
  static constexpr int kPerStep = 1;
  /// One step: the panel's row at `bk` times A's 8 rows at `p` (rows 0-3,
  /// `lda` elements apart) and `q` (rows 4-7), element `kk`.
  TFC_PANEL_INLINE static void apply(Acc &acc, const float *p, const float *q,
                                     long lda, long kk, const float *bk) {
    __m512 b[kVectors];
    for (int j = 0; j < kVectors; ++j)
      b[j] = _mm512_loadu_ps(bk + 16 * j);
    const float *rows[2] = {p, q};
#pragma GCC unroll 8
    for (int m = 0; m < kTileRows; ++m) {
      __m512 x = _mm512_set1_ps(rows[m / 4][kk + (m % 4) * lda]);
      for (int j = 0; j < kVectors; ++j)
        acc.v[m][j] = _mm512_fmadd_ps(x, b[j], acc.v[m][j]);
    }
  }
};

/// A pair of bf16, read as one 32-bit lane.
typedef int32_t Bf16Pair __attribute__((may_alias, aligned(2)));

/// bf16 panels (pairs of K side by side): one step is a pair of K;
/// vdpbf16ps adds both products of a pair to the f32 accumulator.
struct Bf16Step {
  using Elem = uint16_t;
  static constexpr int kPerStep = 2;
  TFC_PANEL_INLINE static void apply(Acc &acc, const uint16_t *p,
                                     const uint16_t *q, long lda, long kk,
                                     const uint16_t *bk) {
    __m512bh b[kVectors];
    for (int j = 0; j < kVectors; ++j)
      b[j] = (__m512bh)_mm512_loadu_si512(bk + 32 * j);
    const uint16_t *rows[2] = {p, q};
#pragma GCC unroll 8
    for (int m = 0; m < kTileRows; ++m) {
      __m512bh x =
          (__m512bh)_mm512_set1_epi32(*reinterpret_cast<const Bf16Pair *>(
              rows[m / 4] + kk + (m % 4) * lda));
      for (int j = 0; j < kVectors; ++j)
        acc.v[m][j] = _mm512_dpbf16_ps(acc.v[m][j], x, b[j]);
    }
  }
};

/// 8 rows of A (`lda` elements apart) times one panel (K rows of 48, or K / 2
/// rows of 48 pairs), over K = `k`, into `c` (rows `ldc` floats apart, 48
/// columns). Every kStepsPerPrefetch steps, `pf` takes a step; with `ahead`,
/// the panel's rows kAhead steps on are prefetched into L1; with
/// `PrefetchA`, A's rows kALinesAhead lines on (prefetches never fault: past
/// the panel's or a row's end they fetch what follows).
template <typename Step, bool PrefetchA>
TFC_PANEL_TARGET void tile8(const typename Step::Elem *a, long lda,
                            const typename Step::Elem *panel, int k, float *c,
                            long ldc, PanelPrefetch &pf, bool ahead) {
  constexpr int kStep = Step::kPerStep;
  // Bytes of one step's row of a panel: 48 f32, or 48 pairs of bf16.
  constexpr int kStepBytes = kPanel * kStep * sizeof(typename Step::Elem);
  Acc acc;
  for (int m = 0; m < kTileRows; ++m)
    for (int j = 0; j < kVectors; ++j)
      acc.v[m][j] = _mm512_setzero_ps();
  const typename Step::Elem *p = a, *q = a + 4 * lda;
  long kk = 0;
  // A step's row of the panel starts kk * 48 elements in (both layouts).
  // A line of A holds a row's elements of 4 iterations (16 floats, 16 pairs
  // of bf16): each iteration prefetches two of the 8 rows, so every row's
  // lines once each.
  constexpr long kLineElems = 64 / sizeof(typename Step::Elem);
  static_assert(kLineElems == 4 * kStepsPerPrefetch * kStep,
                "two rows per iteration cover the 8 rows once per line");
  int pair = 0;
  for (; kk + kStepsPerPrefetch * kStep <= k; kk += kStepsPerPrefetch * kStep) {
    pf.step();
    if constexpr (PrefetchA) {
      const typename Step::Elem *row =
          (pair < 2 ? p : q) + (pair % 2) * 2 * lda;
      const char *at =
          reinterpret_cast<const char *>(row + kk + kALinesAhead * kLineElems);
      _mm_prefetch(at, _MM_HINT_T0);
      _mm_prefetch(at + lda * sizeof(typename Step::Elem), _MM_HINT_T0);
      pair = (pair + 1) & 3;
    }
    const typename Step::Elem *bk = panel + kk * kPanel;
    if (ahead) {
      const char *f = reinterpret_cast<const char *>(bk) + kAhead * kStepBytes;
      for (int i = 0; i < kStepsPerPrefetch * kStepBytes; i += 64)
        _mm_prefetch(f + i, _MM_HINT_T0);
    }
#pragma GCC unroll 4
    for (int s = 0; s < kStepsPerPrefetch; ++s)
      Step::apply(acc, p, q, lda, kk + s * kStep, bk + s * kStep * kPanel);
  }
  for (; kk < k; kk += kStep)
    Step::apply(acc, p, q, lda, kk, panel + kk * kPanel);
#pragma GCC unroll 8
  for (int m = 0; m < kTileRows; ++m)
    for (int j = 0; j < kVectors; ++j)
      _mm512_storeu_ps(c + m * ldc + j * 16, acc.v[m][j]);
}

/// The row tiles of `blk` times the panels under its columns (a panel is
/// K x 48 elements in both layouts).
template <typename Step, bool PrefetchA>
void product2D(const Block2D<typename Step::Elem> &blk,
               const typename Step::Elem *panels, int k, PanelPrefetch &pf) {
  using Elem = typename Step::Elem;
  alignas(64) float edge[kTileRows * kPanel];
  // A last, shorter row tile, padded once for all the block's panels.
  thread_local std::vector<Elem> pad;
  int fullRows = blk.rows / kTileRows * kTileRows;
  const Elem *tail =
      fullRows < blk.rows ? padRows(blk, fullRows, kTileRows, k, pad) : nullptr;
  int end = blk.col0 + blk.cols;
  for (int p = blk.col0 / kPanel; p * kPanel < end; ++p) {
    const Elem *panel = panels + long(p) * k * kPanel;
    // The panel's columns in the block: [lo, hi) of its 48.
    int lo = std::max(blk.col0 - p * kPanel, 0);
    int hi = std::min(end - p * kPanel, kPanel);
    float *c = blk.c + (p * kPanel + lo - blk.col0);
    for (int r = 0; r < blk.rows; r += kTileRows) {
      bool full = r < fullRows;
      const Elem *a = full ? blk.a + r * blk.lda : tail;
      long lda = full ? blk.lda : k;
      bool count = gCountTiles.load(std::memory_order_relaxed);
      uint64_t start = count ? readTicks() : 0;
      if (full && lo == 0 && hi == kPanel) {
        tile8<Step, PrefetchA>(a, lda, panel, k, c + r * blk.ldc, blk.ldc, pf,
                               r == 0);
      } else {
        tile8<Step, PrefetchA>(a, lda, panel, k, edge, kPanel, pf, r == 0);
        for (int i = 0; i < kTileRows && r + i < blk.rows; ++i)
          std::memcpy(c + (r + i) * blk.ldc, edge + i * kPanel + lo,
                      size_t(hi - lo) * 4);
      }
      if (count)
        countTile(k, Step::kPerStep == 2, r == 0, readTicks() - start);
    }
  }
}

/// The prefetch of one call (PanelBlocks.h), spread over its steps: row
/// tiles of each batch entry and panel, each K / (kStepsPerPrefetch steps)
/// of them. The panels are `b`'s outermost dim.
template <typename Step>
PanelPrefetch planPrefetch(const halide_buffer_t *a, const halide_buffer_t *b,
                           int k, const void *result, bool rowsOuter,
                           const halide_buffer_t *out) {
  PanelPrefetch pf = planPanelPrefetch(
      a, out, b->host, long(k) * kPanel * sizeof(typename Step::Elem),
      b->dim[b->dimensions - 1].extent, kPanel, result, rowsOuter);
  int col0 = out->dim[0].min, end = col0 + out->dim[0].extent;
  long panels = (end + kPanel - 1) / kPanel - col0 / kPanel;
  long entries = batchEntries(out);
  long tiles = (out->dim[1].extent + kTileRows - 1) / kTileRows;
  int perIteration = kStepsPerPrefetch * Step::kPerStep;
  pf.spread(entries * panels * tiles * ((k + perIteration - 1) / perIteration));
  return pf;
}

/// One call of the stage on `Step`'s elements: the prefetch, then every
/// batch entry of the block (its tiles prefetching their rows of A where
/// `prefetchA`).
template <typename Step>
void computeBlock(halide_buffer_t *a, halide_buffer_t *b, int32_t k,
                  const void *result, int32_t rowsOuter, int32_t prefetchA,
                  halide_buffer_t *out) {
  using Elem = typename Step::Elem;
  PanelPrefetch pf = planPrefetch<Step>(a, b, k, result, rowsOuter != 0, out);
  const Elem *panels = reinterpret_cast<const Elem *>(b->host);
  forEachBlock2D<Elem>(a, out, [&](const Block2D<Elem> &blk) {
    if (prefetchA != 0)
      product2D<Step, true>(blk, panels, k, pf);
    else
      product2D<Step, false>(blk, panels, k, pf);
  });
}
#endif

/// Why the block `out` is not within the `panelCount` panels, or "".
std::string checkColumns(const halide_buffer_t *out, int32_t panelCount) {
  if (out->dim[0].min < 0 ||
      out->dim[0].min + out->dim[0].extent > long(panelCount) * kPanel)
    return "the block's columns are not within the panels";
  return "";
}

/// Why the f32 stage's buffers cannot be read as the header says, or "".
std::string checkF32Buffers(const halide_buffer_t *a, const halide_buffer_t *b,
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
  return checkColumns(out, b->dim[2].extent);
}

/// Why the bf16 stage's buffers cannot be read as the header says, or "".
std::string checkBf16Buffers(const halide_buffer_t *a, const halide_buffer_t *b,
                             int32_t k, int32_t n, const halide_buffer_t *out) {
  if (k <= 0 || k % 2 != 0 || n <= 0)
    return "K must be positive and even, N positive";
  if (a->type.code != halide_type_bfloat || a->type.bits != 16 ||
      b->type.bits != 16 || b->dimensions != 4 ||
      out->type.code != halide_type_float || out->type.bits != 32)
    return "expects bf16 activations and panels, an f32 result";
  if (b->dim[0].extent != 2 || b->dim[1].extent != kPanel ||
      b->dim[2].extent != k / 2 || b->dim[0].stride != 1 ||
      b->dim[1].stride != 2 || b->dim[2].stride != 2 * kPanel ||
      b->dim[3].stride != long(k) * kPanel)
    return "the panels are not dense [panels, K / 2, 48, 2]";
  if (std::string rows = checkBlockRows(a, k, out); !rows.empty())
    return rows;
  return checkColumns(out, b->dim[3].extent);
}
} // namespace

void tfc::codegen::startPanelTileCounts() {
  gCountTiles.store(false);
  for (TileSlot &slot : gTileSlots) {
    slot.key.store(0);
    slot.tiles.store(0);
    slot.ticks.store(0);
  }
  gStartTime = std::chrono::steady_clock::now();
  gStartTicks = readTicks();
  gCountTiles.store(true);
}

std::vector<PanelTileCount> tfc::codegen::stopPanelTileCounts() {
  gCountTiles.store(false);
  uint64_t ticks = readTicks() - gStartTicks;
  double seconds = std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - gStartTime)
                       .count();
  std::vector<PanelTileCount> counts;
  if (gStartTicks == 0 || ticks == 0 || seconds <= 0)
    return counts;
  double ticksPerSecond = double(ticks) / seconds;
  for (TileSlot &slot : gTileSlots) {
    int64_t key = slot.key.load() - 1;
    if (key < 0)
      continue;
    PanelTileCount c;
    c.k = static_cast<int32_t>(key >> 2);
    c.bf16 = (key & 2) != 0;
    c.first = (key & 1) != 0;
    c.tiles = slot.tiles.load();
    c.flops = 2.0 * kTileRows * kPanel * double(c.k) * double(c.tiles);
    c.seconds = double(slot.ticks.load()) / ticksPerSecond;
    counts.push_back(c);
  }
  std::sort(counts.begin(), counts.end(),
            [](const PanelTileCount &x, const PanelTileCount &y) {
              return std::tie(x.k, x.bf16, x.first) <
                     std::tie(y.k, y.bf16, y.first);
            });
  return counts;
}

bool tfc::codegen::hostHasF32PanelStage() {
  static const bool has = avx512fStageAllowed("TFC_HOST_NO_F32_PANEL_STAGE");
  return has;
}

bool tfc::codegen::hostHasBf16PanelStage() {
#if defined(__x86_64__)
  static const bool has = avx512fStageAllowed("TFC_HOST_NO_BF16_PANEL_STAGE") &&
                          __builtin_cpu_supports("avx512bf16") != 0;
  return has;
#else
  return false;
#endif
}

extern "C" int tfc_panel_matmul_f32(halide_buffer_t *a, halide_buffer_t *b,
                                    int32_t k, int32_t n, const void *result,
                                    int32_t rows_outer, int32_t prefetch_a,
                                    halide_buffer_t *out) {
  StageCall call = beginStageCall(
      kPanelMatmulSymbol, {a, b, out},
      [&] {
        answerBlockQuery(a, b, k, out, {kPanel, k, (n + kPanel - 1) / kPanel});
      },
      [&] { return checkF32Buffers(a, b, k, n, out); }, hostHasF32PanelStage(),
      "this process cannot use AVX-512F");
  if (call != StageCall::Compute)
    return call == StageCall::Answered ? 0 : -1;
#if defined(__x86_64__)
  computeBlock<F32Step>(a, b, k, result, rows_outer, prefetch_a, out);
  return 0;
#else
  return -1;
#endif
}

extern "C" int tfc_panel_matmul_bf16(halide_buffer_t *a, halide_buffer_t *b,
                                     int32_t k, int32_t n, const void *result,
                                     int32_t rows_outer, int32_t prefetch_a,
                                     halide_buffer_t *out) {
  StageCall call = beginStageCall(
      kBf16PanelMatmulSymbol, {a, b, out},
      [&] {
        answerBlockQuery(a, b, k, out,
                         {2, kPanel, k / 2, (n + kPanel - 1) / kPanel});
      },
      [&] { return checkBf16Buffers(a, b, k, n, out); },
      hostHasBf16PanelStage(), "this process cannot use AVX512_BF16");
  if (call != StageCall::Compute)
    return call == StageCall::Answered ? 0 : -1;
#if defined(__x86_64__)
  computeBlock<Bf16Step>(a, b, k, result, rows_outer, prefetch_a, out);
  return 0;
#else
  return -1;
#endif
}
