//===- CompileTime.h - Where a kernel's compile time went -------*- C++ -*-===//
//
// Each kernel compile (JIT or to an object for the disk cache) records how
// long its phases took on its thread, for `--compile-report`:
//   build    the op's Halide pipeline defined and scheduled (buildKernel)
//   lower    Halide's lowering to a Module (compile_to_module)
//   codegen  LLVM: the Module to machine code (JITModule, or an object)
// Phases are thread CPU seconds, so that another process's load does not
// count; `start` and `end` are the wall-clock span on the compiling thread,
// so that a report can show how the kernels were packed onto the threads.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_CODEGEN_COMPILETIME_H
#define TFC_CODEGEN_COMPILETIME_H

#include "Halide.h"

#include <chrono>
#include <string>
#include <thread>
#include <vector>

namespace tfc::codegen {

struct KernelCompileTime {
  std::string name; // the kernel's function name ("tfc_matmul_3")
  std::string op;   // the op it implements ("tfc.matmul"), "runtime" for
                    // Halide's standalone runtime
  std::string signature; // the op's kernelSignature (empty: the runtime)
  /// Code paths in the kernel: 1 + the specializations of its Funcs.
  unsigned variants = 1;
  double buildSeconds = 0, lowerSeconds = 0, codegenSeconds = 0;
  std::chrono::steady_clock::time_point start, end;
  std::thread::id thread;

  double cpuSeconds() const {
    return buildSeconds + lowerSeconds + codegenSeconds;
  }

  /// Starts the record of a compile on the calling thread, now.
  void begin(std::string kernelName, std::string opName,
             std::string opSignature = "") {
    name = std::move(kernelName);
    op = std::move(opName);
    signature = std::move(opSignature);
    start = std::chrono::steady_clock::now();
    thread = std::this_thread::get_id();
  }
  /// Ends its wall-clock span.
  void finish() { end = std::chrono::steady_clock::now(); }
};

/// What one call that compiles kernels spent, for the session's report.
struct CompileReport {
  /// When the caller began getting kernels: the report's time zero.
  std::chrono::steady_clock::time_point start;
  std::vector<KernelCompileTime> kernels;
  /// Wall seconds of the disk cache's `cc -shared` links (0 for the JIT).
  double linkSeconds = 0;
};

/// CPU seconds the calling thread has used.
double threadCpuSeconds();

/// Measures phases on the calling thread: each lap() returns the thread CPU
/// seconds since the last lap (or the construction).
class PhaseClock {
public:
  PhaseClock() : last(threadCpuSeconds()) {}
  double lap() {
    double now = threadCpuSeconds();
    double spent = now - last;
    last = now;
    return spent;
  }

private:
  double last;
};

/// 1 + the number of specializations (nested ones included) of every Func
/// that `pipeline` computes.
unsigned countVariants(const Halide::Pipeline &pipeline);

} // namespace tfc::codegen

#endif // TFC_CODEGEN_COMPILETIME_H
