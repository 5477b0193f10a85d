//===- Generator.cpp - Text generation over a KV-cache decoder ------------===//

#include "runtime/Generator.h"

#include <algorithm>
#include <chrono>

namespace tfc::rt {

namespace {

/// For each decode input after `ids`, the index of the output of
/// `producer` that feeds it; every one must be a cache input.
Expected<std::vector<int>> decoderWiring(const PlanEntry &decode,
                                         const PlanEntry &producer) {
  Expected<std::vector<int>> wiring = cacheWiring(decode, producer);
  if (!wiring)
    return wiring;
  for (size_t i = 1; i < wiring->size(); ++i)
    if ((*wiring)[i] < 0)
      return Status::error("entry '" + decode.name + "': input '" +
                           decode.inputNames[i] +
                           "' is not a cache input (past_*)");
  wiring->erase(wiring->begin());
  return wiring;
}

struct Entries {
  const PlanEntry *prefill = nullptr;
  const PlanEntry *decode = nullptr;
  int prefillLogits = -1, decodeLogits = -1;
  std::vector<int> fromPrefill, fromDecode;
};

Expected<Entries> findEntries(const Plan &plan,
                              const GenerationOptions &options) {
  Entries e;
  e.prefill = plan.findEntry(options.prefillEntry);
  e.decode = plan.findEntry(options.decodeEntry);
  if (!e.prefill || !e.decode)
    return Status::error("generation needs entries '" + options.prefillEntry +
                         "' and '" + options.decodeEntry +
                         "' (a decoder with a KV cache)");
  for (const PlanEntry *entry : {e.prefill, e.decode})
    if (entry->inputNames.empty() || entry->inputNames[0] != "ids")
      return Status::error("entry '" + entry->name +
                           "': the first input must be 'ids'");
  e.prefillLogits = e.prefill->outputIndex("logits");
  e.decodeLogits = e.decode->outputIndex("logits");
  if (e.prefillLogits < 0 || e.decodeLogits < 0)
    return Status::error("entries '" + e.prefill->name + "' and '" +
                         e.decode->name + "' must both return 'logits'");
  Expected<std::vector<int>> a = decoderWiring(*e.decode, *e.prefill);
  if (!a)
    return a.status();
  Expected<std::vector<int>> b = decoderWiring(*e.decode, *e.decode);
  if (!b)
    return b.status();
  e.fromPrefill = a.take();
  e.fromDecode = b.take();
  return e;
}

/// The last position's logits of a [1, seq, vocab] (or [1, vocab]) tensor.
Expected<const float *> lastRow(const Tensor &logits, int64_t &vocab) {
  if (logits.dtype() != DType::F32 || logits.rank() < 2 ||
      logits.shape()[0] != 1)
    return Status::error("logits must be f32[1, seq, vocab], got " +
                         logits.typeString());
  vocab = logits.shape().back();
  return logits.dataAs<float>() + (logits.numElements() - vocab);
}

/// The decode entry's KvCache (when it grows its caches in place), made
/// from prefill's cache outputs with room for the whole generation.
Expected<KvCache> cacheFromPrefill(const Entries &e,
                                   const std::vector<Tensor> &prefillOutputs,
                                   int64_t capacity) {
  std::vector<Tensor> past;
  for (const PlanCache &c : e.decode->caches)
    past.push_back(prefillOutputs[static_cast<size_t>(
        e.fromPrefill[static_cast<size_t>(c.input - 1)])]);
  return createKvCache(*e.decode, past, capacity);
}

double msSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - start)
      .count();
}

} // namespace

Expected<std::vector<int>> cacheWiring(const PlanEntry &consumer,
                                       const PlanEntry &producer) {
  std::vector<int> wiring;
  for (const std::string &name : consumer.inputNames) {
    if (name.rfind("past_", 0) != 0) {
      wiring.push_back(-1);
      continue;
    }
    std::string present = "present_" + name.substr(5);
    int out = producer.outputIndex(present);
    if (out < 0)
      return Status::error("entry '" + producer.name + "' has no output '" +
                           present + "' for input '" + name + "' of '" +
                           consumer.name + "'");
    wiring.push_back(out);
  }
  return wiring;
}

Status checkDecoderPlan(const Plan &plan, const GenerationOptions &options) {
  return findEntries(plan, options).status();
}

