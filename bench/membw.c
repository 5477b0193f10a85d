/* Memory bandwidth of this machine, for the decode "bandwidth floor" in
 * docs/benchmarks.md (a decode step reads every weight once: its time can
 * not go below weight bytes / read bandwidth).
 *
 * Four kernels over arrays much larger than the L3 (512 MiB per array by
 * default), each thread working on its own contiguous slice:
 *   read   sum += a[i], one stream
 *   read8  the same sum, the slice cut into 8 parts read side by side (what
 *          the GEMV kernels did with a weight until they read one stream:
 *          codegen/MatmulKernel.cpp); in 4 KiB pages one core got ~1.5x more
 *          from 8 streams than from 1, in huge pages (the default here) one
 *          stream reads ~1.3x more
 *   copy   c[i] = a[i]
 *   triad  a[i] = b[i] + s * c[i]     (STREAM's triad)
 * Bytes are counted as STREAM does (triad: 3 arrays, no write-allocate
 * traffic). Each kernel runs `reps` times, the threads starting together at
 * a barrier; the best and the median of the runs are printed in GB/s
 * (1e9 bytes/s).
 *
 *   cc -O3 -march=native -o /tmp/membw bench/membw.c -lpthread
 *   /tmp/membw 1; /tmp/membw 2          # threads [MiB per array] [reps]
 */
#include <immintrin.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

enum { READ, READ8, COPY, TRIAD, KERNELS };
static const char *names[KERNELS] = {"read", "read8", "copy", "triad"};
static const int arrays[KERNELS] = {1, 1, 2, 3};

static float *A, *B, *C;
static size_t n; /* floats per array */
static int nt, reps;
static double gbs[KERNELS][64]; /* GB/s per kernel and run */
static pthread_barrier_t bar;
static double ts[16], te[16];
static volatile float sink[16 * 16];

static float readSlice(const float *a, size_t len) {
  __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
  for (size_t i = 0; i + 64 <= len; i += 64) {
    s0 = _mm512_add_ps(s0, _mm512_load_ps(a + i));
    s1 = _mm512_add_ps(s1, _mm512_load_ps(a + i + 16));
    s2 = _mm512_add_ps(s2, _mm512_load_ps(a + i + 32));
    s3 = _mm512_add_ps(s3, _mm512_load_ps(a + i + 48));
  }
  return _mm512_reduce_add_ps(
      _mm512_add_ps(_mm512_add_ps(s0, s1), _mm512_add_ps(s2, s3)));
}

/* 8 parts of a[0, len) read side by side, 256 bytes of each at a time. */
static float readSlice8(const float *a, size_t len) {
  size_t part = len / 8 - len / 8 % 64;
  __m512 s[8];
  for (int q = 0; q < 8; q++)
    s[q] = _mm512_setzero_ps();
  for (size_t i = 0; i < part; i += 64)
    for (int q = 0; q < 8; q++) {
      const float *p = a + q * part + i;
      __m512 x = _mm512_add_ps(_mm512_load_ps(p), _mm512_load_ps(p + 16));
      __m512 y = _mm512_add_ps(_mm512_load_ps(p + 32), _mm512_load_ps(p + 48));
      s[q] = _mm512_add_ps(s[q], _mm512_add_ps(x, y));
    }
  __m512 t = s[0];
  for (int q = 1; q < 8; q++)
    t = _mm512_add_ps(t, s[q]);
  return _mm512_reduce_add_ps(t);
}

static void run(int kernel, long id) {
  size_t len = n / nt, lo = id * len;
  float *a = A + lo, *b = B + lo, *c = C + lo;
  switch (kernel) {
  case READ:
    sink[id * 16] = readSlice(a, len);
    break;
  case READ8:
    sink[id * 16] = readSlice8(a, len);
    break;
  case COPY:
    for (size_t i = 0; i < len; i++)
      c[i] = a[i];
    break;
  case TRIAD:
    for (size_t i = 0; i < len; i++)
      a[i] = b[i] + 3.0f * c[i];
    break;
  }
}

static void *worker(void *arg) {
  long id = (long)arg;
  for (int k = 0; k < KERNELS; k++)
    for (int r = 0; r < reps; r++) {
      pthread_barrier_wait(&bar);
      ts[id] = now();
      run(k, id);
      te[id] = now();
      pthread_barrier_wait(&bar);
      if (id == 0) {
        double t0 = ts[0], t1 = te[0];
        for (int i = 1; i < nt; i++) {
          t0 = ts[i] < t0 ? ts[i] : t0;
          t1 = te[i] > t1 ? te[i] : t1;
        }
        gbs[k][r] = arrays[k] * (double)n * sizeof(float) / (t1 - t0) / 1e9;
      }
    }
  return 0;
}

static int cmp(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return a < b ? -1 : a > b;
}

/* Arrays in transparent huge pages, as tfc's runtime allocates its weights
 * and KV caches (runtime/Tensor.h): with 4 KiB pages a stream misses the TLB
 * every 4 KiB and reads less. TFC_MEMBW_SMALL_PAGES=1 measures without. */
static float *allocate(size_t bytes) {
  const size_t huge = 2u << 20;
  bytes = (bytes + huge - 1) / huge * huge;
  float *p = aligned_alloc(huge, bytes);
  if (p && !getenv("TFC_MEMBW_SMALL_PAGES"))
    madvise(p, bytes, MADV_HUGEPAGE);
  return p;
}

int main(int argc, char **argv) {
  nt = argc > 1 ? atoi(argv[1]) : 1;
  size_t mib = argc > 2 ? (size_t)atol(argv[2]) : 512;
  reps = argc > 3 ? atoi(argv[3]) : 10;
  if (nt < 1 || nt > 16 || reps < 1 || reps > 64 || mib < 1)
    return 1;
  n = mib * 1024 * 1024 / sizeof(float);
  n -= n % (64 * (size_t)nt);
  A = allocate(n * sizeof(float));
  B = allocate(n * sizeof(float));
  C = allocate(n * sizeof(float));
  if (!A || !B || !C)
    return 1;
  /* Touch every page (first-touch by the thread's slice is not needed on a
   * single-socket machine). */
  for (size_t i = 0; i < n; i++)
    A[i] = B[i] = C[i] = 1e-3f;
  pthread_barrier_init(&bar, 0, nt);
  pthread_t th[16];
  for (long i = 0; i < nt; i++)
    pthread_create(&th[i], 0, worker, (void *)i);
  for (int i = 0; i < nt; i++)
    pthread_join(th[i], 0);
  printf("threads %d, %zu MiB per array, %s pages, %d runs (GB/s, 1e9 "
         "bytes/s)\n",
         nt, mib, getenv("TFC_MEMBW_SMALL_PAGES") ? "4 KiB" : "huge", reps);
  for (int k = 0; k < KERNELS; k++) {
    qsort(gbs[k], reps, sizeof(double), cmp);
    printf("%-6s best %6.1f  median %6.1f  worst %6.1f\n", names[k],
           gbs[k][reps - 1], gbs[k][reps / 2], gbs[k][0]);
  }
  return 0;
}
