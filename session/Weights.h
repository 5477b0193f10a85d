//===- Weights.h - A model's weights from a checkpoint or a seed -*- C++ -*-===//
//
// Binds the parameters a Plan reads to a .safetensors checkpoint (by name,
// f16/bf16 converted, every mismatch listed) or draws them from the
// runtime's seeded generator (rt::randomWeights: the same numbers on every
// machine, and in AOT programs).
//
//===----------------------------------------------------------------------===//

#ifndef TFC_SESSION_WEIGHTS_H
#define TFC_SESSION_WEIGHTS_H

#include "runtime/Plan.h"
#include "runtime/WeightBinding.h"

#include <string>
#include <vector>

namespace tfc::session {

/// Where weights come from: a checkpoint, or random with a seed.
struct WeightSource {
  std::string path;
  bool random = false;
  uint64_t seed = 0;
};

/// The weights of `plan`. Checkpoint tensors the model does not use are
/// reported in `warnings` (when given), except those whose names start with
/// one of `quietPrefixes` (fixtures keep `input.*` and `expected.*` next to
/// the weights).
rt::Expected<rt::WeightMap>
loadWeights(const rt::Plan &plan, const WeightSource &source,
            std::vector<std::string> *warnings = nullptr,
            const std::vector<std::string> &quietPrefixes = {});

} // namespace tfc::session

#endif // TFC_SESSION_WEIGHTS_H