Expected<int64_t> contextLength(const Plan &plan,
                                const GenerationOptions &options) {
  Expected<Entries> e = findEntries(plan, options);
  if (!e)
    return e.status();
  int64_t seq = e->prefill->symbolBound("seq");
  int64_t past = e->decode->symbolBound("past");
  if (past > 0)
    past += 1;
  if (seq > 0 && past > 0)
    return std::min(seq, past);
  return std::max(seq, past);
}

Status checkGenerationLength(const Plan &plan, size_t promptLength,
                             const GenerationOptions &options) {
  Expected<int64_t> context = contextLength(plan, options);
  if (!context)
    return context.status();
  int64_t total = static_cast<int64_t>(promptLength) + options.maxNewTokens;
  if (*context <= 0 || total <= *context)
    return Status::success();
  return Status::error("the prompt has " + std::to_string(promptLength) +
                       " tokens and " + std::to_string(options.maxNewTokens) +
                       " new ones are asked for, but the model's context is " +
                       std::to_string(*context) + " tokens");
}

Expected<GenerationResult> generate(Executor &executor,
                                    const std::vector<int32_t> &prompt,
                                    const GenerationOptions &options,
                                    const TokenCallback &onToken) {
  if (prompt.empty())
    return Status::error("generation needs a prompt of at least one token");
  if (options.maxNewTokens < 1)
    return Status::error("max new tokens must be >= 1");
  Expected<Entries> entries = findEntries(executor.plan(), options);
  if (!entries)
    return entries.status();
  TFC_RT_RETURN_IF_ERROR(
      checkGenerationLength(executor.plan(), prompt.size(), options));
  Expected<Sampler> sampler = Sampler::create(options.sampler);
  if (!sampler)
    return sampler.status();

  GenerationResult result;
  std::vector<int32_t> sequence = prompt;
  auto start = std::chrono::steady_clock::now();
  Expected<Tensor> ids =
      Tensor::fromI32({1, static_cast<int64_t>(prompt.size())}, prompt);
  if (!ids)
    return ids.status();
  Expected<std::vector<Tensor>> outputs =
      executor.run(entries->prefill->name, {ids.take()});
  const std::vector<int> *wiring = &entries->fromPrefill;
  int logitsIndex = entries->prefillLogits;
  // Decode entries that grow their caches in place run on one KvCache for
  // the whole generation; others take the previous step's outputs.
  const bool inPlace = !entries->decode->caches.empty();
  KvCache cache;
  for (;;) {
    if (!outputs)
      return outputs.status();
    int64_t vocab = 0;
    Expected<const float *> row =
        lastRow((*outputs)[static_cast<size_t>(logitsIndex)], vocab);
    if (!row)
      return row.status();
    Expected<int32_t> next = sampler->sample(
        *row, static_cast<size_t>(vocab), sequence.data(), sequence.size());
    if (!next)
      return next.status();
    (result.generated.empty() ? result.prefillMs : result.decodeMs) +=
        msSince(start);
    result.generated.push_back(*next);
    sequence.push_back(*next);
    bool more = !onToken || onToken(*next);
    if (std::count(options.stopIds.begin(), options.stopIds.end(), *next)) {
      result.reason = StopReason::StopToken;
      break;
    }
    if (!more) {
      result.reason = StopReason::Callback;
      break;
    }
    if (static_cast<int>(result.generated.size()) >= options.maxNewTokens)
      break;

    start = std::chrono::steady_clock::now();
    std::vector<Tensor> inputs;
    Expected<Tensor> token = Tensor::fromI32({1, 1}, {*next});
    if (!token)
      return token.status();
    inputs.push_back(token.take());
    if (inPlace) {
      if (result.decodeSteps == 0) {
        Expected<KvCache> made = cacheFromPrefill(
            *entries, *outputs,
            static_cast<int64_t>(prompt.size()) + options.maxNewTokens);
        if (!made)
          return made.status();
        cache = made.take();
      }
      inputs.resize(entries->decode->inputs.size());
      outputs = executor.run(entries->decode->name, inputs, cache);
    } else {
      for (int out : *wiring)
        inputs.push_back(std::move((*outputs)[static_cast<size_t>(out)]));
      outputs = executor.run(entries->decode->name, inputs);
    }
    wiring = &entries->fromDecode;
    logitsIndex = entries->decodeLogits;
    ++result.decodeSteps;
  }
  return result;
}

} // namespace tfc::rt
