//===- main.cpp - Run a model compiled by `tfc compile`
//---------------------===//
//
// embed-app [--weights FILE.safetensors | --random [--seed N]]
//           [--entry NAME] [--ids 2,45,67,3] [--show N]
//           [--output OUT.safetensors]
//
// Loads the model's weights (a checkpoint, or the same seeded random weights
// as `tfc run --random-weights --seed N`), builds the entry's inputs from
// token ids (one sequence; padding masks all ones, other integer inputs
// zeros), runs the entry and prints each output's shape and first values in
// `tfc run`'s format. --output writes the inputs as `input.NAME` and the
// outputs as `expected.NAME`, the layout `tfc check --reference` reads, so
// the JIT can be checked against this binary.
//
// Everything it uses comes from the generated header (TFC_MODEL_HEADER, e.g.
// "bert_tiny.h", whose class is TFC_MODEL_CLASS, e.g.
// tfc_generated::BertTiny) and the tfc runtime; it links no Halide, MLIR or
// LLVM library.
//
//===----------------------------------------------------------------------===//

#include TFC_MODEL_HEADER

#include "runtime/Safetensors.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <sstream>
#include <string>
#include <vector>

using Model = TFC_MODEL_CLASS;
namespace rt = tfc::rt;

namespace {

struct Options {
  std::string weights;
  bool random = false;
  uint64_t seed = 0;
  std::string entry;
  std::string ids = "2,45,67,3";
  size_t show = 8;
  std::string output;
};

int usage(const char *argv0) {
  std::fprintf(stderr,
               "usage: %s [--weights FILE.safetensors | --random [--seed N]] "
               "[--entry NAME] [--ids 1,2,3] [--show N] "
               "[--output OUT.safetensors]\n",
               argv0);
  return 2;
}

bool parseArgs(int argc, char **argv, Options &options) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&](std::string &out) {
      if (i + 1 >= argc)
        return false;
      out = argv[++i];
      return true;
    };
    std::string text;
    if (arg == "--weights") {
      if (!value(options.weights))
        return false;
    } else if (arg == "--random") {
      options.random = true;
    } else if (arg == "--seed") {
      if (!value(text))
        return false;
      options.seed = std::strtoull(text.c_str(), nullptr, 10);
    } else if (arg == "--entry") {
      if (!value(options.entry))
        return false;
    } else if (arg == "--ids") {
      if (!value(options.ids))
        return false;
    } else if (arg == "--show") {
      if (!value(text))
        return false;
      options.show = std::strtoul(text.c_str(), nullptr, 10);
    } else if (arg == "--output") {
      if (!value(options.output))
        return false;
    } else {
      return false;
    }
  }
  // Random weights unless a checkpoint is given.
  if (options.weights.empty())
    options.random = true;
  return true;
}

