/* fp32 FMA peak of this machine, for the "% of peak" in docs/benchmarks.md.
 *
 * Each thread runs the inner loop of a register-blocked matmul (24 AVX-512
 * accumulators, 3 vector loads and 8 broadcasts per 24 FMAs, all in L1) in
 * short bursts; the threads start each burst together (a barrier) and the
 * burst's FLOPs are divided by the time from the first start to the last end.
 * Short bursts matter on a shared machine: a long run measures the share of
 * the CPU the scheduler gave us, not the FMA units (a 0.8 s single loop read
 * ~118 GFLOP/s here, bursts of ~0.1 ms read ~245).
 *
 *   cc -O3 -march=native -o /tmp/fma_peak bench/fma_peak.c -lpthread
 *   /tmp/fma_peak 1; /tmp/fma_peak 2     # threads
 */
#include <immintrin.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static float A[8 * 256] __attribute__((aligned(64)));
static float B[48 * 256] __attribute__((aligned(64)));
static volatile float sink;

static void burst(long iters) {
  __m512 c[24];
  for (int i = 0; i < 24; i++)
    c[i] = _mm512_setzero_ps();
  for (long it = 0; it < iters; it++)
    for (int k = 0; k < 256; k++) {
      __m512 b0 = _mm512_load_ps(B + k * 48), b1 = _mm512_load_ps(B + k * 48 + 16),
             b2 = _mm512_load_ps(B + k * 48 + 32);
#pragma GCC unroll 8
      for (int m = 0; m < 8; m++) {
        __m512 a = _mm512_set1_ps(A[k * 8 + m]);
        c[m * 3] = _mm512_fmadd_ps(a, b0, c[m * 3]);
        c[m * 3 + 1] = _mm512_fmadd_ps(a, b1, c[m * 3 + 1]);
        c[m * 3 + 2] = _mm512_fmadd_ps(a, b2, c[m * 3 + 2]);
      }
    }
  float s = 0;
  for (int i = 0; i < 24; i++)
    s += _mm512_reduce_add_ps(c[i]);
  sink = s;
}

enum { N = 500, ITERS = 40 };
static pthread_barrier_t bar;
static double ts[16][N], te[16][N];

static void *run(void *arg) {
  long id = (long)arg;
  for (int i = 0; i < N; i++) {
    pthread_barrier_wait(&bar);
    ts[id][i] = now();
    burst(ITERS);
    te[id][i] = now();
    pthread_barrier_wait(&bar);
  }
  return 0;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
  int nt = argc > 1 ? atoi(argv[1]) : 1;
  if (nt < 1 || nt > 16)
    return 1;
  for (int i = 0; i < 8 * 256; i++)
    A[i] = 1e-3f;
  for (int i = 0; i < 48 * 256; i++)
    B[i] = 1e-3f;
  pthread_barrier_init(&bar, 0, nt + 1);
  pthread_t th[16];
  for (long i = 0; i < nt; i++)
    pthread_create(&th[i], 0, run, (void *)i);
  static double r[N];
  double flops = 2.0 * 16 * 24 * 256 * ITERS * nt;
  for (int i = 0; i < N; i++) {
    pthread_barrier_wait(&bar);
    pthread_barrier_wait(&bar);
    double a = 1e30, b = 0;
    for (int j = 0; j < nt; j++) {
      if (ts[j][i] < a) a = ts[j][i];
      if (te[j][i] > b) b = te[j][i];
    }
    r[i] = flops / (b - a) / 1e9;
  }
  for (int i = 0; i < nt; i++)
    pthread_join(th[i], 0);
  qsort(r, N, sizeof(double), cmp);
  printf("%d thread%s: best %.1f, median %.1f GFLOP/s fp32 (AVX-512 FMA)\n", nt,
         nt == 1 ? "" : "s", r[N - 1], r[N / 2]);
  return 0;
}
