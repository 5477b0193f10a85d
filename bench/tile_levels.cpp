// Where the fp32 panel tile's operands come from, and what each level costs
// it (docs/benchmarks.md, "Session 21").
//
// The tile of codegen/PanelMatmul.cpp (panel_tile.h: 8 rows x one panel of
// 48 columns, 24 AVX-512 accumulators) runs over every row tile of A and
// every panel of a weight, panel by panel (the stage's order, columns
// outermost), in cases that differ only in where A and the panels are read
// from:
//
//   L1           M = 32, K = 128, 1 panel: A 16 KiB, the panel 24 KiB;
//   L2           M = 128, K = 768, 4 panels: A 384 KiB, panels 576 KiB
//                (together more than a 1 MiB L2, as Zen 5's);
//   L2, 1 panel  M = 128, K = 768, 1 panel: A 384 KiB, the panel 144 KiB,
//                within a 1 MiB L2 as well;
//   L3           M = 128, K = 768, 64 panels (BERT's FFN up, 9 MiB): the same
//                weight every time, so from L3 after the first;
//   DRAM         the same, each time another of copies filling 1 GiB (more
//                than this host's L3);
//   DRAM, no pf  the same without the prefetch below;
//   A from L3    M = 1024 (BERT b8), K = 768, 64 panels from L3: each panel's
//                row tiles read all of A (3 MiB, more than L2).
//
// All storage is in transparent huge pages, as tfc's weights. But for the
// one-panel cases and "DRAM, no pf", each panel's row tiles prefetch the next
// panel into L2 (prefetcht1, spread over their steps), as the stage prefetches
// its next block.
//
// Each round times every case once, then 20 bursts of the FMA peak loop;
// it prints each case's median GFLOP/s as a percentage of the fastest burst
// (the peak tfc bench --profile reports) and of the bursts' median.
//
//   g++ -O3 -std=c++17 -o /tmp/tile_levels bench/tile_levels.cpp
//   taskset -c 0 /tmp/tile_levels [ROUNDS]
#include "panel_tile.h"

#include <sys/mman.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

using namespace panel_tile;

namespace {
struct Case {
  std::string name;
  int m, k, panels;
  long copies; // weights read in turn
  bool prefetch;
  int reps; // products per timing
};

/// `bytes` of storage in transparent huge pages, filled with `value`s.
float *allocate(size_t bytes, float value) {
  bytes = (bytes + (2u << 20) - 1) / (2u << 20) * (2u << 20);
  auto *p = static_cast<float *>(std::aligned_alloc(2u << 20, bytes));
  if (!p)
    return nullptr;
  madvise(p, bytes, MADV_HUGEPAGE);
  std::fill(p, p + bytes / 4, value);
  return p;
}

/// One product A x W (W: `c.panels` panels of K x 48) into `out`, panel by
/// panel; with `c.prefetch`, each panel's row tiles fetch the next panel
/// into L2.
void product(const Case &c, const float *a, const float *w, float *out) {
  long panelFloats = long(c.k) * kPanel;
  long tiles = c.m / kRows;
  for (int p = 0; p < c.panels; ++p) {
    const float *panel = w + p * panelFloats;
    for (long t = 0; t < tiles; ++t) {
      Prefetch pf;
      if (c.prefetch && p + 1 < c.panels)
        pf.spread(reinterpret_cast<const char *>(panel + panelFloats) +
                      panelFloats * 4 * t / tiles,
                  panelFloats * 4 / tiles, c.k / kSteps);
      tile8(a + t * kRows * c.k, c.k, panel, c.k,
            out + t * kRows * c.panels * kPanel + p * kPanel,
            long(c.panels) * kPanel, pf, t == 0);
    }
  }
}
} // namespace

int main(int argc, char **argv) {
  int rounds = argc > 1 ? std::atoi(argv[1]) : 15;
  if (rounds < 1) {
    std::fprintf(stderr, "usage: %s [ROUNDS]\n", argv[0]);
    return 2;
  }
  long dramCopies = (1l << 30) / (768l * 64 * kPanel * 4) + 1;
  std::vector<Case> cases = {
      {"L1", 32, 128, 1, 1, false, 1000},
      {"L2", 128, 768, 4, 1, true, 40},
      {"L2, 1 panel", 128, 768, 1, 1, false, 160},
      {"L3", 128, 768, 64, 1, true, 4},
      {"DRAM", 128, 768, 64, dramCopies, true, 4},
      {"DRAM, no pf", 128, 768, 64, dramCopies, false, 4},
      {"A from L3", 1024, 768, 64, 1, true, 1},
  };
  std::vector<float *> weights, as, outs;
  for (const Case &c : cases) {
    long wFloats = long(c.k) * c.panels * kPanel;
    weights.push_back(allocate(size_t(wFloats * c.copies) * 4, 1e-3f));
    as.push_back(allocate(size_t(c.m) * c.k * 4, 2e-3f));
    outs.push_back(allocate(size_t(c.m) * c.panels * kPanel * 4, 0));
    if (!weights.back() || !as.back() || !outs.back()) {
      std::fprintf(stderr, "out of memory\n");
      return 1;
    }
  }
  std::vector<std::vector<double>> gflops(cases.size());
  std::vector<double> peaks;
  std::vector<long> next(cases.size(), 0);
  for (int r = 0; r < rounds; ++r) {
    for (size_t i = 0; i < cases.size(); ++i) {
      const Case &c = cases[i];
      long wFloats = long(c.k) * c.panels * kPanel;
      double t0 = now();
      for (int rep = 0; rep < c.reps; ++rep)
        product(c, as[i], weights[i] + (next[i]++ % c.copies) * wFloats,
                outs[i]);
      gflops[i].push_back(2.0 * c.m * wFloats * c.reps / (now() - t0) / 1e9);
    }
    for (double g : peakBursts(20))
      peaks.push_back(g);
  }
  double top = best(peaks), mid = median(peaks);
  std::printf("FMA peak: fastest burst %.1f GFLOP/s, median %.1f (%d rounds)\n",
              top, mid, rounds);
  std::printf("%-13s %10s %10s %12s\n", "case", "GFLOP/s", "% fastest",
              "% median");
  for (size_t i = 0; i < cases.size(); ++i) {
    double g = median(gflops[i]);
    std::printf("%-13s %10.1f %10.1f %12.1f\n", cases[i].name.c_str(), g,
                100 * g / top, 100 * g / mid);
  }
  for (size_t i = 0; i < cases.size(); ++i) {
    std::free(weights[i]);
    std::free(as[i]);
    std::free(outs[i]);
  }
  return 0;
}
