//===- AotCompiler.h - Models as libraries and source folders ---*- C++ -*-===//
//
// The ahead-of-time outputs (docs/design.md): a model's Plan (PlanBuilder.h)
// and its kernels, packaged so that a C++ program can run the model with no
// Halide, MLIR or LLVM library:
//
//  - compileAot (`tfc compile`): each kernel compiled to an object with
//    Target::NoRuntime, plus one object of Halide's standalone runtime for
//    the target, archived into `lib<model>.a`;
//  - emitSources (`tfc emit`): each kernel as C++ source (Halide's C
//    backend) and, for CPU targets, the project's own runtime shim for the
//    `halide_*` symbols that code needs, so g++ alone builds it. Halide 14's
//    C backend emits CUDA host code with the PTX embedded, but the CUDA
//    runtime it calls (module loading, launches, device memory) is Halide's
//    own; for CUDA targets that runtime ships as an object library.
//
// Both write the same small generated C++ API (`<model>.h`/`.cpp`: a class
// that embeds the serialized Plan and the kernel table and runs entries with
// the tfc runtime's Executor), the runtime headers under `include/`, the
// prebuilt tfc runtime under `lib/`, and CMake glue (`<model>.cmake`, and a
// `CMakeLists.txt` for add_subdirectory).
//
// Kernel symbols are `tfc_<model>_<plan kernel name>` (argv entry
// `..._argv`), and the embedded Plan names its kernels so, which keeps the
// libraries of several models linkable into one program.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_CODEGEN_AOT_AOTCOMPILER_H
#define TFC_CODEGEN_AOT_AOTCOMPILER_H

#include "plan/PlanBuilder.h"

#include "Halide.h"

#include "llvm/Support/Error.h"

#include <functional>
#include <string>
#include <vector>

namespace tfc::codegen {

/// Files of the tfc installation that generated code is shipped with.
struct RuntimeFiles {
  /// The static tfc runtime library (libtfc_runtime.a).
  std::string library;
  /// The folder that holds `runtime/*.h` (the source tree's root).
  std::string sourceRoot;
  /// The folder that holds HalideRuntime.h (/usr/include/halide14).
  std::string halideIncludeDir;
  /// The static tokenizer library (libtfc_tokenizer.a); shipped with its
  /// headers when given, for programs that tokenize (it needs PCRE2 and ICU).
  std::string tokenizerLibrary;
};

struct AotOptions {
  /// hostTarget() or cudaTarget(); features such as NoRuntime are added
  /// where needed.
  Halide::Target target;
  std::string outputDir;
  /// The generated class; empty: the model name in CamelCase
  /// (bert_tiny -> BertTiny).
  std::string className;
  RuntimeFiles runtime;
  /// Threads that compile kernels (0: one per hardware thread; tfc emit
  /// writes sources on one).
  unsigned jobs = 0;
  /// Called before kernel `index` (0-based) of `count` is compiled, for a
  /// progress display (one call at a time, from the compiling threads);
  /// may be empty.
  std::function<void(size_t index, size_t count, const std::string &name)>
      progress;
};

/// What was written.
struct AotResult {
  std::string modelName;
  std::string className;
  /// Every file written, with a short note ("3 kernels + Halide runtime"),
  /// in the order a user would look at them.
  std::vector<std::pair<std::string, std::string>> files;
  /// A command line that builds a program `main.cpp` against the output.
  std::string buildCommand;
  /// Anything the user should know (e.g. what a CUDA source folder needs).
  std::vector<std::string> notes;
};

/// `tfc compile`: the static library, API, headers and CMake glue above.
/// `built.kernelOps` must still be alive (the module given to buildPlan).
llvm::Expected<AotResult> compileAot(const BuiltPlan &built,
                                     const AotOptions &options);

/// `tfc emit`: the C++ source folder above.
llvm::Expected<AotResult> emitSources(const BuiltPlan &built,
                                      const AotOptions &options);

/// "bert_tiny" -> "BertTiny"; any name -> a valid C++ identifier.
std::string modelClassName(const std::string &modelName);

/// A model name as a C identifier ("bert-tiny" -> "bert_tiny").
std::string modelSymbolName(const std::string &modelName);

} // namespace tfc::codegen

#endif // TFC_CODEGEN_AOT_AOTCOMPILER_H
