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
// weights rotate over 12 copies, as a 12-layer model's (12 copies of a
// BERT-base weight, 28-113 MB, may stay in a large L3: tile_levels.cpp
// times L3 and DRAM apart).
//
// Two block shapes are timed in turn in one process, with 20 bursts of the
// fp32 FMA peak loop (panel_tile.h) after each pair; it prints each shape's
// median as a percentage of the fastest burst, as tfc bench --profile does.
// (Until session 21 it divided by the median of one burst per pair, which
// on this host read 8-12 % below the fastest: its session 20 percentages
// are that much higher than tfc bench --profile's.)
//
//   g++ -O3 -std=c++17 -o /tmp/panel_blocks bench/panel_blocks.cpp
//   taskset -c 0 /tmp/panel_blocks M K N REPS BM1 BP1 BM2 BP2
//   e.g. taskset -c 0 /tmp/panel_blocks 1024 3072 768 16 128 2 128 1
//
// Session 20 (Emerald Rapids, L2 2 MiB): at K = 3072 one panel per block
// beats two by 4-5 points at M = 128 and 1024; at K = 768 two panels are
// level or 1-4 points ahead.
#include "panel_tile.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

using namespace panel_tile;

namespace {
constexpr int kCopies = 12;

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
      if (r0 + bm >= s.m && p0 + bp < count)
        pf.spread(panels + (p0 + bp) * panelFloats, bp * panelFloats * 4,
                  long(bp) * (bm / kRows) * (s.k / kSteps));
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
    for (double g : peakBursts(20))
      peaks.push_back(g);
  }
  double peakGflops = best(peaks);
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
