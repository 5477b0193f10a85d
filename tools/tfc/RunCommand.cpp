//===- RunCommand.cpp - tfc run: execute a model on real inputs -----------===//
//
// Compiles the model in process (kernels from the disk cache), loads a
// checkpoint or random weights, runs one entry and prints every output's shape
// and first values; --output writes them to .safetensors or .npy.
//
//===----------------------------------------------------------------------===//

#include "tools/tfc/Commands.h"
#include "tools/tfc/CompileReport.h"
#include "tools/tfc/Inputs.h"
#include "tools/tfc/ModelRunner.h"

#include "runtime/Npy.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <CLI/CLI.hpp>

#include <chrono>
#include <cmath>
#include <cstring>

using namespace tfc;
using namespace tfc::driver;

namespace {

struct RunOptions {
  ModelOptions model;
  CacheOptions cache;
  WeightOptions weights;
  InputOptions inputs;
  std::string entry;
  std::string output;
  std::string saveWeights;
  size_t show = 8;
};

int64_t countNonFinite(const rt::Tensor &tensor) {
  if (tensor.dtype() != rt::DType::F32)
    return 0;
  const float *data = tensor.dataAs<float>();
  int64_t bad = 0;
  for (int64_t i = 0; i < tensor.numElements(); ++i)
    bad += !std::isfinite(data[i]);
  return bad;
}

rt::Status writeOutputs(const std::string &path, const rt::PlanEntry &entry,
                        const std::vector<rt::Tensor> &outputs) {
  auto endsWith = [&](const char *suffix) {
    size_t n = std::strlen(suffix);
    return path.size() >= n && path.compare(path.size() - n, n, suffix) == 0;
  };
  if (endsWith(".npy")) {
    if (outputs.size() == 1)
      return rt::writeNpy(path, outputs[0]);
    // One file per output: out.npy -> out.logits.npy, out.present_k.npy, ...
    std::string stem = path.substr(0, path.size() - 4);
    for (size_t i = 0; i < outputs.size(); ++i)
      TFC_RT_RETURN_IF_ERROR(
          rt::writeNpy(stem + "." + entry.outputNames[i] + ".npy", outputs[i]));
    return rt::Status::success();
  }
  if (!endsWith(".safetensors"))
    return rt::Status::error("--output must end in .safetensors or .npy: '" +
                             path + "'");
  std::map<std::string, rt::Tensor> named;
  for (size_t i = 0; i < outputs.size(); ++i)
    named.emplace(entry.outputNames[i], outputs[i]);
  return rt::writeSafetensors(path, named, {{"entry", entry.name}});
}

int runRun(const RunOptions &options) {
  auto start = std::chrono::steady_clock::now();
  // Plan, check the inputs, and only then compile the one entry's kernels.
  session::CompileOptions compile = compileOptions(options.model, options.cache);
  std::optional<CompiledModel> model = planModel(compile);
  if (!model)
    return 1;
  const rt::PlanEntry *entry =
      reportedEntry(model->requireEntry(options.entry));
  if (!entry)
    return 1;
  rt::Expected<std::vector<rt::Tensor>> inputs =
      buildInputs(*entry, options.inputs);
  if (!inputs) {
    llvm::errs() << "error: " << inputs.message() << "\n";
    return 1;
  }
  rt::Status checked = rt::checkInputs(*entry, *inputs);
  if (!checked.ok()) {
    llvm::errs() << "error: " << checked.message() << "\n";
    return 1;
  }
  compile.entries = {entry->name};
  if (!buildKernels(*model, compile))
    return 1;
  rt::Expected<rt::WeightMap> weights =
      driver::loadWeights(model->plan(), options.weights, {"input.", "expected."});
  if (!weights) {
    llvm::errs() << "error: " << weights.message() << "\n";
    return 1;
  }
  size_t numWeights = weights->size();
  if (!options.saveWeights.empty()) {
    // The weights as used (e.g. drawn by --random-weights), for other
    // frameworks to load the same model.
    rt::Status saved = rt::writeSafetensors(options.saveWeights, *weights,
                                            {{"format", "pt"}});
    if (!saved.ok()) {
      llvm::errs() << "error: " << saved.message() << "\n";
      return 1;
    }
  }
  rt::Expected<rt::Executor> executor =
      rt::Executor::create(model->plan(), model->kernels, std::move(*weights),
                           session::executorOptions(*model));
  if (!executor) {
    llvm::errs() << "error: " << executor.message() << "\n";
    return 1;
  }
  double setupSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();

  llvm::outs() << "model    "
               << (model->plan().modelName.empty() ? options.model.path
                                                   : model->plan().modelName)
               << ", entry " << entry->name << "\n";
  llvm::outs() << "compiled " << model->stats.compiled << " kernels, "
               << model->stats.cacheHits << " from the cache"
               << deferredKernelsNote(*model) << ", for " << entry->steps.size()
               << " steps in " << llvm::format("%.2f", model->stats.seconds)
               << " s\n";
  llvm::outs() << "weights  "
               << (options.weights.random
                       ? "random (seed " + std::to_string(options.weights.seed) +
                             ")"
                       : options.weights.path)
               << ", " << numWeights << " tensors\n";
  for (size_t i = 0; i < inputs->size(); ++i)
    llvm::outs() << "input    " << entry->inputNames[i] << " "
                 << describe((*inputs)[i]) << "  ["
                 << (*inputs)[i].firstValues(options.show) << "]\n";

  auto runStart = std::chrono::steady_clock::now();
  rt::Expected<std::vector<rt::Tensor>> outputs =
      executor->run(entry->name, *inputs);
  double runMs = std::chrono::duration<double, std::milli>(
                     std::chrono::steady_clock::now() - runStart)
                     .count();
  if (!outputs) {
    llvm::errs() << "error: " << outputs.message() << "\n";
    return 1;
  }
  llvm::outs() << "ran      " << entry->name << " in "
               << llvm::format("%.1f", runMs) << " ms (setup "
               << llvm::format("%.2f", setupSeconds) << " s)\n";
  for (size_t i = 0; i < outputs->size(); ++i) {
    const rt::Tensor &out = (*outputs)[i];
    int64_t bad = countNonFinite(out);
    llvm::outs() << "output   " << entry->outputNames[i] << " "
                 << describe(out) << "  [" << out.firstValues(options.show)
                 << "]"
                 << (bad ? "  " + std::to_string(bad) + " values not finite"
                         : std::string(out.dtype() == rt::DType::F32
                                           ? "  all finite"
                                           : ""))
                 << "\n";
  }
  if (!options.output.empty()) {
    rt::Status written = writeOutputs(options.output, *entry, *outputs);
    if (!written.ok()) {
      llvm::errs() << "error: " << written.message() << "\n";
      return 1;
    }
    llvm::outs() << "wrote    " << options.output << "\n";
  }
  return 0;
}

} // namespace

