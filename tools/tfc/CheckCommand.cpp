//===- CheckCommand.cpp - tfc check: compare outputs with references -----===//
//
// Runs an entry on the inputs stored in a reference file (`input.NAME`) and
// compares each output with `expected.NAME` (or a tensor named with
// --expect OUTPUT=TENSOR): the max abs error per output is printed, and the
// exit status is 1 if any exceeds the tolerance (or, with --min-top1, if
// fewer rows than asked agree on their argmax with the reference). The
// numeric fixture tests are this command on tests/fixtures/*.safetensors.
//
//===----------------------------------------------------------------------===//

#include "tools/tfc/Commands.h"
#include "tools/tfc/Inputs.h"
#include "tools/tfc/ModelRunner.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <optional>

#include <cmath>

using namespace tfc;
using namespace tfc::driver;

namespace {

struct CheckOptions {
  ModelOptions model;
  CacheOptions cache;
  WeightOptions weights;
  std::string reference;
  std::string entry;
  double tolerance = 1e-4;
  /// --min-top1: also require this fraction of rows to agree on the argmax
  /// of the last axis (logits).
  std::optional<double> minTop1;
  std::vector<std::string> expect; // OUTPUT=TENSOR
};

/// The fraction of rows (vectors along the last axis) of `got` whose
/// largest element is where `expected` has its largest (the first of equal
/// ones), and the number of rows.
std::pair<double, int64_t> top1Agreement(const rt::Tensor &got,
                                         const rt::Tensor &expected) {
  int64_t width = got.rank() ? got.shape().back() : 1;
  int64_t rows = width ? got.numElements() / width : 0;
  const float *a = got.dataAs<float>();
  const float *b = expected.dataAs<float>();
  int64_t same = 0;
  for (int64_t r = 0; r < rows; ++r) {
    const float *ra = a + r * width, *rb = b + r * width;
    same += std::max_element(ra, ra + width) - ra ==
            std::max_element(rb, rb + width) - rb;
  }
  return {rows ? static_cast<double>(same) / rows : 1.0, rows};
}

/// Compares one output with its reference (same shape, f32) and prints the
/// result line(s): the max abs error, and with --min-top1 the top-1
/// agreement. Returns whether both are within bounds.
bool compareOutput(const std::string &name, const std::string &key,
                   const rt::Tensor &got, const rt::Tensor &expected,
                   const CheckOptions &options) {
  const float *a = got.dataAs<float>();
  const float *b = expected.dataAs<float>();
  double maxError = 0;
  int64_t worst = 0;
  for (int64_t j = 0; j < got.numElements(); ++j) {
    double error = std::fabs(static_cast<double>(a[j]) - b[j]);
    if (!(error <= maxError)) { // also catches NaN
      maxError = std::isnan(error) ? INFINITY : error;
      worst = j;
    }
  }
  bool ok = maxError <= options.tolerance;
  llvm::outs() << name << ": " << describe(got) << " vs '" << key
               << "': max abs error " << llvm::format("%.3e", maxError)
               << " at flat index " << worst << " (tolerance "
               << llvm::format("%.0e", options.tolerance) << ")  "
               << (ok ? "ok" : "FAIL") << "\n";
  if (!options.minTop1)
    return ok;
  auto [agreement, rows] = top1Agreement(got, expected);
  bool top1Ok = agreement >= *options.minTop1;
  llvm::outs() << name << ": top-1 agreement "
               << llvm::format("%.2f", 100 * agreement) << "% of " << rows
               << " rows (at least " << llvm::format("%.2f", 100 * *options.minTop1)
               << "%)  " << (top1Ok ? "ok" : "FAIL") << "\n";
  return ok && top1Ok;
}

int runCheck(const CheckOptions &options) {
  session::CompileOptions compile = compileOptions(options.model, options.cache);
  std::optional<CompiledModel> model = planModel(compile);
  if (!model)
    return 1;
  const rt::PlanEntry *entry =
      reportedEntry(model->requireEntry(options.entry));
  if (!entry)
    return 1;
  compile.entries = {entry->name};
  if (!buildKernels(*model, compile))
    return 1;
  rt::Expected<rt::SafetensorsFile> reference =
      rt::SafetensorsFile::open(options.reference);
  if (!reference) {
    llvm::errs() << "error: " << reference.message() << "\n";
    return 1;
  }
  InputOptions inputOptions;
  inputOptions.inputsFile = options.reference;
  rt::Expected<std::vector<rt::Tensor>> inputs =
      buildInputs(*entry, inputOptions);
  if (!inputs) {
    llvm::errs() << "error: " << inputs.message() << "\n";
    return 1;
  }
  rt::Expected<rt::WeightMap> weights =
      driver::loadWeights(model->plan(), options.weights, {"input.", "expected."});
  if (!weights) {
    llvm::errs() << "error: " << weights.message() << "\n";
    return 1;
  }
  rt::Expected<rt::Executor> executor =
      rt::Executor::create(model->plan(), model->kernels, std::move(*weights),
                           session::executorOptions(*model));
  if (!executor) {
    llvm::errs() << "error: " << executor.message() << "\n";
    return 1;
  }
  rt::Expected<std::vector<rt::Tensor>> outputs =
      executor->run(entry->name, *inputs);
  if (!outputs) {
    llvm::errs() << "error: " << outputs.message() << "\n";
    return 1;
  }

  std::map<std::string, std::string> expectNames;
  for (const std::string &pair : options.expect) {
    size_t eq = pair.find('=');
    if (eq == std::string::npos || eq == 0) {
      llvm::errs() << "error: --expect takes OUTPUT=TENSOR, got '" << pair
                   << "'\n";
      return 1;
    }
    std::string output = pair.substr(0, eq);
    if (std::find(entry->outputNames.begin(), entry->outputNames.end(),
                  output) == entry->outputNames.end()) {
      llvm::errs() << "error: --expect " << pair << ": entry '" << entry->name
                   << "' has no output '" << output << "' (its outputs:";
      for (const std::string &name : entry->outputNames)
        llvm::errs() << " " << name;
      llvm::errs() << ")\n";
      return 1;
    }
    expectNames[output] = pair.substr(eq + 1);
  }

  int compared = 0, failed = 0;
  for (size_t i = 0; i < outputs->size(); ++i) {
    const std::string &name = entry->outputNames[i];
    std::string key = expectNames.count(name) ? expectNames[name]
                                              : "expected." + name;
    if (!reference->contains(key)) {
      llvm::outs() << name << ": no reference tensor '" << key
                   << "', not compared\n";
      continue;
    }
    rt::Expected<rt::Tensor> expected = reference->loadF32(key);
    if (!expected) {
      llvm::errs() << "error: " << expected.message() << "\n";
      return 1;
    }
    const rt::Tensor &got = (*outputs)[i];
    if (got.shape() != expected->shape() || got.dtype() != rt::DType::F32) {
      llvm::outs() << name << ": " << describe(got) << " but reference '"
                   << key << "' is " << describe(*expected) << "  FAIL\n";
      ++failed;
      continue;
    }
    ++compared;
    failed += !compareOutput(name, key, got, *expected, options);
  }
  if (compared == 0) {
    llvm::errs() << "error: no output of entry '" << entry->name
                 << "' has a reference tensor in '" << options.reference
                 << "'\n";
    return 1;
  }
  llvm::outs() << compared - failed << " passed, " << failed << " failed\n";
  return failed ? 1 : 0;
}

} // namespace

CommandRunner driver::registerCheckCommand(CLI::App &app) {
  auto options = std::make_shared<CheckOptions>();
  CLI::App *command = app.add_subcommand(
      "check", "Run an entry on reference inputs and compare its outputs "
               "with reference tensors");
  addModelOptions(*command, options->model);
  addPipelineOptions(*command, options->model);
  addWeightOptions(*command, options->weights);
  addCacheOptions(*command, options->cache);
  command
      ->add_option("--reference", options->reference,
                   ".safetensors with input.NAME inputs and expected.NAME "
                   "outputs")
      ->required();
  command->add_option("--entry", options->entry,
                      "Entry point to check (default: the first one)");
  command->add_option("--tolerance", options->tolerance,
                      "Largest allowed max abs error")
      ->default_val(1e-4);
  command
      ->add_option("--min-top1", options->minTop1,
                   "Also require this fraction (0..1) of rows (vectors along "
                   "the last axis, e.g. logits) to have their largest "
                   "element where the reference has it")
      ->check(CLI::Range(0.0, 1.0));
  command->add_option("--expect", options->expect,
                      "Compare OUTPUT with reference tensor TENSOR "
                      "(OUTPUT=TENSOR; repeatable)");
  return [options] { return runCheck(*options); };
}