rt::Expected<std::vector<int32_t>> parseIds(const std::string &text) {
  std::vector<int32_t> ids;
  std::stringstream stream(text);
  for (std::string item; std::getline(stream, item, ',');) {
    char *end = nullptr;
    long value = std::strtol(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0')
      return rt::Status::error("'" + item + "' is not a token id");
    ids.push_back(static_cast<int32_t>(value));
  }
  if (ids.empty())
    return rt::Status::error("--ids needs at least one id");
  return ids;
}

/// The entry's inputs for one sequence of `ids`: the first integer input
/// gets the ids, bool inputs (padding masks) ones, other integer inputs
/// (token types) zeros. Shapes come from the plan: every symbolic dimension
/// is evaluated with batch = 1 and the sequence length read from the ids.
rt::Expected<std::vector<rt::Tensor>>
buildInputs(const rt::PlanEntry &entry, const std::vector<int32_t> &ids) {
  const rt::PlanValue *idsValue = nullptr;
  int32_t idsInput = -1;
  for (size_t i = 0; i < entry.inputs.size(); ++i) {
    const rt::PlanValue &value = entry.values[entry.inputs[i]];
    if (value.dtype == rt::DType::I32 || value.dtype == rt::DType::I64) {
      idsValue = &value;
      idsInput = static_cast<int32_t>(i);
      break;
    }
  }
  if (!idsValue || idsValue->shape.size() != 2)
    return rt::Status::error("entry '" + entry.name +
                             "' has no [batch, seq] token-id input");

  // Symbols read from the ids input take its shape; others (a KV cache's
  // past length) are 0.
  std::vector<int64_t> symbols(entry.symbols.size(), 0);
  for (size_t s = 0; s < entry.symbols.size(); ++s)
    if (entry.symbols[s].input == idsInput)
      symbols[s] =
          entry.symbols[s].axis == 0 ? 1 : static_cast<int64_t>(ids.size());

  std::vector<rt::Tensor> inputs;
  for (size_t i = 0; i < entry.inputs.size(); ++i) {
    const rt::PlanValue &value = entry.values[entry.inputs[i]];
    rt::Shape shape;
    for (const rt::DimExpr &dim : value.shape)
      shape.push_back(rt::evaluate(dim, symbols));
    if (static_cast<int32_t>(i) == idsInput) {
      rt::Expected<rt::Tensor> tensor = rt::Tensor::fromI32(shape, ids);
      if (!tensor)
        return rt::Status::error("input '" + entry.inputNames[i] +
                                 "': " + tensor.message());
      inputs.push_back(std::move(*tensor));
      continue;
    }
    rt::Expected<rt::Tensor> tensor = rt::Tensor::zeros(value.dtype, shape);
    if (!tensor)
      return rt::Status::error("input '" + entry.inputNames[i] +
                               "': " + tensor.message());
    if (value.dtype == rt::DType::Bool)
      std::memset(tensor->data(), 1, tensor->byteSize());
    inputs.push_back(std::move(*tensor));
  }
  return inputs;
}

int fail(const std::string &message) {
  std::fprintf(stderr, "error: %s\n", message.c_str());
  return 1;
}

} // namespace

int main(int argc, char **argv) {
  Options options;
  if (!parseArgs(argc, argv, options))
    return usage(argv[0]);

  rt::Expected<std::vector<int32_t>> ids = parseIds(options.ids);
  if (!ids)
    return fail(ids.message());

  std::vector<std::string> warnings;
  rt::Expected<Model> model = options.random
                                  ? Model::randomWeights(options.seed)
                                  : Model::load(options.weights, &warnings);
  if (!model)
    return fail(model.message());
  for (const std::string &warning : warnings)
    std::fprintf(stderr, "warning: %s\n", warning.c_str());

  const rt::Plan &plan = model->plan();
  const rt::PlanEntry *entry = options.entry.empty()
                                   ? &plan.entries.front()
                                   : plan.findEntry(options.entry);
  if (!entry)
    return fail("the model has no entry '" + options.entry + "'");

  rt::Expected<std::vector<rt::Tensor>> inputs = buildInputs(*entry, *ids);
  if (!inputs)
    return fail(inputs.message());

  std::printf("model    %s (%s), entry %s\n", Model::kModelName, Model::kTarget,
              entry->name.c_str());
  std::printf(
      "weights  %s\n",
      options.random
          ? ("random (seed " + std::to_string(options.seed) + ")").c_str()
          : options.weights.c_str());
  for (size_t i = 0; i < inputs->size(); ++i)
    std::printf("input    %s %s  [%s]\n", entry->inputNames[i].c_str(),
                (*inputs)[i].typeString().c_str(),
                (*inputs)[i].firstValues(options.show).c_str());

  rt::Expected<std::vector<rt::Tensor>> outputs =
      model->run(entry->name, *inputs);
  if (!outputs)
    return fail(outputs.message());
  for (size_t i = 0; i < outputs->size(); ++i)
    std::printf("output   %s %s  [%s]\n", entry->outputNames[i].c_str(),
                (*outputs)[i].typeString().c_str(),
                (*outputs)[i].firstValues(options.show).c_str());

  if (!options.output.empty()) {
    std::map<std::string, rt::Tensor> named;
    for (size_t i = 0; i < inputs->size(); ++i)
      named.emplace("input." + entry->inputNames[i], (*inputs)[i]);
    for (size_t i = 0; i < outputs->size(); ++i)
      named.emplace("expected." + entry->outputNames[i], (*outputs)[i]);
    rt::Status written =
        rt::writeSafetensors(options.output, named, {{"entry", entry->name}});
    if (!written.ok())
      return fail(written.message());
    std::printf("wrote    %s\n", options.output.c_str());
  }
  return 0;
}
