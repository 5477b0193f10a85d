//===- Seq2Seq.h - Generation with encoder-decoder models -------*- C++ -*-===//
//
// Greedy and beam search (runtime/BeamSearch.h, Hugging Face's rules) for
// encoder-decoder models that follow tfc's convention:
//
//   encode(src: i32[1, S], src_mask?)                     -> memory
//   decode(tgt: i32[1, T], memory, src_mask?, tgt_mask?)  -> logits [1, T, V]
//
// The source is encoded once. Each step runs the decoder for every live beam
// with batch 1, so models whose outputs depend on the batch index (the seed
// Transformer's positional encoding) score every beam as they would a single
// sequence. Masks are derived: `src_mask` all true in the declared rank
// ([1, S] or [1, 1, 1, S]), `tgt_mask` causal ([1, 1, T, T]).
//
// With a key/value cache, when the model has these entries (the cache
// follows Generator.h's convention, `past_X` fed from `present_X`):
//
//   decode_start(tgt, memory, ...)          -> logits, present_k, present_v
//   decode_step(tgt: [1, 1], memory, ..., past_k, past_v) -> the same
//
// the start token runs once, then each beam feeds only its newest token and
// the cache of the beam it extends. Without them, `decode` runs on each
// beam's whole target every step.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_RUNTIME_SEQ2SEQ_H
#define TFC_RUNTIME_SEQ2SEQ_H

#include "runtime/BeamSearch.h"
#include "runtime/Executor.h"

#include <string>
#include <vector>

namespace tfc::rt {

struct Seq2SeqOptions {
  BeamOptions beam;
  /// The token every target starts with (the decoder's BOS).
  int32_t startId = 1;
  std::string encodeEntry = "encode";
  std::string decodeEntry = "decode";
  std::string startEntry = "decode_start";
  std::string stepEntry = "decode_step";
  /// Run `decode` on whole targets even when the cached entries exist.
  bool noCache = false;
};

/// Whether `plan` has the entries and inputs seq2seq generation needs.
Status checkSeq2SeqPlan(const Plan &plan, const Seq2SeqOptions &options);

/// The longest source and target the entries accept (bounds of src_seq and
/// tgt_seq; 0 when unbounded), and the vocabulary of `logits`.
struct Seq2SeqLimits {
  int64_t source = 0;
  int64_t target = 0;
  int64_t vocab = 0;
};
Expected<Seq2SeqLimits> seq2seqLimits(const Plan &plan,
                                      const Seq2SeqOptions &options);

/// The entries the search runs (encode, and decode or the cached pair).
Expected<std::vector<std::string>> seq2seqEntries(const Plan &plan,
                                                  const Seq2SeqOptions &options);

/// Finished hypotheses, best first (tokens exclude the start token).
Expected<std::vector<BeamHypothesis>>
generateSeq2Seq(Executor &executor, const std::vector<int32_t> &source,
                const Seq2SeqOptions &options);

} // namespace tfc::rt

#endif // TFC_RUNTIME_SEQ2SEQ_H
