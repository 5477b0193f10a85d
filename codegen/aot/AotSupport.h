//===- AotSupport.h - Shared parts of tfc compile and tfc emit --*- C++ -*-===//
//
// Internal to codegen/aot/*.cpp: the generated C++ API, the files copied next
// to it, the CMake glue, and small file helpers. See AotCompiler.h for what
// the outputs are.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_CODEGEN_AOT_AOTSUPPORT_H
#define TFC_CODEGEN_AOT_AOTSUPPORT_H

#include "codegen/aot/AotCompiler.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace tfc::codegen::aot {

/// The model being packaged, as the generated files see it.
struct GeneratedModel {
  std::string modelName; // C identifier ("bert_tiny")
  std::string className; // "BertTiny"
  std::string target;    // Halide target string
  bool usesDevice = false;
  /// The kernels link Halide's own runtime (`tfc compile`), not tfc emit's
  /// shim: the class installs tfc's thread pool into it.
  bool halideRuntime = false;
  /// The plan with kernels renamed to their symbols (kernelSymbol).
  rt::Plan plan;
};

/// Checks the options and prepares `model` (names, renamed plan). Fails for
/// a plan without kernels' ops, an invalid class name or output folder.
llvm::Expected<GeneratedModel> prepareModel(const BuiltPlan &built,
                                            const AotOptions &options);

/// The symbol (function name) of plan kernel `kernelName`.
std::string kernelSymbol(const std::string &modelName,
                         const std::string &kernelName);

/// `<model>.h` and `<model>.cpp`.
std::string apiHeader(const GeneratedModel &model);
llvm::Expected<std::string> apiSource(const GeneratedModel &model,
                                      llvm::StringRef producer);

/// How the CMake glue builds the model's kernels.
struct CMakeKernels {
  /// `tfc compile`: an archive of objects ("libbert_tiny.a").
  std::string archive;
  /// `tfc emit`: C++ sources compiled in the user's build, and objects or
  /// archives linked as they are (Halide's CUDA runtime).
  std::vector<std::string> sources;
  std::vector<std::string> prebuilt;
};

/// `<model>.cmake` (include()-able) and a `CMakeLists.txt` that includes it
/// for add_subdirectory().
std::string cmakeSnippet(const GeneratedModel &model,
                         const CMakeKernels &kernels, llvm::StringRef producer);
std::string cmakeLists(const GeneratedModel &model);

/// Copies runtime/*.h to `<dir>/include/runtime/`, HalideRuntime.h to
/// `<dir>/include/`, and the runtime library to `<dir>/lib/`. Appends what
/// was written to `result.files`.
llvm::Error copyRuntime(const RuntimeFiles &runtime, const std::string &dir,
                        AotResult &result);

/// Halide's runtime for `target` as a one-member archive at `path`
/// (`tfc emit --target cuda` ships it).
llvm::Error writeRuntimeArchive(const Halide::Target &target,
                                const std::string &path);

/// Writes `contents` to `path` with rt::writeFileAtomically: a unique
/// temporary file, every write checked, renamed when complete.
llvm::Error writeFile(const std::string &path, llvm::StringRef contents);

/// Creates `dir` and its parents.
llvm::Error makeDirectory(const std::string &dir);

/// `dir/name`.
std::string joinPath(const std::string &dir, const std::string &name);

/// "1.2 MiB"
std::string sizeString(uint64_t bytes);

/// The size of a file, 0 if unknown.
uint64_t fileSize(const std::string &path);

} // namespace tfc::codegen::aot

#endif // TFC_CODEGEN_AOT_AOTSUPPORT_H
