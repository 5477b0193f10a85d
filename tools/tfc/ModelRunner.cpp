//===- ModelRunner.cpp - Compile a model and run it in process ------------===//

#include "tools/tfc/ModelRunner.h"
#include "tools/tfc/CompileReport.h"

#include "session/KernelDiskCache.h"

#include "llvm/Support/raw_ostream.h"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <unistd.h>

using namespace tfc;
using namespace tfc::driver;

bool driver::stderrIsTerminal() { return isatty(fileno(stderr)) != 0; }

void driver::addWeightOptions(CLI::App &command, WeightOptions &options,
                              const std::string &seedFlag) {
  auto *weights = command.add_option(
      "--weights", options.path,
      "Checkpoint (.safetensors) with the model's parameters, by name");
  auto *random = command.add_flag(
      "--random-weights", options.random,
      "Draw weights from N(0, 0.02) (LayerNorm gains 1, biases 0)");
  command.add_option(seedFlag, options.seed, "Seed for --random-weights")
      ->default_val(0);
  weights->excludes(random);
}

void driver::addCacheOptions(CLI::App &command, CacheOptions &options) {
  command.add_option("--cache-dir", options.dir,
                     "Folder of the persistent kernel cache (default: " +
                         (session::defaultCacheDir().empty()
                              ? std::string("$XDG_CACHE_HOME/tfc")
                              : session::defaultCacheDir()) +
                         ")");
  command.add_option("--jobs,-j", options.jobs,
                     "Threads that compile kernels (default: one per "
                     "hardware thread)");
  command.add_flag("--no-cache", options.disabled,
                   "Compile every kernel, read and write no cache (objects "
                   "linked in a temporary folder; Halide's JIT without a C "
                   "compiler)");
  command.add_flag("--compile-report", options.report,
                   "Print where each compiled kernel's time went (Halide "
                   "lowering, LLVM code generation, threads) to stderr");
}

session::CompileOptions driver::compileOptions(const ModelOptions &model,
                                               const CacheOptions &cache,
                                               std::vector<std::string> entries) {
  session::CompileOptions options;
  options.model = modelSource(model);
  options.pipeline = pipelineSettings(model);
  options.cache.enabled = !cache.disabled;
  options.cache.dir = cache.dir;
  options.jobs = cache.jobs;
  options.report = cache.report;
  options.entries = std::move(entries);
  return options;
}

/// The model, with its warnings printed; or the error printed.
static std::optional<CompiledModel>
printed(llvm::Expected<CompiledModel> model) {
  if (!model) {
    reportError(model.takeError());
    return std::nullopt;
  }
  (*model).session->diags.print(llvm::errs());
  return std::move(*model);
}

std::optional<CompiledModel>
driver::openToStage(const session::CompileOptions &options,
                 session::Stage last) {
  return printed(session::openUpTo(options, last));
}

std::optional<CompiledModel>
driver::planModel(const session::CompileOptions &options) {
  return printed(session::plan(options));
}

const rt::PlanEntry *
driver::reportedEntry(llvm::Expected<const rt::PlanEntry *> found) {
  if (found)
    return *found;
  reportError(found.takeError());
  return nullptr;
}

bool driver::buildKernels(CompiledModel &model,
                          const session::CompileOptions &options) {
  session::CompileOptions withProgress = options;
  bool progress = stderrIsTerminal();
  if (progress)
    withProgress.progress = [](size_t done, size_t count) {
      llvm::errs() << "\rcompiled kernel " << done << "/" << count << " ";
    };
  llvm::Error err = session::compileKernels(model, withProgress);
  if (progress)
    llvm::errs() << "\r                              \r";
  if (err) {
    reportError(std::move(err));
    return false;
  }
  if (!model.stats.cacheProblem.empty())
    llvm::errs() << "warning: kernel cache not used: "
                 << model.stats.cacheProblem << "\n";
  if (options.report)
    printCompileReport(model, llvm::errs());
  return true;
}

std::optional<CompiledModel> driver::compileModel(const ModelOptions &options,
                                                  const CacheOptions &cache) {
  session::CompileOptions compile = compileOptions(options, cache);
  std::optional<CompiledModel> model = planModel(compile);
  if (!model || !buildKernels(*model, compile))
    return std::nullopt;
  return model;
}

rt::Expected<rt::WeightMap>
driver::loadWeights(const rt::Plan &plan, const WeightOptions &options,
                    const std::vector<std::string> &quietPrefixes) {
  std::vector<std::string> warnings;
  rt::Expected<rt::WeightMap> weights =
      session::loadWeights(plan, options, &warnings, quietPrefixes);
  for (const std::string &warning : warnings)
    llvm::errs() << "warning: " << warning << "\n";
  return weights;
}

std::optional<rt::Executor> driver::makeExecutor(CompiledModel &model,
                                                 const WeightOptions &weights) {
  // Fixtures keep their inputs and references next to the weights.
  rt::Expected<rt::WeightMap> loaded =
      driver::loadWeights(model.plan(), weights, {"input.", "expected."});
  if (!loaded) {
    llvm::errs() << "error: " << loaded.message() << "\n";
    return std::nullopt;
  }
  rt::Expected<rt::Executor> executor =
      rt::Executor::create(model.plan(), model.kernels, std::move(*loaded),
                           session::executorOptions(model));
  if (!executor) {
    llvm::errs() << "error: " << executor.message() << "\n";
    return std::nullopt;
  }
  return std::move(*executor);
}

std::string driver::describe(const rt::Tensor &tensor) {
  return tensor.typeString();
}
