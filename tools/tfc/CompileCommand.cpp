//===- CompileCommand.cpp - tfc compile / tfc emit: AOT outputs -----------===//
//
// tfc compile MODEL --target host|cuda|opencl -o DIR
//   a static library of the model's kernels (+ Halide's runtime), a small
//   generated C++ API, the tfc runtime and CMake glue: a program links it
//   with no Halide, MLIR or LLVM library (docs/design.md, "Ahead of time").
// tfc emit MODEL --target host|cuda -o DIR (registered in EmitCommand.cpp)
//   the same API with the kernels as C++ source (docs/design.md, ditto).
//
// Both share everything up to the output format, hence one implementation
// (registerAotCommand).
//
//===----------------------------------------------------------------------===//

#include "tools/tfc/Commands.h"
#include "tools/tfc/ModelRunner.h"

#include "session/Aot.h"

#include "codegen/KernelBuilder.h"
#include "codegen/aot/AotProcessSafety.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdio>
#include <unistd.h>

// Where this tfc's runtime library and headers are (set by
// tools/tfc/CMakeLists.txt); overridable on the command line for a tfc that
// was moved away from its build tree.
#ifndef TFC_RUNTIME_LIBRARY
#define TFC_RUNTIME_LIBRARY ""
#endif
#ifndef TFC_TOKENIZER_LIBRARY
#define TFC_TOKENIZER_LIBRARY ""
#endif
#ifndef TFC_SOURCE_DIR
#define TFC_SOURCE_DIR ""
#endif
#ifndef TFC_HALIDE_INCLUDE_DIR
#define TFC_HALIDE_INCLUDE_DIR "/usr/include/halide14"
#endif

using namespace tfc;
using namespace tfc::driver;

namespace {

struct AotCommandOptions {
  ModelOptions model;
  std::string target = "host";
  std::string outputDir;
  std::string className;
  std::string runtimeLibrary = TFC_RUNTIME_LIBRARY;
  std::string runtimeSource = TFC_SOURCE_DIR;
  std::string halideInclude = TFC_HALIDE_INCLUDE_DIR;
  unsigned jobs = 0;
};

enum class AotMode { Compile, Emit };

int runAot(const AotCommandOptions &options, AotMode mode) {
  if (mode == AotMode::Emit && options.target == "opencl") {
    llvm::errs() << "error: tfc emit supports --target host and cuda; use "
                    "tfc compile for opencl\n";
    return 1;
  }
  codegen::installProcessSafetyHandlers();
  auto start = std::chrono::steady_clock::now();
  // The same pipeline as tfc run, so that compiled kernels are the JIT's.
  std::optional<CompiledModel> model =
      openToStage(compileOptions(options.model), session::Stage::Planned);
  if (!model)
    return 1;

  codegen::AotOptions aot;
  aot.target = codegen::targetNamed(options.target);
  aot.outputDir = options.outputDir;
  aot.className = options.className;
  aot.jobs = options.jobs;
  aot.runtime.library = options.runtimeLibrary;
  aot.runtime.sourceRoot = options.runtimeSource;
  aot.runtime.halideIncludeDir = options.halideInclude;
  aot.runtime.tokenizerLibrary = TFC_TOKENIZER_LIBRARY;
  bool progress = isatty(fileno(stderr)) != 0;
  if (progress)
    aot.progress = [](size_t index, size_t count, const std::string &name) {
      llvm::errs() << "\r\033[Kcompiling kernel " << (index + 1) << "/" << count
                   << " " << name;
    };

  llvm::Expected<session::AotOutput> output = session::writeAheadOfTime(
      *model, aot,
      mode == AotMode::Compile ? session::AotFormat::Library
                               : session::AotFormat::Sources);
  if (progress)
    llvm::errs() << "\r\033[K";
  if (!output) {
    reportError(output.takeError());
    return 1;
  }
  const codegen::AotResult *result = &output->written;
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();

  llvm::outs() << (mode == AotMode::Compile ? "compiled " : "emitted ")
               << result->modelName << ": " << output->kernels
               << " kernels for " << aot.target.to_string() << " in "
               << llvm::format("%.2f", seconds) << " s\n";
  for (const auto &[path, note] : result->files)
    llvm::outs() << "wrote    " << path << "  (" << note << ")\n";
  for (const std::string &note : result->notes)
    llvm::outs() << "note:    " << note << "\n";
  llvm::outs() << "build:   " << result->buildCommand << "\n";
  return 0;
}

void addAotOptions(CLI::App &command, AotCommandOptions &options) {
  addModelOptions(command, options.model);
  addPipelineOptions(command, options.model);
  command
      .add_option("--target", options.target,
                  "host (this CPU), cuda (NVIDIA GPU, compute capability "
                  "8.0+; builds without a GPU) or opencl (the GPU schedules "
                  "as OpenCL C, to check them on PoCL without a GPU)")
      ->check(CLI::IsMember({"host", "cuda", "opencl"}))
      ->default_val("host");
  command.add_option("--jobs,-j", options.jobs,
                     "Threads that compile kernels (default: one per "
                     "hardware thread)");
  command.add_option("-o,--output-dir", options.outputDir, "Output folder")
      ->required();
  command.add_option("--class", options.className,
                     "Name of the generated C++ class (default: the model "
                     "name in CamelCase)");
  command.add_option("--runtime-library", options.runtimeLibrary,
                     "The tfc runtime library to ship (default: this "
                     "tfc's build)");
  command.add_option("--runtime-source", options.runtimeSource,
                     "The tfc source tree whose runtime/*.h to ship "
                     "(default: this tfc's)");
}

} // namespace

CommandRunner driver::registerAotCommand(CLI::App &app, bool emitSources,
                                         const std::string &name,
                                         const std::string &description) {
  auto options = std::make_shared<AotCommandOptions>();
  CLI::App *command = app.add_subcommand(name, description);
  addAotOptions(*command, *options);
  AotMode mode = emitSources ? AotMode::Emit : AotMode::Compile;
  return [options, mode] { return runAot(*options, mode); };
}

CommandRunner driver::registerCompileCommand(CLI::App &app) {
  return registerAotCommand(
      app, /*emitSources=*/false, "compile",
      "Compile a model ahead of time into a static library with a C++ API "
      "(using it needs no Halide, MLIR or LLVM)");
}
