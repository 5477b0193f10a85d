//===- Aot.h - A model compiled ahead of time -------------------*- C++ -*-===//
//
// `tfc compile` and `tfc emit` through the session: the model opened,
// optimized and planned as for `tfc run` (so that the compiled kernels are
// the JIT's), then handed to the AOT compiler (codegen/aot/AotCompiler.h),
// which writes a static library or C++ sources with a generated C++ API.
// What it writes links the tfc runtime only: no MLIR, LLVM or Halide
// library (docs/design.md, "Ahead of time"). Nothing here prints.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_SESSION_AOT_H
#define TFC_SESSION_AOT_H

#include "session/Compile.h"

#include "codegen/aot/AotCompiler.h"

namespace tfc::session {

enum class AotFormat {
  Library, // `tfc compile`: kernels as objects in lib<model>.a
  Sources, // `tfc emit`: kernels as C++ (Halide's C backend)
};

/// What compileAheadOfTime wrote.
struct AotOutput {
  codegen::AotResult written;
  size_t kernels = 0; // kernels in the model's plan
};

/// Writes a model planned with openUpTo(options, Stage::Planned) (no kernel
/// compiled in process) in `format`, as `aot` says.
llvm::Expected<AotOutput> writeAheadOfTime(const CompiledModel &model,
                                           const codegen::AotOptions &aot,
                                           AotFormat format);

} // namespace tfc::session

#endif // TFC_SESSION_AOT_H
