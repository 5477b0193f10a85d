//===- BeamSearch.cpp - Model-independent beam search ---------------------===//
//
// A transcription of the HF 4.47 rules (GenerationMixin._beam_search,
// BeamSearchScorer.process/finalize, BeamHypotheses.add/is_done, and
// GenerationMixin._sample for greedy) for a batch of one, with float running
// scores and double hypothesis scores exactly where HF has them.
//
//===----------------------------------------------------------------------===//

#include "runtime/BeamSearch.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

namespace tfc::rt {

namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

/// The n best finished hypotheses (HF BeamHypotheses), in insertion order.
class Hypotheses {
public:
  explicit Hypotheses(const BeamOptions &o) : opts(o) {}

  void add(std::vector<int32_t> tokens, float sumLogProbs, int length,
           bool endsWithEos) {
    double score = static_cast<double>(sumLogProbs) /
                   std::pow(static_cast<double>(length), opts.lengthPenalty);
    size_t n = static_cast<size_t>(opts.numBeams);
    if (beams.size() >= n && !(score > worst))
      return;
    beams.push_back({std::move(tokens), score, sumLogProbs, endsWithEos});
    if (beams.size() <= n) {
      worst = std::min(score, worst);
      return;
    }
    // Drop the lowest (score, index); the next one becomes the worst.
    std::vector<size_t> idx(beams.size());
    for (size_t i = 0; i < idx.size(); ++i)
      idx[i] = i;
    std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) {
      return beams[a].score < beams[b].score;
    });
    worst = beams[idx[1]].score;
    beams.erase(beams.begin() + static_cast<std::ptrdiff_t>(idx[0]));
  }

  /// HF is_done(best_sum_logprobs, cur_len) with cur_len counted from the
  /// end of the prompt.
  bool isDone(float bestSum, int curLen) const {
    if (beams.size() < static_cast<size_t>(opts.numBeams))
      return false;
    if (opts.earlyStopping == EarlyStopping::Immediate)
      return true;
    int len = curLen;
    if (opts.earlyStopping == EarlyStopping::Never && opts.lengthPenalty > 0)
      len = opts.maxNewTokens;
    double highest = static_cast<double>(bestSum) /
                     std::pow(static_cast<double>(len), opts.lengthPenalty);
    return worst >= highest;
  }

  /// Best first; among equal scores the later-added first (HF sorts
  /// ascending with a stable sort and pops from the end).
  std::vector<BeamHypothesis> best() && {
    std::stable_sort(beams.begin(), beams.end(),
                     [](const BeamHypothesis &a, const BeamHypothesis &b) {
                       return a.score < b.score;
                     });
    std::reverse(beams.begin(), beams.end());
    return std::move(beams);
  }

private:
  const BeamOptions &opts;
  std::vector<BeamHypothesis> beams;
  double worst = 1e9;
};

/// Calls the model and checks what it returned.
Status runStep(const BeamStepFn &fn, const BeamStep &step, size_t rows,
               size_t vocab, std::vector<float> &logProbs) {
  logProbs.assign(rows * vocab, 0.0f);
  Status st = fn(step, logProbs);
  if (!st.ok())
    return st;
  std::string where = "beam search: step " + std::to_string(step.step);
  if (logProbs.size() != rows * vocab)
    return Status::error(where + ": the step callback returned " +
                         std::to_string(logProbs.size()) +
                         " log-probs, expected " +
                         std::to_string(rows * vocab));
  for (size_t i = 0; i < logProbs.size(); ++i)
    if (std::isnan(logProbs[i]) || logProbs[i] == -kNegInf)
      return Status::error(where + ": log-prob of token " +
                           std::to_string(i % vocab) + " in beam " +
                           std::to_string(i / vocab) + " is " +
                           (std::isnan(logProbs[i]) ? "NaN" : "+inf"));
  return Status::success();
}

/// HF MinNewTokensLengthLogitsProcessor.
void maskEos(const BeamOptions &o, int step, size_t rows, size_t vocab,
             std::vector<float> &logProbs) {
  if (o.eosId < 0 || step >= o.minNewTokens)
    return;
  for (size_t b = 0; b < rows; ++b)
    logProbs[b * vocab + static_cast<size_t>(o.eosId)] = kNegInf;
}

/// The `count` best flat indices of `scores`, best first (score descending,
/// then index ascending).
void topCandidates(const std::vector<float> &scores, size_t count,
                   std::vector<uint32_t> &out) {
  out.resize(scores.size());
  for (size_t i = 0; i < out.size(); ++i)
    out[i] = static_cast<uint32_t>(i);
  auto better = [&](uint32_t a, uint32_t b) {
    return scores[a] > scores[b] || (scores[a] == scores[b] && a < b);
  };
  std::nth_element(out.begin(), out.begin() + (count - 1), out.end(), better);
  out.resize(count);
  std::sort(out.begin(), out.end(), better);
}

Expected<std::vector<BeamHypothesis>>
greedySearch(const BeamOptions &o, size_t vocab, const BeamStepFn &fn) {
  BeamStep step;
  step.tokens.assign(1, {});
  step.parents.assign(1, 0);
  std::vector<float> logProbs;
  float sum = 0;
  bool eos = false;
  for (int t = 0; t < o.maxNewTokens && !eos; ++t) {
    step.step = t;
    TFC_RT_RETURN_IF_ERROR(runStep(fn, step, 1, vocab, logProbs));
    maskEos(o, t, 1, vocab, logProbs);
    size_t best = 0;
    for (size_t v = 1; v < vocab; ++v)
      if (logProbs[v] > logProbs[best])
        best = v;
    sum += logProbs[best];
    step.tokens[0].push_back(static_cast<int32_t>(best));
    eos = o.eosId >= 0 && static_cast<int32_t>(best) == o.eosId;
  }
  BeamHypothesis h;
  h.tokens = std::move(step.tokens[0]);
  h.sumLogProbs = sum;
  h.score = static_cast<double>(sum) /
            std::pow(static_cast<double>(h.tokens.size()), o.lengthPenalty);
  h.endsWithEos = eos;
  return std::vector<BeamHypothesis>{std::move(h)};
}

