//===- Seq2Seq.cpp - Generation with encoder-decoder models ---------------===//

#include "runtime/Seq2Seq.h"

#include "runtime/Generator.h"

#include <algorithm>
#include <cstring>
#include <memory>

namespace tfc::rt {

namespace {

size_t inputRank(const PlanEntry &entry, size_t input) {
  return entry.values[static_cast<size_t>(entry.inputs[input])].shape.size();
}

struct Entries {
  const PlanEntry *encode = nullptr;
  const PlanEntry *decode = nullptr;
  int64_t vocab = 0;
  // The cached path, when the model has it.
  const PlanEntry *start = nullptr;
  const PlanEntry *step = nullptr;
  std::vector<int> fromStart, fromStep;
};

/// The cached entries of `options`, if the plan has both.
Status findCachedEntries(const Plan &plan, const Seq2SeqOptions &options,
                         Entries &e) {
  if (options.noCache)
    return Status::success();
  e.start = plan.findEntry(options.startEntry);
  e.step = plan.findEntry(options.stepEntry);
  if (!e.start || !e.step) {
    e.start = e.step = nullptr;
    return Status::success();
  }
  Expected<std::vector<int>> a = cacheWiring(*e.step, *e.start);
  if (!a)
    return a.status();
  Expected<std::vector<int>> b = cacheWiring(*e.step, *e.step);
  if (!b)
    return b.status();
  e.fromStart = a.take();
  e.fromStep = b.take();
  return Status::success();
}

Expected<Entries> findEntries(const Plan &plan, const Seq2SeqOptions &options) {
  Entries e;
  e.encode = plan.findEntry(options.encodeEntry);
  e.decode = plan.findEntry(options.decodeEntry);
  if (!e.encode || !e.decode)
    return Status::error("encoder-decoder generation needs entries '" +
                         options.encodeEntry + "' and '" +
                         options.decodeEntry + "'");
  if (e.encode->inputIndex("src") < 0 || e.decode->inputIndex("tgt") < 0 ||
      e.decode->inputIndex("memory") < 0)
    return Status::error("entry '" + e.encode->name + "' must take 'src' and '" +
                         e.decode->name + "' 'tgt' and 'memory'");
  for (const std::string &name : e.decode->inputNames)
    if (name != "tgt" && name != "memory" && name != "src_mask" &&
        name != "tgt_mask")
      return Status::error("entry '" + e.decode->name + "': input '" + name +
                           "' cannot be derived (tgt, memory, src_mask, "
                           "tgt_mask can)");
  TFC_RT_RETURN_IF_ERROR(findCachedEntries(plan, options, e));
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

/// The outputs of the cached step a beam continues from, and which of
/// them feeds each input of the next step (cacheWiring).
struct CacheFeed {
  const std::vector<Tensor> *outputs = nullptr;
  const std::vector<int> *wiring = nullptr;
};

/// The inputs of `entry` for one sequence, by name.
Expected<std::vector<Tensor>> inputsFor(const PlanEntry &entry,
                                        const std::vector<int32_t> &src,
                                        const std::vector<int32_t> &tgt,
                                        const Tensor *memory,
                                        CacheFeed cache = {}) {
  int64_t s = static_cast<int64_t>(src.size());
  int64_t t = static_cast<int64_t>(tgt.size());
  std::vector<Tensor> inputs;
  for (size_t i = 0; i < entry.inputNames.size(); ++i) {
    const std::string &name = entry.inputNames[i];
    int fed = cache.wiring ? (*cache.wiring)[i] : -1;
    Expected<Tensor> value =
        fed >= 0        ? Expected<Tensor>((*cache.outputs)[static_cast<size_t>(fed)])
        : name == "src" ? Tensor::fromI32({1, s}, src)
        : name == "tgt" ? Tensor::fromI32({1, t}, tgt)
        : name == "memory" && memory ? Expected<Tensor>(*memory)
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

Expected<std::vector<std::string>> seq2seqEntries(const Plan &plan,
                                                  const Seq2SeqOptions &options) {
  Expected<Entries> e = findEntries(plan, options);
  if (!e)
    return e.status();
  if (e->start)
    return std::vector<std::string>{e->encode->name, e->start->name,
                                    e->step->name};
  return std::vector<std::string>{e->encode->name, e->decode->name};
}

Expected<Seq2SeqLimits> seq2seqLimits(const Plan &plan,
                                      const Seq2SeqOptions &options) {
  Expected<Entries> e = findEntries(plan, options);
  if (!e)
    return e.status();
  return Seq2SeqLimits{e->encode->symbolBound("src_seq"),
                       e->decode->symbolBound("tgt_seq"), e->vocab};
}

namespace {

/// The decoder side of one search: runs the decoder for a beam and keeps,
/// in the cached mode, every live beam's cache.
class BeamDecoder {
public:
  BeamDecoder(Executor &executor, const Entries &e,
              const std::vector<int32_t> &source, const Tensor &memory,
              int32_t startId)
      : executor(executor), e(e), source(source), memory(memory),
        startId(startId) {}

  Status step(const BeamStep &beams, std::vector<float> &logProbs);

private:
  /// A step's outputs, and the wiring from them to decode_step's inputs.
  struct Cache {
    std::vector<Tensor> outputs;
    const std::vector<int> *wiring = nullptr;
  };

  Expected<std::shared_ptr<Cache>> run(const BeamStep &beams, size_t b);

  Executor &executor;
  const Entries &e;
  const std::vector<int32_t> &source;
  const Tensor &memory;
  int32_t startId;
  std::vector<std::shared_ptr<Cache>> caches; // by row of the last step
};

/// Beam b's decoder run: the whole target without a cache; else the start
/// token (first step) or the newest token over its parent's cache.
Expected<std::shared_ptr<BeamDecoder::Cache>>
BeamDecoder::run(const BeamStep &beams, size_t b) {
  const std::vector<int32_t> &tokens = beams.tokens[b];
  const PlanEntry *entry = e.decode;
  std::vector<int32_t> target = {startId};
  CacheFeed feed;
  auto cache = std::make_shared<Cache>();
  if (!e.start) {
    target.insert(target.end(), tokens.begin(), tokens.end());
  } else if (beams.step == 0) {
    entry = e.start;
    cache->wiring = &e.fromStart;
  } else {
    const Cache &parent = *caches[static_cast<size_t>(beams.parents[b])];
    entry = e.step;
    target = {tokens.back()};
    feed = CacheFeed{&parent.outputs, parent.wiring};
    cache->wiring = &e.fromStep;
  }
  Expected<std::vector<Tensor>> inputs =
      inputsFor(*entry, source, target, &memory, feed);
  if (!inputs)
    return inputs.status();
  Expected<std::vector<Tensor>> out = executor.run(entry->name, *inputs);
  if (!out)
    return out.status();
  cache->outputs = out.take();
  return cache;
}

Status BeamDecoder::step(const BeamStep &beams, std::vector<float> &logProbs) {
  const size_t vocab = static_cast<size_t>(e.vocab);
  std::vector<std::shared_ptr<Cache>> next(beams.tokens.size());
  for (size_t b = 0; b < beams.tokens.size(); ++b) {
    if (beams.step == 0 && b > 0) { // every beam is the bare start token
      std::copy(logProbs.begin(), logProbs.begin() + vocab,
                logProbs.begin() + b * vocab);
      next[b] = next[0];
      continue;
    }
    Expected<std::shared_ptr<Cache>> ran = run(beams, b);
    if (!ran)
      return ran.status();
    next[b] = ran.take();
    const Tensor &logits = next[b]->outputs.front();
    logSoftmax(logits.dataAs<float>() + (logits.numElements() - e.vocab),
               vocab, logProbs.data() + b * vocab);
  }
  caches = std::move(next);
  return Status::success();
}

} // namespace

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
  BeamDecoder decoder(executor, *e, source, encoded->front(), options.startId);
  return beamSearch(options.beam, static_cast<size_t>(e->vocab),
                    [&](const BeamStep &beams, std::vector<float> &logProbs) {
                      return decoder.step(beams, logProbs);
                    });
}

} // namespace tfc::rt
