// How wide the fp32 panel stage's blocks should be (docs/benchmarks.md,
// "Session 20"; codegen/MatmulKernel.cpp, kOnePanelK).
//
// A C++ model of a whole fp32 product on panels as tfc's kernels run it with
// the extern stage of codegen/PanelMatmul.cpp: the weight in column panels
// of 48 ([N / 48, K, 48], as tfc.pack_panels lays it out), the result in
// blocks of BM rows x BP panels with the column blocks outermost (the
// kernel's parallel tasks), each block computed panel by panel in row tiles
// of 8 x 48 (24 AVX-512 accumulators, K in order, 4 steps per iteration),
// the next column block's panels prefetched into L2 (prefetcht1) spread
// over the block, and the block copied into the result (the epilogue). The
// weights rotate over 12 copies, so they come from DRAM as in a 12-layer
// model.
//
// Two block shapes are timed in turn in one process, with the fp32 FMA peak
// (the loop of tools/tfc/MachineLimits.cpp) after each pair; it prints each
// shape's median as a percentage of the peak's median.
//
//   g++ -O3 -std=c++17 -o /tmp/panel_blocks bench/panel_blocks.cpp
//   taskset -c 0 /tmp/panel_blocks M K N REPS BM1 BP1 BM2 BP2
//   e.g. taskset -c 0 /tmp/panel_blocks 1024 3072 768 16 128 2 128 1
//
// Session 20 (Emerald Rapids, L2 2 MiB): at K = 3072 one panel per block
// beats two by 4-5 points at M = 128 and 1024; at K = 768 two panels are
// level or 1-4 points ahead.
#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {
constexpr int kPanel = 48, kRows = 8, kSteps = 4, kAhead = 32, kCopies = 12;

#define AVX512 __attribute__((target("avx512f")))
#define AVX512_INLINE __attribute__((target("avx512f"), always_inline)) inline

/// The next column block's panels, `lines` cache lines per step().
struct Prefetch {
  const char *next = nullptr, *end = nullptr;
  long lines = 0;
  AVX512_INLINE void step() {
    for (long i = 0; i < lines && next < end; ++i, next += 64)
      _mm_prefetch(next, _MM_HINT_T1);
  }
};

struct Acc {
  __m512 v[kRows][3];
};

AVX512_INLINE void fmaStep(Acc &acc, const float *a, long lda, long k,
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

/// 8 rows of A times one panel into c (rows ldc apart); the first row tile
/// of a panel looks kAhead steps ahead into L1, as the stage does.
__attribute__((noinline)) AVX512 void tile8(const float *a, long lda,
                                            const float *panel, int k, float *c,
                                            long ldc, Prefetch &pf,
                                            bool ahead) {
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

alignas(64) float gPeakA[8 * 256];
alignas(64) float gPeakB[48 * 256];
volatile float gSink; // read by nobody: volatile keeps the peak loop

/// 24 accumulators and the tile's loads, all in L1: the FMA peak.
__attribute__((noinline)) AVX512 void peak(int passes) {
  __m512 c[24];
  for (__m512 &v : c)
    v = _mm512_setzero_ps();
  for (int p = 0; p < passes; ++p)
    for (int k = 0; k < 256; ++k) {
      __m512 b0 = _mm512_load_ps(gPeakB + k * 48),
             b1 = _mm512_load_ps(gPeakB + k * 48 + 16),
             b2 = _mm512_load_ps(gPeakB + k * 48 + 32);
#pragma GCC unroll 8
      for (int m = 0; m < 8; ++m) {
        __m512 x = _mm512_set1_ps(gPeakA[k * 8 + m]);
        c[m * 3] = _mm512_fmadd_ps(x, b0, c[m * 3]);
        c[m * 3 + 1] = _mm512_fmadd_ps(x, b1, c[m * 3 + 1]);
        c[m * 3 + 2] = _mm512_fmadd_ps(x, b2, c[m * 3 + 2]);
      }
    }
  __m512 t = c[0];
  for (int i = 1; i < 24; ++i)
    t = _mm512_add_ps(t, c[i]);
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, t);
  float sum = 0; // every lane, or the compiler keeps only the one read
  for (float lane : lanes)
    sum += lane;
  gSink = sum;
}

double now() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

struct Shape {
  int m, k, n;
};

/// The product with blocks of bm rows x bp panels, columns outermost.
void product(const Shape &s, const float *a, const float *panels, float *c,
             int bm, int bp, std::vector<float> &blk) {
  int count = s.n / kPanel;
  long panelFloats = long(s.k) * kPanel;
  for (int p0 = 0; p0 < count; p0 += bp)
    for (int r0 = 0; r0 < s.m; r0 += bm) {
      Prefetch pf;
      if (r0 + bm >= s.m && p0 + bp < count) {
        pf.next =
            reinterpret_cast<const char *>(panels + (p0 + bp) * panelFloats);
        pf.end = pf.next + bp * panelFloats * 4;
        long steps = long(bp) * (bm / kRows) * (s.k / kSteps);
        pf.lines = ((pf.end - pf.next) / 64 + steps - 1) / steps;
      }
      for (int p = p0; p < p0 + bp; ++p)
        for (int r = 0; r < bm; r += kRows)
          tile8(a + long(r0 + r) * s.k, s.k, panels + p * panelFloats, s.k,
                blk.data() + long(r) * bp * kPanel + (p - p0) * kPanel,
                bp * kPanel, pf, r == 0);
      for (int i = 0; i < bm; ++i)
        std::memcpy(c + long(r0 + i) * s.n + p0 * kPanel,
                    blk.data() + long(i) * bp * kPanel, bp * kPanel * 4);
    }
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}
} // namespace

