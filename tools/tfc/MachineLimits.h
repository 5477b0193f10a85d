//===- MachineLimits.h - The machine's fp32 FMA peak and bandwidth -*- C++
//-*-===//
//
// What `tfc bench --profile` compares each kernel class with, measured in the
// same run and on the same number of threads as the kernels:
//  - the fp32 FMA peak: each thread runs the inner loop of a register-blocked
//    matmul (24 AVX-512 accumulators, 3 vector loads and 8 broadcasts per 24
//    FMAs, all in L1; AVX2 with 12 accumulators where there is no AVX-512) in
//    short bursts that start together (the threads spin at a barrier); a
//    burst's FLOPs over the time from the first start to the last end, best
//    burst. Short bursts matter on a shared machine: a long loop measures the
//    share of the CPU the scheduler gave.
//  - the sustained FMA rate: the same bursts back to back on all threads at
//    once for a quarter of a second, each thread's median burst. A model
//    keeps the cores busy for tens of milliseconds and more; on the Zen 5
//    guest of sessions 23-27 the cores then run ~2-3 % slower than in a
//    burst after a pause, with both busy (docs/benchmarks.md, "Session 27").
//  - read bandwidth: each thread sums its own slice of a 256 MiB array in
//    the runtime's storage (transparent huge pages, as the weights), read
//    front to back and as 8 streams side by side; the best pass of either
//    (bench/membw.c's read and read8).
//
//===----------------------------------------------------------------------===//

#ifndef TFC_TOOLS_TFC_MACHINELIMITS_H
#define TFC_TOOLS_TFC_MACHINELIMITS_H

#include <string>

namespace tfc::driver {

struct MachineLimits {
  double fmaGflops = 0;          // fp32 peak, all threads together
  double sustainedFmaGflops = 0; // fp32, kept up by all threads at once
  double readGBs = 0;   // 1e9 bytes/s, all threads together
  std::string fmaKind;  // "AVX-512", "AVX2", or "none" (peak 0)
  int threads = 0;      // the threads both were measured on
};

/// Measures both limits on `threads` threads, at most one per CPU the process
/// may run on: more share the CPUs and cannot add to them (about three
/// quarters of a second).
MachineLimits measureMachineLimits(int threads);

} // namespace tfc::driver

#endif // TFC_TOOLS_TFC_MACHINELIMITS_H
