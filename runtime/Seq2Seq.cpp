//===- Seq2Seq.cpp - Generation with encoder-decoder models ---------------===//

#include "runtime/Seq2Seq.h"

#include <algorithm>
#include <cstring>

namespace tfc::rt {

namespace {

int inputIndex(const PlanEntry &entry, const std::string &name) {
  auto it = std::find(entry.inputNames.begin(), entry.inputNames.end(), name);
  return it == entry.inputNames.end()
             ? -1
             : static_cast<int>(it - entry.inputNames.begin());
}

size_t inputRank(const PlanEntry &entry, size_t input) {
  return entry.values[static_cast<size_t>(entry.inputs[input])].shape.size();
}

int64_t symbolBound(const PlanEntry &entry, const std::string &name) {
  for (const SymbolSource &s : entry.symbols)
    if (s.name == name)
      return s.bound;
  return 0;
}

struct Entries {
  const PlanEntry *encode = nullptr;
  const PlanEntry *decode = nullptr;
  int64_t vocab = 0;
};

Expected<Entries> findEntries(const Plan &plan, const Seq2SeqOptions &options) {
  Entries e;
  e.encode = plan.findEntry(options.encodeEntry);
  e.decode = plan.findEntry(options.decodeEntry);
  if (!e.encode || !e.decode)
    return Status::error("encoder-decoder generation needs entries '" +
                         options.encodeEntry + "' and '" +
                         options.decodeEntry + "'");
  if (inputIndex(*e.encode, "src") < 0 || inputIndex(*e.decode, "tgt") < 0 ||
      inputIndex(*e.decode, "memory") < 0)
    return Status::error("entry '" + e.encode->name + "' must take 'src' and '" +
                         e.decode->name + "' 'tgt' and 'memory'");
  for (const std::string &name : e.decode->inputNames)
    if (name != "tgt" && name != "memory" && name != "src_mask" &&
        name != "tgt_mask")
      return Status::error("entry '" + e.decode->name + "': input '" + name +
                           "' cannot be derived (tgt, memory, src_mask, "
                           "tgt_mask can)");
  if (e.decode->outputNames.empty() || e.decode->outputNames[0] != "logits")
    return Status::error("entry '" + e.decode->name +
                         "' must return 'logits' first");
  const PlanValue &logits =
      e.decode->values[static_cast<size_t>(e.decode->outputs[0])];
  if (logits.shape.empty() || !logits.shape.back().isStatic())
    return Status::error("entry '" + e.decode->name +
                         "': the vocabulary axis of 'logits' must be static");
  e.vocab = logits.shape.back().constant;
  return e;
}

/// A mask input for one sequence: `src_mask` all true, `tgt_mask` causal.
Expected<Tensor> maskFor(const PlanEntry &entry, size_t input, int64_t src,
                         int64_t tgt) {
  bool causal = entry.inputNames[input] == "tgt_mask";
  size_t rank = inputRank(entry, input);
  Shape shape = rank == 2 ? Shape{1, src} : Shape{1, 1, causal ? tgt : 1, causal ? tgt : src};
  if (rank != 2 && rank != 4)
    return Status::error("entry '" + entry.name + "': input '" +
                         entry.inputNames[input] + "' must have rank 2 or 4");
  Expected<Tensor> mask = Tensor::zeros(DType::Bool, shape);
  if (!mask)
    return mask;
  auto *m = static_cast<uint8_t *>(mask->data());
  if (!causal) {
    std::memset(m, 1, static_cast<size_t>(mask->numElements()));
    return mask;
  }
  for (int64_t i = 0; i < tgt; ++i)
    for (int64_t j = 0; j <= i; ++j)
      m[i * tgt + j] = 1;
  return mask;
}

/// The inputs of `entry` for one sequence, by name.
Expected<std::vector<Tensor>> inputsFor(const PlanEntry &entry,
                                        const std::vector<int32_t> &src,
                                        const std::vector<int32_t> &tgt,
                                        const Tensor *memory) {
  int64_t s = static_cast<int64_t>(src.size());
  int64_t t = static_cast<int64_t>(tgt.size());
  std::vector<Tensor> inputs;
  for (size_t i = 0; i < entry.inputNames.size(); ++i) {
    const std::string &name = entry.inputNames[i];
    Expected<Tensor> value =
        name == "src"   ? Tensor::fromI32({1, s}, src)
        : name == "tgt" ? Tensor::fromI32({1, t}, tgt)
        : name == "memory" && memory ? memory->clone()
                                     : maskFor(entry, i, s, t);
    if (!value)
      return value.status();
    inputs.push_back(value.take());
  }
  return inputs;
}

} // namespace

Status checkSeq2SeqPlan(const Plan &plan, const Seq2SeqOptions &options) {
  return findEntries(plan, options).status();
}

Expected<Seq2SeqLimits> seq2seqLimits(const Plan &plan,
                                      const Seq2SeqOptions &options) {
  Expected<Entries> e = findEntries(plan, options);
  if (!e)
    return e.status();
  return Seq2SeqLimits{symbolBound(*e->encode, "src_seq"),
                       symbolBound(*e->decode, "tgt_seq"), e->vocab};
}

Expected<std::vector<BeamHypothesis>>
generateSeq2Seq(Executor &executor, const std::vector<int32_t> &source,
                const Seq2SeqOptions &options) {
  Expected<Entries> e = findEntries(executor.plan(), options);
  if (!e)
    return e.status();
  Expected<std::vector<Tensor>> encodeInputs =
      inputsFor(*e->encode, source, {}, nullptr);
  if (!encodeInputs)
    return encodeInputs.status();
  Expected<std::vector<Tensor>> encoded =
      executor.run(e->encode->name, *encodeInputs);
  if (!encoded)
    return encoded.status();
  const Tensor &memory = encoded->front();
  const size_t vocab = static_cast<size_t>(e->vocab);

  BeamStepFn step = [&](const BeamStep &beams, std::vector<float> &logProbs) {
    for (size_t b = 0; b < beams.tokens.size(); ++b) {
      if (beams.step == 0 && b > 0) { // every beam is the bare start token
        std::copy(logProbs.begin(), logProbs.begin() + vocab,
                  logProbs.begin() + b * vocab);
        continue;
      }
      std::vector<int32_t> target = {options.startId};
      target.insert(target.end(), beams.tokens[b].begin(),
                    beams.tokens[b].end());
      Expected<std::vector<Tensor>> inputs =
          inputsFor(*e->decode, source, target, &memory);
      if (!inputs)
        return inputs.status();
      Expected<std::vector<Tensor>> out =
          executor.run(e->decode->name, *inputs);
      if (!out)
        return out.status();
      const Tensor &logits = out->front();
      logSoftmax(logits.dataAs<float>() + (logits.numElements() - e->vocab),
                 vocab, logProbs.data() + b * vocab);
    }
    return Status::success();
  };
  return beamSearch(options.beam, vocab, step);
}

} // namespace tfc::rt
