// What the C++ harnesses of the fp32 panel tile share (bench/panel_blocks.cpp,
// bench/tile_levels.cpp): the tile of codegen/PanelMatmul.cpp as a
// stand-alone function, and the FMA peak as tfc measures it.
//
// The tile: 8 rows of A times one weight panel of 48 columns ([K][48], as
// tfc.pack_panels lays a weight out), 24 AVX-512 accumulators, K in order,
// 4 steps per iteration, an optional L2 prefetch (prefetcht1) of other
// panels spread over the steps, and for the first row tile of a panel its
// rows kAhead steps ahead into L1.
//
// The peak: the loop of tools/tfc/MachineLimits.cpp (the tile's own
// instructions with every operand in L1), timed in bursts of ~44 us; tfc
// bench --profile takes the fastest of 300 bursts, as best(peakBursts(n))
// does of n.
#ifndef TFC_BENCH_PANEL_TILE_H
#define TFC_BENCH_PANEL_TILE_H

#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <vector>

namespace panel_tile {
constexpr int kPanel = 48, kRows = 8, kSteps = 4, kAhead = 32;
constexpr int kPeakDepth = 256, kPeakPasses = 40;

#define PANEL_TILE_AVX512 __attribute__((target("avx512f")))
#define PANEL_TILE_INLINE                                                      \
  __attribute__((target("avx512f"), always_inline)) inline

/// Other panels, fetched into L2 `lines` cache lines per step().
struct Prefetch {
  const char *next = nullptr, *end = nullptr;
  long lines = 0;
  PANEL_TILE_INLINE void step() {
    for (long i = 0; i < lines && next < end; ++i, next += 64)
      _mm_prefetch(next, _MM_HINT_T1);
  }
  /// `bytes` from `from`, spread evenly over `steps` calls of step().
  void spread(const void *from, long bytes, long steps) {
    next = static_cast<const char *>(from);
    end = next + bytes;
    lines = (bytes / 64 + steps - 1) / steps;
  }
};

struct Acc {
  __m512 v[kRows][3];
};

PANEL_TILE_INLINE void fmaStep(Acc &acc, const float *a, long lda, long k,
                               const float *bk) {
  __m512 b0 = _mm512_loadu_ps(bk), b1 = _mm512_loadu_ps(bk + 16),
         b2 = _mm512_loadu_ps(bk + 32);
#pragma GCC unroll 8
  for (int m = 0; m < kRows; ++m) {
    __m512 x = _mm512_set1_ps(a[k + m * lda]);
    acc.v[m][0] = _mm512_fmadd_ps(x, b0, acc.v[m][0]);
    acc.v[m][1] = _mm512_fmadd_ps(x, b1, acc.v[m][1]);
    acc.v[m][2] = _mm512_fmadd_ps(x, b2, acc.v[m][2]);
  }
}

/// 8 rows of A (`lda` floats apart) times one panel into c (rows ldc apart);
/// `pf` steps every kSteps steps of K; with `ahead`, the panel's rows kAhead
/// steps on are prefetched into L1, as the stage does for a panel's first
/// row tile.
__attribute__((noinline)) PANEL_TILE_AVX512 inline void
tile8(const float *a, long lda, const float *panel, int k, float *c, long ldc,
      Prefetch &pf, bool ahead) {
  Acc acc;
  for (auto &row : acc.v)
    for (__m512 &v : row)
      v = _mm512_setzero_ps();
  long kk = 0;
  for (; kk + kSteps <= k; kk += kSteps) {
    pf.step();
    const float *bk = panel + kk * kPanel;
    if (ahead)
      for (int i = 0; i < kSteps * kPanel * 4; i += 64)
        _mm_prefetch(reinterpret_cast<const char *>(bk + kAhead * kPanel) + i,
                     _MM_HINT_T0);
#pragma GCC unroll 4
    for (int s = 0; s < kSteps; ++s)
      fmaStep(acc, a, lda, kk + s, bk + s * kPanel);
  }
  for (; kk < k; ++kk)
    fmaStep(acc, a, lda, kk, panel + kk * kPanel);
  for (int m = 0; m < kRows; ++m)
    for (int j = 0; j < 3; ++j)
      _mm512_storeu_ps(c + m * ldc + j * 16, acc.v[m][j]);
}

inline double now() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

alignas(64) inline float gPeakA[kRows * kPeakDepth];
alignas(64) inline float gPeakB[kPanel * kPeakDepth];
inline volatile float gSink; // read by nobody: volatile keeps the peak loop

/// kPeakPasses passes of the peak loop: 24 accumulators, operands in L1.
__attribute__((noinline)) PANEL_TILE_AVX512 inline void peakBurst() {
  Acc acc;
  for (auto &row : acc.v)
    for (__m512 &v : row)
      v = _mm512_setzero_ps();
  for (int p = 0; p < kPeakPasses; ++p)
    for (int k = 0; k < kPeakDepth; ++k)
      fmaStep(acc, gPeakA + k * kRows, 1, 0, gPeakB + k * kPanel);
  __m512 t = _mm512_setzero_ps();
  for (auto &row : acc.v)
    for (__m512 &v : row)
      t = _mm512_add_ps(t, v);
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, t);
  float sum = 0; // every lane, or the compiler keeps only the one read
  for (float lane : lanes)
    sum += lane;
  gSink = sum;
}

/// Times `bursts` bursts of the peak loop; returns their GFLOP/s.
inline std::vector<double> peakBursts(int bursts) {
  if (gPeakA[0] == 0) {
    std::fill(std::begin(gPeakA), std::end(gPeakA), 1e-3f);
    std::fill(std::begin(gPeakB), std::end(gPeakB), 1e-3f);
  }
  std::vector<double> gflops;
  for (int i = 0; i < bursts; ++i) {
    double t0 = now();
    peakBurst();
    gflops.push_back(2.0 * 16 * 24 * kPeakDepth * kPeakPasses / (now() - t0) /
                     1e9);
  }
  return gflops;
}

/// The fastest of `gflops` (tfc bench --profile's peak).
inline double best(const std::vector<double> &gflops) {
  return *std::max_element(gflops.begin(), gflops.end());
}
} // namespace panel_tile

#endif // TFC_BENCH_PANEL_TILE_H
