//===- MachineLimits.cpp - The machine's fp32 FMA peak and bandwidth ------===//

#include "tools/tfc/MachineLimits.h"

#include "runtime/Tensor.h"

#include <immintrin.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

using namespace tfc;
using namespace tfc::driver;

namespace {

double now() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

constexpr int kDepth = 256; // k steps per pass, all operands in L1
alignas(64) float gA[8 * kDepth];
alignas(64) float gB[48 * kDepth];
std::atomic<float> gSink{0};

/// 8 x 48 outer products: 24 zmm accumulators; 2*16*24*kDepth FLOPs/pass.
__attribute__((target("avx512f"))) void burstAvx512(int passes) {
  __m512 c[24];
  for (__m512 &v : c)
    v = _mm512_setzero_ps();
  for (int p = 0; p < passes; ++p)
    for (int k = 0; k < kDepth; ++k) {
      __m512 b0 = _mm512_load_ps(gB + k * 48);
      __m512 b1 = _mm512_load_ps(gB + k * 48 + 16);
      __m512 b2 = _mm512_load_ps(gB + k * 48 + 32);
#pragma GCC unroll 8
      for (int m = 0; m < 8; ++m) {
        __m512 a = _mm512_set1_ps(gA[k * 8 + m]);
        c[m * 3] = _mm512_fmadd_ps(a, b0, c[m * 3]);
        c[m * 3 + 1] = _mm512_fmadd_ps(a, b1, c[m * 3 + 1]);
        c[m * 3 + 2] = _mm512_fmadd_ps(a, b2, c[m * 3 + 2]);
      }
    }
  // Summed by hand: GCC warns inside _mm512_reduce_add_ps (-Wuninitialized).
  __m512 total = c[0];
  for (int i = 1; i < 24; ++i)
    total = _mm512_add_ps(total, c[i]);
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, total);
  float s = 0;
  for (float lane : lanes)
    s += lane;
  gSink = s;
}

/// 6 x 16 outer products: 12 ymm accumulators; 2*8*12*kDepth FLOPs/pass.
__attribute__((target("avx2,fma"))) void burstAvx2(int passes) {
  __m256 c[12];
  for (__m256 &v : c)
    v = _mm256_setzero_ps();
  for (int p = 0; p < passes; ++p)
    for (int k = 0; k < kDepth; ++k) {
      __m256 b0 = _mm256_load_ps(gB + k * 16);
      __m256 b1 = _mm256_load_ps(gB + k * 16 + 8);
#pragma GCC unroll 6
      for (int m = 0; m < 6; ++m) {
        __m256 a = _mm256_set1_ps(gA[k * 6 + m]);
        c[m * 2] = _mm256_fmadd_ps(a, b0, c[m * 2]);
        c[m * 2 + 1] = _mm256_fmadd_ps(a, b1, c[m * 2 + 1]);
      }
    }
  alignas(32) float lanes[8];
  float s = 0;
  for (__m256 &v : c) {
    _mm256_store_ps(lanes, v);
    for (float x : lanes)
      s += x;
  }
  gSink = s;
}

/// Lets `count` threads go on together, within a fraction of a microsecond:
/// the waiting threads spin (and yield after a while, should there be more
/// threads than CPUs) instead of sleeping. Woken from a condition variable,
/// a thread started its burst tens of microseconds after the last one
/// arrived on a 2-vCPU KVM guest, which read the 2-thread FMA peak of ~44 us
/// bursts 7-25 % low (407-497 GFLOP/s against twice the 1-thread 265-272;
/// docs/benchmarks.md, "Session 24").
class SpinBarrier {
public:
  explicit SpinBarrier(int count) : count(count) {}
  void arriveAndWait() {
    int phase = generation.load(std::memory_order_acquire);
    if (waiting.fetch_add(1, std::memory_order_acq_rel) + 1 == count) {
      waiting.store(0, std::memory_order_relaxed);
      generation.fetch_add(1, std::memory_order_acq_rel);
      return;
    }
    for (long spins = 0; generation.load(std::memory_order_acquire) == phase;
         ++spins) {
      if (spins < kSpinsBeforeYield)
        _mm_pause();
      else
        std::this_thread::yield();
    }
  }

private:
  // Milliseconds: `pause` takes some 10 to 150 cycles, by CPU.
  static constexpr long kSpinsBeforeYield = 1l << 20;
  const int count;
  std::atomic<int> waiting{0}, generation{0};
};

/// Runs `work(thread)` on `threads` threads for `rounds` rounds that
/// start together; returns each round's span (first start to last end).
std::vector<double> synchronizedRounds(int threads, int rounds,
                                       const std::function<void(int)> &work) {
  std::vector<double> starts(static_cast<size_t>(threads * rounds));
  std::vector<double> ends(starts.size());
  SpinBarrier sync(threads);
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      for (int r = 0; r < rounds; ++r) {
        sync.arriveAndWait();
        starts[static_cast<size_t>(r * threads + t)] = now();
        work(t);
        ends[static_cast<size_t>(r * threads + t)] = now();
      }
    });
  for (std::thread &th : pool)
    th.join();
  std::vector<double> spans;
  for (int r = 0; r < rounds; ++r) {
    auto first = starts.begin() + r * threads;
    auto last = ends.begin() + r * threads;
    spans.push_back(*std::max_element(last, last + threads) -
                    *std::min_element(first, first + threads));
  }
  return spans;
}

/// The burst both FMA measurements run: the widest kind the CPU has.
struct FmaBurst {
  std::string kind = "none";
  double flops = 0; // per burst
  void (*run)(int passes) = nullptr;
};

