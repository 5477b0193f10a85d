//===- CompileReport.h - Where a cold compile's time went -------*- C++ -*-===//
//
// `--compile-report` (run, check, bench, generate, embed): after the kernels
// are compiled, a table on stderr of every kernel compiled in this process,
// in the order the threads started them:
//
//   kernel  op  variants  uses  build  lower  codegen  cpu  thread  start  end
//
// `variants` counts the kernel's code paths (1 + its Halide
// specializations), `uses` the plan steps that call it, `build`/`lower`/
// `codegen` are thread CPU seconds of defining the pipeline, Halide's
// lowering and LLVM's code generation (codegen/CompileTime.h), and
// `start`/`end` the wall-clock span from the start of the compile. Then the
// totals, each thread's busy time, the disk cache's link, the critical
// path (the kernels of the thread that finished last) and the bound
// max(CPU / threads, longest kernel) that any packing of these kernels
// onto the threads has to respect.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_TOOLS_TFC_COMPILEREPORT_H
#define TFC_TOOLS_TFC_COMPILEREPORT_H

#include "session/Compile.h"

#include <string>

namespace llvm {
class raw_ostream;
} // namespace llvm

namespace tfc::driver {

/// " (6 view kernels not needed so far)" where compileKernels left kernels
/// for steps that bind views (CompileOptions::deferViewKernels) and no step
/// has needed them since; else "".
std::string deferredKernelsNote(const session::CompiledModel &model);

/// Prints `model.stats.report` (empty when nothing was compiled) to `os`.
void printCompileReport(const session::CompiledModel &model,
                        llvm::raw_ostream &os);

} // namespace tfc::driver

#endif // TFC_TOOLS_TFC_COMPILEREPORT_H