/// The live beams between steps.
struct Beams {
  std::vector<float> scores;
  BeamStep step;
};

/// One HF BeamSearchScorer.process: turns the ranked candidates into finished
/// hypotheses and the next beams. Returns whether the search is done.
bool processCandidates(const BeamOptions &o, size_t vocab,
                       const std::vector<float> &cand,
                       const std::vector<uint32_t> &top, Beams &beams,
                       Hypotheses &hyps) {
  size_t n = static_cast<size_t>(o.numBeams);
  int curLen = beams.step.step + 1;
  std::vector<float> nextScores;
  std::vector<std::vector<int32_t>> nextTokens;
  std::vector<int32_t> parents;
  for (size_t rank = 0; rank < top.size() && parents.size() < n; ++rank) {
    size_t beam = top[rank] / vocab;
    int32_t token = static_cast<int32_t>(top[rank] % vocab);
    std::vector<int32_t> tokens = beams.step.tokens[beam];
    tokens.push_back(token);
    if (o.eosId >= 0 && token == o.eosId) {
      if (rank < n)
        hyps.add(std::move(tokens), cand[top[rank]], curLen, true);
      continue;
    }
    nextScores.push_back(cand[top[rank]]);
    nextTokens.push_back(std::move(tokens));
    parents.push_back(static_cast<int32_t>(beam));
  }
  beams.scores = std::move(nextScores);
  beams.step.tokens = std::move(nextTokens);
  beams.step.parents = std::move(parents);
  beams.step.step = curLen;
  return hyps.isDone(cand[top[0]], curLen);
}

Expected<std::vector<BeamHypothesis>>
beamSearchN(const BeamOptions &o, size_t vocab, const BeamStepFn &fn) {
  size_t n = static_cast<size_t>(o.numBeams);
  Beams beams;
  // Only beam 0 may expand on the first step: the others start at -1e9.
  beams.scores.assign(n, -1e9f);
  beams.scores[0] = 0;
  beams.step.tokens.assign(n, {});
  for (size_t i = 0; i < n; ++i)
    beams.step.parents.push_back(static_cast<int32_t>(i));
  Hypotheses hyps(o);
  std::vector<float> logProbs;
  std::vector<uint32_t> top;
  bool done = false;
  for (int t = 0; t < o.maxNewTokens && !done; ++t) {
    TFC_RT_RETURN_IF_ERROR(runStep(fn, beams.step, n, vocab, logProbs));
    maskEos(o, t, n, vocab, logProbs);
    for (size_t i = 0; i < logProbs.size(); ++i)
      logProbs[i] += beams.scores[i / vocab];
    topCandidates(logProbs, 2 * n, top);
    done = processCandidates(o, vocab, logProbs, top, beams, hyps);
  }
  if (!done)
    for (size_t i = 0; i < n; ++i)
      hyps.add(beams.step.tokens[i], beams.scores[i],
               static_cast<int>(beams.step.tokens[i].size()), false);
  return std::move(hyps).best();
}

} // namespace

Status validateBeamOptions(const BeamOptions &o, size_t vocab) {
  if (o.numBeams < 1)
    return Status::error("beam search: numBeams must be >= 1, got " +
                         std::to_string(o.numBeams));
  if (o.maxNewTokens < 1)
    return Status::error("beam search: maxNewTokens must be >= 1, got " +
                         std::to_string(o.maxNewTokens));
  if (!std::isfinite(o.lengthPenalty))
    return Status::error("beam search: lengthPenalty must be finite");
  if (o.minNewTokens < 0)
    return Status::error("beam search: minNewTokens must be >= 0, got " +
                         std::to_string(o.minNewTokens));
  if (vocab < 2 ||
      vocab > static_cast<size_t>(std::numeric_limits<int32_t>::max()) /
                  static_cast<size_t>(o.numBeams))
    return Status::error("beam search: vocab " + std::to_string(vocab) +
                         " must be >= 2 and numBeams * vocab must fit int32");
  if (o.eosId < -1 || (o.eosId >= 0 && static_cast<size_t>(o.eosId) >= vocab))
    return Status::error("beam search: eosId " + std::to_string(o.eosId) +
                         " is out of range for vocab " + std::to_string(vocab) +
                         " (-1 = none)");
  return Status::success();
}

Expected<std::vector<BeamHypothesis>>
beamSearch(const BeamOptions &options, size_t vocab, const BeamStepFn &step) {
  TFC_RT_RETURN_IF_ERROR(validateBeamOptions(options, vocab));
  if (!step)
    return Status::error("beam search: no step callback");
  if (options.numBeams == 1)
    return greedySearch(options, vocab, step);
  return beamSearchN(options, vocab, step);
}

void logSoftmax(const float *logits, size_t n, float *out) {
  if (n == 0)
    return;
  double mx = -std::numeric_limits<double>::infinity();
  for (size_t i = 0; i < n; ++i)
    mx = std::max(mx, static_cast<double>(logits[i]));
  double sum = 0;
  for (size_t i = 0; i < n; ++i)
    sum += std::exp(static_cast<double>(logits[i]) - mx);
  double lse = mx + std::log(sum);
  for (size_t i = 0; i < n; ++i)
    out[i] = static_cast<float>(static_cast<double>(logits[i]) - lse);
}

} // namespace tfc::rt