/// Passes of kDepth steps per burst: ~44 us at ~4 GHz with AVX-512.
constexpr int kPasses = 40;

FmaBurst chooseBurst() {
  std::fill(std::begin(gA), std::end(gA), 1e-3f);
  std::fill(std::begin(gB), std::end(gB), 1e-3f);
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f"))
    return {"AVX-512", 2.0 * 16 * 24 * kDepth * kPasses, &burstAvx512};
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    return {"AVX2", 2.0 * 8 * 12 * kDepth * kPasses, &burstAvx2};
  return {};
}

double fmaPeak(int threads, const FmaBurst &burst) {
  if (!burst.run)
    return 0;
  std::vector<double> spans =
      synchronizedRounds(threads, 300, [&](int) { burst.run(kPasses); });
  double best = *std::min_element(spans.begin(), spans.end());
  return best > 0 ? burst.flops * threads / best / 1e9 : 0;
}

/// How long the threads run bursts back to back for the sustained rate, and
/// the part at the start that does not count (the clock settling).
constexpr double kSustainSeconds = 0.25, kSettleSeconds = 0.05;

/// One thread's FMA rate in bursts back to back for kSustainSeconds: its
/// median burst after kSettleSeconds (one the scheduler interrupted is an
/// outlier); FLOP/s.
double medianBurstRate(const FmaBurst &burst) {
  std::vector<double> bursts;
  double begin = now(), last = begin;
  while (last - begin < kSustainSeconds) {
    burst.run(kPasses);
    double end = now();
    if (last - begin >= kSettleSeconds)
      bursts.push_back(end - last);
    last = end;
  }
  if (bursts.empty())
    return 0;
  std::nth_element(bursts.begin(), bursts.begin() + bursts.size() / 2,
                   bursts.end());
  double median = bursts[bursts.size() / 2];
  return median > 0 ? burst.flops / median : 0;
}

/// The rate the threads keep up together: medianBurstRate on all of them
/// at once, summed.
double sustainedFmaRate(int threads, const FmaBurst &burst) {
  if (!burst.run)
    return 0;
  std::vector<double> rates(static_cast<size_t>(threads));
  synchronizedRounds(threads, 1, [&](int t) {
    rates[static_cast<size_t>(t)] = medianBurstRate(burst);
  });
  double total = 0;
  for (double r : rates)
    total += r;
  return total / 1e9;
}

/// Sums `len` floats of `base` (a multiple of 64) read as `Streams` parts
/// side by side (1: front to back; 8: as the GEMV kernels once read a
/// weight), into 8 accumulators of 8 lanes.
template <int Streams>
__attribute__((target("avx2"))) double sumStreams(const float *base,
                                                  size_t len) {
  constexpr int kPerPart = 8 / Streams; // accumulators per part
  size_t part = len / Streams;
  __m256 acc[8];
  for (__m256 &v : acc)
    v = _mm256_setzero_ps();
  for (size_t i = 0; i < part; i += 8 * kPerPart)
#pragma GCC unroll 8
    for (int s = 0; s < 8; ++s)
      acc[s] = _mm256_add_ps(
          acc[s], _mm256_loadu_ps(base + (s / kPerPart) * part + i +
                                  (s % kPerPart) * 8));
  alignas(32) float lanes[8];
  double total = 0;
  for (__m256 &v : acc) {
    _mm256_store_ps(lanes, v);
    for (float x : lanes)
      total += x;
  }
  return total;
}

/// The best of one stream and 8 streams per thread, each over its own
/// slice of a 256 MiB array in the runtime's storage (rt::allocateBlock:
/// transparent huge pages, as the weights and KV caches).
double readBandwidth(int threads) {
  if (!__builtin_cpu_supports("avx2"))
    return 0;
  constexpr size_t kFloats = (256u << 20) / sizeof(float);
  std::unique_ptr<float, void (*)(void *)> data(
      static_cast<float *>(rt::allocateBlock(kFloats * sizeof(float))),
      std::free);
  if (!data)
    return 0;
  std::fill(data.get(), data.get() + kFloats, 1.0f);
  std::vector<double> sums(static_cast<size_t>(threads));
  size_t slice = kFloats / static_cast<size_t>(threads) / 64 * 64;
  double best = 0;
  for (auto *sum : {&sumStreams<1>, &sumStreams<8>}) {
    auto pass = [&](int t) {
      sums[static_cast<size_t>(t)] =
          sum(data.get() + slice * static_cast<size_t>(t), slice);
    };
    std::vector<double> spans = synchronizedRounds(threads, 5, pass);
    double span = *std::min_element(spans.begin(), spans.end());
    double bytes = static_cast<double>(slice) * threads * sizeof(float);
    if (span > 0)
      best = std::max(best, bytes / span / 1e9);
  }
  gSink = static_cast<float>(sums[0]);
  return best;
}

/// How many CPUs this process may run on (its affinity mask), or 0.
int allowedCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  return sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set) : 0;
}

} // namespace

MachineLimits driver::measureMachineLimits(int threads) {
  MachineLimits limits;
  // More threads than CPUs share them: the limits are the CPUs'. (Spinning
  // at the barrier, extra threads would also take the CPUs from the bursts.)
  int cpus = allowedCpus();
  threads = std::max(cpus > 0 ? std::min(threads, cpus) : threads, 1);
  limits.threads = threads;
  FmaBurst burst = chooseBurst();
  limits.fmaKind = burst.kind;
  limits.fmaGflops = fmaPeak(threads, burst);
  limits.sustainedFmaGflops = sustainedFmaRate(threads, burst);
  limits.readGBs = readBandwidth(threads);
  return limits;
}
