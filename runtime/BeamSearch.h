//===- BeamSearch.h - Model-independent beam search -------------*- C++ -*-===//
//
// Beam search with the scoring and stopping rules of Hugging Face
// transformers 4.47 (`generate(num_beams=n, do_sample=False)`, i.e.
// GenerationMixin._beam_search with BeamSearchScorer / BeamHypotheses), for
// one sequence. The model is a callback: each step it receives every live
// beam's generated tokens and the parent each beam came from (so a KV-cache
// decoder can reorder its cache rows), and fills a beams x vocab matrix of
// log-probabilities. numBeams = 1 is HF greedy search instead. The exact rules
// are in docs/generation.md ("Beam search").
//
//===----------------------------------------------------------------------===//

#ifndef TFC_RUNTIME_BEAMSEARCH_H
#define TFC_RUNTIME_BEAMSEARCH_H

#include "runtime/Status.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

namespace tfc::rt {

/// HF `early_stopping`.
enum class EarlyStopping {
  Heuristic, ///< HF False: stop when the best live candidate, scored at the
             ///< current length, cannot beat the worst kept hypothesis.
  Immediate, ///< HF True: stop as soon as numBeams hypotheses are finished.
  Never,     ///< HF "never": the bound uses maxNewTokens when lengthPenalty
             ///< > 0 (the canonical, exhaustive rule).
};

struct BeamOptions {
  /// Number of beams (>= 1). 1 = greedy search (HF num_beams=1).
  int numBeams = 1;
  /// Number of tokens generated at most (>= 1); also the number of calls of
  /// the step callback at most.
  int maxNewTokens = 16;
  /// Hypothesis score = sumLogProbs / length ^ lengthPenalty (finite).
  double lengthPenalty = 1.0;
  /// End-of-sequence id, or -1 for none (then every hypothesis runs to
  /// maxNewTokens).
  int32_t eosId = -1;
  EarlyStopping earlyStopping = EarlyStopping::Heuristic;
  /// HF min_new_tokens: EOS gets log-prob -inf while fewer than this many
  /// tokens have been generated. 0 = off.
  int minNewTokens = 0;
};

/// What the step callback is told.
struct BeamStep {
  /// Tokens generated so far by every beam (0 on the first call).
  int step = 0;
  /// tokens[i]: beam i's generated tokens (the prompt is not included; it is
  /// the caller's). All beams have `step` tokens. On the first call all
  /// numBeams rows are empty: every beam is the bare prompt.
  std::vector<std::vector<int32_t>> tokens;
  /// parents[i]: the row of the previous call that beam i extends by
  /// tokens[i].back(). A KV-cache decoder makes cache row i a copy of old row
  /// parents[i] (HF _reorder_cache with beam_idx), then feeds tokens[i].back().
  /// On the first call, the identity.
  std::vector<int32_t> parents;
};

/// Fills `logProbs` (already sized numBeams * vocab, row-major by beam) with
/// each beam's next-token log-probabilities (log-softmax of the logits; see
/// logSoftmax()). NaN or +inf entries are refused by the search. A returned
/// error aborts the search and is passed on.
using BeamStepFn =
    std::function<Status(const BeamStep &step, std::vector<float> &logProbs)>;

struct BeamHypothesis {
  /// Generated tokens (no prompt); ends with eosId when endsWithEos.
  std::vector<int32_t> tokens;
  /// sumLogProbs / length ^ lengthPenalty, length = tokens.size() (the EOS
  /// counts). Computed in double from the float sum, as HF does.
  double score = 0;
  /// Sum of the chosen tokens' log-probs, accumulated in float like HF.
  float sumLogProbs = 0;
  bool endsWithEos = false;
};

/// Success, or an error naming the first bad option or a vocab below 2.
Status validateBeamOptions(const BeamOptions &options, size_t vocab);

/// Runs the search. Returns the finished hypotheses, best first: numBeams
/// of them for beam search (HF keeps that many), one for greedy. Ordering
/// among equal scores follows HF (the later-added hypothesis first).
Expected<std::vector<BeamHypothesis>>
beamSearch(const BeamOptions &options, size_t vocab, const BeamStepFn &step);

/// out[i] = logits[i] - max - log(sum_j exp(logits[j] - max)), computed in
/// double and rounded to float. `out` may equal `logits`. A convenience for
/// callbacks that have logits.
void logSoftmax(const float *logits, size_t n, float *out);

} // namespace tfc::rt

#endif // TFC_RUNTIME_BEAMSEARCH_H
