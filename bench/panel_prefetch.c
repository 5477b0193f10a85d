/* What a software prefetch of the next weight panel would give tfc's fp32
 * linears (docs/benchmarks.md, "fp32 on this machine").
 *
 * A C model of the CPU tile of codegen/MatmulKernel.cpp: the weight in
 * column panels of 48 ([N / 48, K, 48], as tfc.pack_panels lays it out), the
 * result in tiles of 8 rows x 48 columns, 24 AVX-512 accumulators, k
 * outermost in the tile (3 panel vectors and 8 broadcasts of A per step).
 * Panels outermost, the row tiles of a panel one after another, so the
 * first row tile reads the panel from DRAM and the others from L2.
 *
 * Variant "prefetch": each row tile also prefetches (prefetcht1, one cache
 * line every 5 steps of K) its 1/16 share of the next panel, so that the
 * next panel is in L2 when its first row tile starts. Halide 14 cannot
 * emit this: its prefetch directive is prefetchnta.
 *
 * Shapes: BERT's FFN up-projection, M = 128, K = 768, N = 3072. "cold": 40
 * weight sets (377 MB, more than this machine's share of L3) taken in
 * turn, as a model's 12 layers do; "hot": one weight set again and again.
 * Prints GFLOP/s; compare with the FMA peak of `tfc bench --profile`.
 *
 *   cc -O2 -o /tmp/panel_prefetch bench/panel_prefetch.c
 *   taskset -c 0 /tmp/panel_prefetch
 *
 * Session 12 (Emerald Rapids; its FMA peak read 148-175 GFLOP/s in those
 * minutes), 6 rounds in two runs: cold plain 113-131, prefetch 127-166
 * GFLOP/s (5 of 6 rounds 159-166); hot plain 124-149, prefetch 131-168.
 */
#include <immintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { K = 768, N = 3072, M = 128, PANEL = 48, PANELS = N / PANEL, SETS = 40 };
enum { TILES = M / 8, LINES = K * PANEL * 4 / 64, SHARE = LINES / TILES };

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

/* C[M, N] = A[M, K] x panels; with `prefetch`, each row tile fetches its
 * share of the next panel into L2 while it computes. */
__attribute__((target("avx512f"), noinline)) static void
linear(const float *a, const float *panels, float *c, int prefetch) {
  for (int p = 0; p < PANELS; ++p) {
    const float *panel = panels + (long)p * K * PANEL;
    const char *next = (const char *)(panel + K * PANEL);
    for (int t = 0; t < TILES; ++t) {
      __m512 acc[24];
      for (int i = 0; i < 24; ++i)
        acc[i] = _mm512_setzero_ps();
      const float *rows = a + t * 8 * K;
      const char *line = next + (long)t * SHARE * 64;
      int fetched = 0;
      for (int k = 0; k < K; ++k) {
        if (prefetch && p + 1 < PANELS && k % 5 == 0 && fetched < SHARE) {
          _mm_prefetch(line, _MM_HINT_T1);
          line += 64;
          ++fetched;
        }
        __m512 b0 = _mm512_loadu_ps(panel + k * PANEL);
        __m512 b1 = _mm512_loadu_ps(panel + k * PANEL + 16);
        __m512 b2 = _mm512_loadu_ps(panel + k * PANEL + 32);
#pragma GCC unroll 8
        for (int m = 0; m < 8; ++m) {
          __m512 x = _mm512_set1_ps(rows[m * K + k]);
          acc[m * 3] = _mm512_fmadd_ps(x, b0, acc[m * 3]);
          acc[m * 3 + 1] = _mm512_fmadd_ps(x, b1, acc[m * 3 + 1]);
          acc[m * 3 + 2] = _mm512_fmadd_ps(x, b2, acc[m * 3 + 2]);
        }
      }
      for (int m = 0; m < 8; ++m)
        for (int j = 0; j < 3; ++j)
          _mm512_storeu_ps(c + (t * 8 + m) * N + p * PANEL + j * 16,
                           acc[m * 3 + j]);
    }
  }
}

static double gflops(const float *a, float **sets, int cold, float *c,
                     int prefetch) {
  double t = now();
  for (int s = 0; s < SETS; ++s)
    linear(a, sets[cold ? s : 0], c, prefetch);
  return 2.0 * M * N * K * SETS / (now() - t) / 1e9;
}

int main(void) {
  float *a = aligned_alloc(64, sizeof(float) * M * K);
  float *c = aligned_alloc(64, sizeof(float) * M * N);
  float *sets[SETS];
  if (!a || !c)
    return 1;
  for (int i = 0; i < M * K; ++i)
    a[i] = 1e-3f;
  for (int s = 0; s < SETS; ++s) {
    sets[s] = aligned_alloc(64, sizeof(float) * K * N);
    if (!sets[s])
      return 1;
    for (long i = 0; i < (long)K * N; ++i)
      sets[s][i] = 1e-3f;
  }
  for (int round = 0; round < 3; ++round)
    for (int cold = 1; cold >= 0; --cold)
      printf("%s: plain %.1f GFLOP/s, prefetch %.1f GFLOP/s\n",
             cold ? "cold" : "hot ", gflops(a, sets, cold, c, 0),
             gflops(a, sets, cold, c, 1));
  return 0;
}
