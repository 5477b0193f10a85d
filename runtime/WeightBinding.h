//===- WeightBinding.h - Checkpoints checked against a model ----*- C++ -*-===//
//
// A compiled model declares its parameters as a table of {name, shape,
// dtype}. Binding matches that table against a checkpoint before anything
// runs, so a wrong checkpoint is reported up front, completely and by name:
//
//   model.safetensors: the checkpoint does not match the model (2 problems):
//     missing tensor 'h.0.attn.c_attn.weight' (expected f32[768, 2304])
//     tensor 'wte.weight': expected shape [50257, 768], found [50257, 512]
//
// rather than as a crash or garbage output at the first layer that reads a
// wrong buffer. All problems (up to a limit) are listed at once because
// fixing a conversion script one error per run is miserable.
//
// randomWeights() fills a table deterministically for tests and benchmarks
// that have no checkpoint.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_RUNTIME_WEIGHTBINDING_H
#define TFC_RUNTIME_WEIGHTBINDING_H

#include "runtime/Safetensors.h"
#include "runtime/Status.h"
#include "runtime/Tensor.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace tfc::rt {

/// One parameter the model expects.
struct ParamSpec {
  std::string name;
  Shape shape;
  DType dtype = DType::F32;
};

/// The model's parameters, in the order the model declares them.
using ParamTable = std::vector<ParamSpec>;

/// Parameter name -> tensor.
using WeightMap = std::map<std::string, Tensor>;

struct BindOptions {
  /// When a parameter is not found under its own name, these prefixes are
  /// tried in order ("transformer." + name, ...). Hugging Face checkpoints of
  /// a model with a head (GPT2LMHeadModel, BertForMaskedLM) nest the base
  /// model under such a prefix while the bare model's do not; accepting both
  /// is what `from_pretrained` does too.
  std::vector<std::string> prefixes = {"transformer.", "model.", "bert.",
                                       "distilbert.", "roberta."};
  /// Problems listed in one error before "... and N more".
  size_t maxProblems = 20;
};

struct BoundWeights {
  /// Every parameter of the table, by its table name. f32 parameters are
  /// zero-copy views into the checkpoint when it stores aligned f32, else
  /// converted copies (f16, bf16, f64 are accepted for f32 parameters).
  WeightMap tensors;
  /// Not errors: "unused tensor 'lm_head.weight' (f32[50257, 768])" for each
  /// checkpoint tensor the model does not use, in name order.
  std::vector<std::string> warnings;
};

/// Binds `table` against an opened checkpoint. Fails when any parameter is
/// missing, has the wrong shape, or has a dtype that cannot become the
/// parameter's dtype; the message starts with the checkpoint path and lists
/// every problem (up to options.maxProblems). Also fails for a malformed
/// table (duplicate names, negative dimensions).
Expected<BoundWeights> bindWeights(const ParamTable &table,
                                   const SafetensorsFile &checkpoint,
                                   const BindOptions &options = {});

/// Opens `path` and binds it; errors from opening are returned as they are.
Expected<BoundWeights> bindWeights(const ParamTable &table,
                                   const std::string &path,
                                   const BindOptions &options = {});

/// Deterministic weights for `table`: the same (table entry, seed) always
/// gives the same values, independent of the other entries and their order
/// (each tensor's stream is keyed by its name), and different seeds give
/// different values. Rules, by name: ending in "bias" or "beta" -> 0; rank 1
/// and ending in "weight" or "gamma" (LayerNorm scales) -> 1; otherwise
/// N(0, 0.02), the GPT-2/BERT initializer. Non-float parameters are 0.
Expected<WeightMap> randomWeights(const ParamTable &table, uint64_t seed);

/// The generator behind randomWeights, exposed for tests: splitmix64, a
/// counter-based mixer (value i of a stream is splitmix64(key + i)), so any
/// element can be computed independently of the others.
uint64_t splitmix64(uint64_t x);

} // namespace tfc::rt

#endif // TFC_RUNTIME_WEIGHTBINDING_H