CommandRunner driver::registerRunCommand(CLI::App &app) {
  auto options = std::make_shared<RunOptions>();
  CLI::App *command = app.add_subcommand(
      "run", "Compile a model in process (kernels from the disk cache) and run "
             "one entry");
  addModelOptions(*command, options->model);
  addPipelineOptions(*command, options->model);
  addWeightOptions(*command, options->weights);
  addCacheOptions(*command, options->cache);
  command->add_option("--entry", options->entry,
                      "Entry point to run (default: the first one)");
  command->add_option("--ids", options->inputs.idLists["ids"],
                      "Token ids of one sequence, e.g. 464,3139,286; repeat "
                      "for a batch (shorter ones are padded, masks derived)");
  command->add_option("--src-ids", options->inputs.idLists["src"],
                      "Source token ids (encoder-decoder models)");
  command->add_option("--tgt-ids", options->inputs.idLists["tgt"],
                      "Target token ids (encoder-decoder models)");
  command->add_option("--ids-file", options->inputs.idsFile,
                      "Token ids, one sequence per line");
  command->add_option("--mask", options->inputs.masks,
                      "Attention mask of one sequence (1 = token, 0 = "
                      "padding); repeat per sequence");
  command->add_option("--pad-id", options->inputs.padId,
                      "Id used to pad shorter sequences")
      ->default_val(0);
  command->add_option("--inputs", options->inputs.inputsFile,
                      ".safetensors holding inputs by name (NAME or "
                      "input.NAME)");
  command->add_option("-o,--output", options->output,
                      "Write the outputs to a .safetensors file (by output "
                      "name) or .npy");
  command->add_option("--save-weights", options->saveWeights,
                      "Write the weights used (checkpoint or random) to a "
                      ".safetensors file");
  command->add_option("--show", options->show,
                      "How many leading values of each tensor to print")
      ->default_val(8);
  return [options] { return runRun(*options); };
}
