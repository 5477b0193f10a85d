//===- Weights.cpp - A model's weights from a checkpoint or a seed --------===//

#include "session/Weights.h"

using namespace tfc;
using namespace tfc::session;

/// Whether `warning` is about a tensor named with one of `prefixes`.
static bool isQuiet(const std::string &warning,
                    const std::vector<std::string> &prefixes) {
  for (const std::string &prefix : prefixes)
    if (warning.find("'" + prefix) != std::string::npos)
      return true;
  return false;
}

rt::Expected<rt::WeightMap>
session::loadWeights(const rt::Plan &plan, const WeightSource &source,
                     std::vector<std::string> *warnings,
                     const std::vector<std::string> &quietPrefixes) {
  rt::ParamTable table;
  for (const rt::ParamInfo &param : plan.params)
    table.push_back(rt::ParamSpec{param.name, param.shape, rt::DType::F32});
  if (source.random)
    return rt::randomWeights(table, source.seed);
  if (source.path.empty())
    return rt::Status::error(
        "no weights: pass --weights FILE.safetensors or --random-weights");
  rt::Expected<rt::BoundWeights> bound = rt::bindWeights(table, source.path);
  if (!bound)
    return bound.status();
  if (warnings)
    for (const std::string &warning : bound->warnings)
      if (!isQuiet(warning, quietPrefixes))
        warnings->push_back(warning);
  return std::move(bound->tensors);
}