int main(int argc, char **argv) {
  if (argc != 9) {
    std::fprintf(stderr, "usage: %s M K N REPS BM1 BP1 BM2 BP2\n", argv[0]);
    return 2;
  }
  Shape s{std::atoi(argv[1]), std::atoi(argv[2]), std::atoi(argv[3])};
  int reps = std::atoi(argv[4]);
  int bm[2] = {std::atoi(argv[5]), std::atoi(argv[7])};
  int bp[2] = {std::atoi(argv[6]), std::atoi(argv[8])};
  for (int v = 0; v < 2; ++v)
    if (s.m % bm[v] || (s.n / kPanel) % bp[v] || s.n % kPanel || s.k < 1) {
      std::fprintf(stderr, "M must be a multiple of BM, N of 48 * BP\n");
      return 2;
    }
  long wFloats = long(s.n) * s.k;
  auto *w = static_cast<float *>(
      std::aligned_alloc(64, size_t(wFloats) * 4 * kCopies));
  auto *a = static_cast<float *>(std::aligned_alloc(64, size_t(s.m) * s.k * 4));
  auto *c = static_cast<float *>(std::aligned_alloc(64, size_t(s.m) * s.n * 4));
  for (long i = 0; i < wFloats * kCopies; ++i)
    w[i] = float(i % 97) * 1e-3f;
  for (long i = 0; i < long(s.m) * s.k; ++i)
    a[i] = float(i % 89) * 1e-3f;
  std::fill(std::begin(gPeakA), std::end(gPeakA), 1e-3f);
  std::fill(std::begin(gPeakB), std::end(gPeakB), 1e-3f);
  std::vector<float> blk(size_t(std::max(bm[0] * bp[0], bm[1] * bp[1])) *
                         kPanel);
  std::vector<double> times[2], peaks;
  int copy = 0;
  for (int r = 0; r < reps; ++r) {
    for (int v = 0; v < 2; ++v) {
      double t0 = now();
      product(s, a, w + (copy++ % kCopies) * wFloats, c, bm[v], bp[v], blk);
      times[v].push_back(now() - t0);
    }
    double t0 = now();
    peak(40);
    peaks.push_back(now() - t0);
  }
  double peakGflops = 2.0 * 16 * 24 * 256 * 40 / median(peaks) / 1e9;
  double flops = 2.0 * s.m * s.k * s.n;
  std::printf("M=%d K=%d N=%d, FMA peak %.1f GFLOP/s:", s.m, s.k, s.n,
              peakGflops);
  for (int v = 0; v < 2; ++v)
    std::printf("  %d x %d panels %.1f %%", bm[v], bp[v],
                100 * flops / median(times[v]) / 1e9 / peakGflops);
  std::printf("\n");
  std::free(w);
  std::free(a);
  std::free(c);
  return 0;
}
