//===- ModelRunner.cpp - Compile a model and run it in process ------------===//

#include "tools/tfc/ModelRunner.h"

#include "codegen/KernelBuilder.h"
#include "codegen/KernelCache.h"

#include "llvm/Support/raw_ostream.h"

#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdio>
#include <sstream>
#include <unistd.h>

using namespace tfc;
using namespace tfc::driver;

CompiledModel::CompiledModel() = default;
CompiledModel::~CompiledModel() = default;
CompiledModel::CompiledModel(CompiledModel &&) noexcept = default;

bool driver::stderrIsTerminal() { return isatty(fileno(stderr)) != 0; }

void driver::addWeightOptions(CLI::App &command, WeightOptions &options) {
  auto *weights = command.add_option(
      "--weights", options.path,
      "Checkpoint (.safetensors) with the model's parameters, by name");
  auto *random = command.add_flag(
      "--random-weights", options.random,
      "Draw weights from N(0, 0.02) (LayerNorm gains 1, biases 0)");
  command.add_option("--seed", options.seed, "Seed for --random-weights")
      ->default_val(0);
  weights->excludes(random);
}

const rt::PlanEntry *CompiledModel::entry(const std::string &name) const {
  if (name.empty())
    return plan().entries.empty() ? nullptr : &plan().entries.front();
  return plan().findEntry(name);
}

std::optional<CompiledModel>
driver::compileModel(const ModelOptions &options) {
  CompiledModel model;
  model.context = makeContext();
  model.session = openModel(options, *model.context, /*elaborateIR=*/true);
  if (!model.session || !optimize(*model.session, options))
    return std::nullopt;

  llvm::Expected<BuiltPlan> built =
      buildPlan(*model.session->model.module, codegen::kernelSignature);
  if (!built) {
    llvm::errs() << "error: " << llvm::toString(built.takeError()) << "\n";
    return std::nullopt;
  }
  model.built = std::move(*built);

  auto start = std::chrono::steady_clock::now();
  model.cache = std::make_unique<codegen::KernelCache>(codegen::hostTarget());
  const size_t count = model.built.kernelOps.size();
  bool progress = stderrIsTerminal();
  for (size_t i = 0; i < count; ++i) {
    if (progress)
      llvm::errs() << "\rcompiling kernel " << (i + 1) << "/" << count
                   << " ";
    llvm::Expected<const codegen::CompiledKernel &> compiled =
        model.cache->getOrCompile(model.built.kernelOps[i]);
    if (!compiled) {
      if (progress)
        llvm::errs() << "\n";
      llvm::errs() << "error: compiling kernel "
                   << model.built.plan.kernels[i].signature << ": "
                   << llvm::toString(compiled.takeError()) << "\n";
      return std::nullopt;
    }
    model.kernels.push_back(compiled->fn);
  }
  model.compileSeconds = std::chrono::duration<double>(
                             std::chrono::steady_clock::now() - start)
                             .count();
  if (progress)
    llvm::errs() << "\r";
  return model;
}

rt::Expected<rt::WeightMap>
driver::loadWeights(const rt::Plan &plan, const WeightOptions &options,
                    const std::vector<std::string> &quietPrefixes) {
  rt::ParamTable table;
  for (const rt::ParamInfo &param : plan.params)
    table.push_back(rt::ParamSpec{param.name, param.shape, rt::DType::F32});
  if (options.random || options.path.empty()) {
    if (!options.random)
      return rt::Status::error(
          "no weights: pass --weights FILE.safetensors or --random-weights");
    return rt::randomWeights(table, options.seed);
  }
  rt::Expected<rt::BoundWeights> bound = rt::bindWeights(table, options.path);
  if (!bound)
    return bound.status();
  size_t quiet = 0;
  for (const std::string &warning : bound->warnings) {
    bool hide = false;
    for (const std::string &prefix : quietPrefixes)
      hide = hide || warning.find("'" + prefix) != std::string::npos;
    if (hide)
      ++quiet;
    else
      llvm::errs() << "warning: " << warning << "\n";
  }
  return std::move(bound->tensors);
}

std::string driver::describe(const rt::Tensor &tensor) {
  return tensor.typeString();
}

std::string driver::firstValues(const rt::Tensor &tensor, size_t count) {
  std::ostringstream os;
  os.precision(6);
  size_t n = std::min<size_t>(count, static_cast<size_t>(tensor.numElements()));
  const rt::Tensor &t = tensor;
  for (size_t i = 0; i < n; ++i) {
    if (i)
      os << ", ";
    switch (tensor.dtype()) {
    case rt::DType::F32:
      os << t.dataAs<float>()[i];
      break;
    case rt::DType::I32:
      os << t.dataAs<int32_t>()[i];
      break;
    case rt::DType::I64:
      os << t.dataAs<int64_t>()[i];
      break;
    default:
      os << static_cast<int>(t.dataAs<uint8_t>()[i]);
      break;
    }
  }
  if (static_cast<int64_t>(n) < tensor.numElements())
    os << ", ...";
  return os.str();
}
