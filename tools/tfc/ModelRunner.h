//===- ModelRunner.h - Compile a model and run it in process ----*- C++ -*-===//
//
// The command-line face of session/Compile.h and session/Weights.h, shared
// by `tfc run`, `check`, `bench`, `generate` and `embed`: their options
// (weights, kernel cache), and the session's steps with progress shown on a
// terminal and errors printed.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_TOOLS_TFC_MODELRUNNER_H
#define TFC_TOOLS_TFC_MODELRUNNER_H

#include "tools/tfc/Driver.h"

#include "session/Compile.h"
#include "session/Weights.h"

#include "runtime/Executor.h"

#include <optional>
#include <string>
#include <vector>

namespace tfc::driver {

/// Where weights come from.
using WeightOptions = session::WeightSource;
/// --weights, --random-weights and the seed option `seedFlag`.
void addWeightOptions(CLI::App &command, WeightOptions &options,
                      const std::string &seedFlag = "--seed");

/// --cache-dir, --no-cache, --jobs, --compile-report.
struct CacheOptions {
  std::string dir;
  bool disabled = false;
  unsigned jobs = 0; // kernel compile threads (0: one per hardware thread)
  bool report = false; // --compile-report
};
void addCacheOptions(CLI::App &command, CacheOptions &options);

using CompiledModel = session::CompiledModel;

/// The session's options for a command's model, cache and entries.
session::CompileOptions compileOptions(const ModelOptions &model,
                                       const CacheOptions &cache = {},
                                       std::vector<std::string> entries = {});

/// Opens the model up to `last` (session::openUpTo); prints errors and the
/// model's warnings, nullopt on failure.
std::optional<CompiledModel> openToStage(const session::CompileOptions &options,
                                         session::Stage last);

/// Plans the model (no kernels yet; session::plan); prints errors and
/// warnings, nullopt on failure.
std::optional<CompiledModel> planModel(const session::CompileOptions &options);

/// The entry `found` holds, or null with its error printed (for
/// CompiledModel::requireEntry: "the model has no entry ...").
const rt::PlanEntry *
reportedEntry(llvm::Expected<const rt::PlanEntry *> found);

/// Compiles the kernels `options.entries` need, drawing progress on a
/// terminal; prints errors, and the compile report when `options.report`.
bool buildKernels(CompiledModel &model,
                  const session::CompileOptions &options);

/// planModel + buildKernels, every entry, with the default cache.
std::optional<CompiledModel> compileModel(const ModelOptions &options,
                                          const CacheOptions &cache = {});

/// Binds or draws the weights of `plan`. Warnings (unused checkpoint
/// tensors) go to stderr unless they start with one of `quietPrefixes`.
rt::Expected<rt::WeightMap>
loadWeights(const rt::Plan &plan, const WeightOptions &options,
            const std::vector<std::string> &quietPrefixes = {});

/// The executor of a compiled model with its weights loaded; prints errors.
std::optional<rt::Executor> makeExecutor(CompiledModel &model,
                                         const WeightOptions &weights);

/// "f32[2, 7, 512]"
std::string describe(const rt::Tensor &tensor);

/// True when stderr is a terminal (progress lines are only drawn there).
bool stderrIsTerminal();

} // namespace tfc::driver

#endif // TFC_TOOLS_TFC_MODELRUNNER_H
