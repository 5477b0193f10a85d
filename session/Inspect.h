//===- Inspect.h - What a compile session built, as text --------*- C++ -*-===//
//
// The views of a session's stages that `tfc dump`, `tfc info` and `tfc
// bench` show: each kernel of a planned model as Halide sees it (pipeline,
// lowered statement, C, HTML, PTX) and the FLOPs of each entry of an
// elaborated model. Nothing here prints; errors are values.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_SESSION_INSPECT_H
#define TFC_SESSION_INSPECT_H

#include "session/Compile.h"

#include "passes/FlopCount.h"

#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace tfc::session {

/// A kernel as text (`tfc dump --emit=...`).
enum class KernelText {
  Halide,   // Funcs, schedules and loop nest
  Stmt,     // Halide's lowered statement
  StmtHtml, // Halide's HTML statement view
  C,        // the C++ source of Halide's C backend (tfc emit)
  Ptx,      // the PTX of the GPU loops (empty when there are none)
};

/// Whose schedules a kernel is built with.
enum class KernelTarget { Host, Cuda };

/// The Halide target string of `target` ("x86-64-linux-avx2-...").
std::string targetName(KernelTarget target);

/// Builds kernel `index` of a planned model for `target` (its Funcs named
/// "tfc_" + the plan kernel's name) and returns it as `what`. Ptx needs
/// KernelTarget::Cuda.
llvm::Expected<std::string> kernelText(const CompiledModel &model,
                                       size_t index, KernelText what,
                                       KernelTarget target);

/// The FLOPs of one entry.
struct EntryFlops {
  std::string entry;
  FlopCount flops;
};

/// The FLOPs of every entry of an elaborated (or later) model, in the
/// module's order; ops with dynamic shapes are counted in dynamicOps.
std::vector<EntryFlops> entryFlops(const CompiledModel &model);

} // namespace tfc::session

#endif // TFC_SESSION_INSPECT_H
