//===- Generator.h - Text generation over a KV-cache decoder ----*- C++ -*-===//
//
// The generation loop of decoder-only models: one prefill over the prompt,
// then one decode step per new token, each reading the key/value cache the
// previous step returned, and a Sampler choosing every token. It runs any
// Executor whose plan follows tfc's decoder convention, so JIT (`tfc
// generate`) and AOT programs share it:
//
//   prefill(ids: i32[1, seq])                -> logits, present_k, present_v
//   decode(ids: i32[1, 1], past_k, past_v)   -> logits, present_k, present_v
//
// `logits` is [1, seq, vocab] (the last row is used). Every decode input
// named `past_X` is fed the output `present_X` of the step before; the cache
// tensors are opaque to the loop (their layout is the model's business).
//
//===----------------------------------------------------------------------===//

#ifndef TFC_RUNTIME_GENERATOR_H
#define TFC_RUNTIME_GENERATOR_H

#include "runtime/Executor.h"
#include "runtime/Sampler.h"

#include <functional>
#include <string>
#include <vector>

namespace tfc::rt {

struct GenerationOptions {
  /// New tokens at most (>= 1).
  int maxNewTokens = 32;
  SamplerOptions sampler;
  /// Generation stops after producing one of these (EOS); the stop token
  /// is part of the output.
  std::vector<int32_t> stopIds;
  std::string prefillEntry = "prefill";
  std::string decodeEntry = "decode";
};

/// Why generation ended.
enum class StopReason { MaxTokens, StopToken, Callback };

struct GenerationResult {
  std::vector<int32_t> generated;
  StopReason reason = StopReason::MaxTokens;
  double prefillMs = 0;
  /// Time in decode steps (each produces one token after the first).
  double decodeMs = 0;
  int decodeSteps = 0;
  double decodeTokensPerSecond() const {
    return decodeMs > 0 ? decodeSteps * 1000.0 / decodeMs : 0;
  }
};

/// Called with each new token as soon as it is chosen; returning false
/// stops generation (the token is kept).
using TokenCallback = std::function<bool(int32_t id)>;

/// The longest prompt + new tokens the plan's entries accept: the `seq`
/// bound of the prefill entry and the `past` bound (+1) of the decode
/// entry; 0 when neither is bounded. Fails when the entries do not follow
/// the convention above.
Expected<int64_t> contextLength(const Plan &plan,
                                const GenerationOptions &options);

/// The cache convention shared by the generation loops: for each input of
/// `consumer`, the index of the output of `producer` that feeds it —
/// `past_X` is fed `present_X` — or -1 for an input that is not a cache
/// input. Fails when a `past_X` has no `present_X` to come from.
Expected<std::vector<int>> cacheWiring(const PlanEntry &consumer,
                                       const PlanEntry &producer);

/// Whether a prompt of `promptLength` tokens plus options.maxNewTokens new
/// ones fits the context (contextLength); the error says by how much not.
Status checkGenerationLength(const Plan &plan, size_t promptLength,
                             const GenerationOptions &options);

/// Checks that `plan` has the entries and names the loop needs.
Status checkDecoderPlan(const Plan &plan, const GenerationOptions &options);

/// Generates from `prompt` (one sequence, at least one id).
Expected<GenerationResult> generate(Executor &executor,
                                    const std::vector<int32_t> &prompt,
                                    const GenerationOptions &options,
                                    const TokenCallback &onToken = {});

} // namespace tfc::rt

#endif // TFC_RUNTIME_GENERATOR_H
