//===- Sampler.h - Seeded token sampling (HF transformers order) -*- C++
//-*-===//
//
// Picks the next token from a row of logits. The semantics follow Hugging
// Face transformers 4.47 (`generate(do_sample=True)`), in this order:
//
//   1. repetition penalty (RepetitionPenaltyLogitsProcessor)
//   2. temperature        (TemperatureLogitsWarper)
//   3. top-k              (TopKLogitsWarper)
//   4. top-p              (TopPLogitsWarper)
//   5. min-p              (MinPLogitsWarper)
//   6. softmax over the survivors and one inverse-CDF draw
//
// Everything after reading the float logits is computed in double precision,
// and the random numbers come from a fully specified generator (Rng below),
// so a reimplementation in another language (tools/gen_sampler_fixtures.py)
// draws the same ids. docs/generation.md states the exact rules.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_RUNTIME_SAMPLER_H
#define TFC_RUNTIME_SAMPLER_H

#include "runtime/Status.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tfc::rt {

/// SplitMix64 (Steele, Lea, Flood 2014): adds 0x9E3779B97F4A7C15 to `state`
/// and returns the mixed new state:
///   z = state += 0x9E3779B97F4A7C15
///   z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
///   z = (z ^ (z >> 27)) * 0x94D049BB133111EB
///   return z ^ (z >> 31)                       (all arithmetic mod 2^64)
uint64_t splitMix64(uint64_t &state);

/// xoshiro256** 1.0 (Blackman, Vigna 2018), seeded with SplitMix64:
/// s[0..3] are four successive splitMix64 outputs from state = seed.
/// nextU64():  result = rotl(s[1] * 5, 7) * 9;  t = s[1] << 17;
///             s[2] ^= s[0]; s[3] ^= s[1]; s[1] ^= s[2]; s[0] ^= s[3];
///             s[2] ^= t; s[3] = rotl(s[3], 45);  return result
/// nextDouble(): (nextU64() >> 11) * 2^-53, a multiple of 2^-53 in [0, 1).
class Rng {
public:
  explicit Rng(uint64_t seed = 0);
  uint64_t nextU64();
  double nextDouble();

private:
  uint64_t s[4];
};

/// Sampling options. The defaults turn every filter off (plain multinomial
/// sampling at temperature 1).
struct SamplerOptions {
  /// Argmax (lowest id on ties) after the repetition penalty; the other
  /// filters and the RNG are not used. Like HF `do_sample=False`.
  bool greedy = false;
  /// Logits are divided by this (> 0, finite). Ignored when greedy.
  float temperature = 1.0f;
  /// Keep the tokens whose logit is >= the k-th largest (ties all kept);
  /// 0 = off. A k above the vocabulary size keeps everything.
  int topK = 0;
  /// Nucleus: keep the smallest prefix of the descending order whose mass
  /// reaches topP (HF TopPLogitsWarper rule, see docs). In (0, 1]; 1 = off.
  float topP = 1.0f;
  /// Keep the tokens whose probability is >= minP * (top probability).
  /// In [0, 1]; 0 = off.
  float minP = 0.0f;
  /// HF repetition penalty for the ids passed as `previous`: a logit l < 0
  /// becomes l * penalty, otherwise l / penalty (each distinct id once).
  /// > 0, finite; 1 = off. Applied in greedy mode too.
  float repetitionPenalty = 1.0f;
  /// Seed of the Rng; the same seed and logits give the same ids.
  uint64_t seed = 0;
};

/// Success, or an error naming the first bad option ("sampler: topP must be
/// in (0, 1], got 0").
Status validateSamplerOptions(const SamplerOptions &options);

/// One token that survived the filters and its renormalized probability.
struct TokenProb {
  int32_t id;
  double prob;
};

/// A sampler owns its Rng and scratch buffers. sample() is O(V) plus
/// O(V log k) worst case for top-k (a k-element heap) plus, for top-p, a sort
/// of the heaviest candidates only (those in the binary-exponent buckets
/// needed to reach the nucleus mass). Not thread-safe.
class Sampler {
public:
  static Expected<Sampler> create(const SamplerOptions &options);

  /// Picks the next token from `logits[0 .. vocab)`. `previous` (may be null
  /// when numPrevious is 0) are the ids the repetition penalty applies to
  /// (HF passes the whole sequence so far, prompt included); each must be in
  /// [0, vocab). A non-greedy call consumes exactly one nextDouble(); a
  /// greedy call consumes none. Errors (nothing consumed): vocab 0 or above
  /// INT32_MAX, a NaN logit (named by position), every logit -inf, an id in
  /// `previous` out of range.
  Expected<int32_t> sample(const float *logits, size_t vocab,
                           const int32_t *previous = nullptr,
                           size_t numPrevious = 0);
  Expected<int32_t> sample(const std::vector<float> &logits,
                           const std::vector<int32_t> &previous = {});

  /// The distribution sample() draws from: the surviving tokens in ascending
  /// id order with probabilities summing to 1 (zero-probability survivors
  /// are included; greedy: the single argmax with probability 1). Consumes
  /// no random numbers.
  Expected<std::vector<TokenProb>>
  distribution(const float *logits, size_t vocab,
               const int32_t *previous = nullptr, size_t numPrevious = 0);

  const SamplerOptions &options() const { return opts; }
  Rng &rng() { return gen; }

private:
  explicit Sampler(const SamplerOptions &options)
      : opts(options), gen(options.seed) {}
  Status filter(const float *logits, size_t vocab, const int32_t *previous,
                size_t numPrevious);
  Status prepare(const float *logits, size_t vocab, const int32_t *previous,
                 size_t numPrevious);
  int32_t argmax() const;
  void applyTopK();
  void computeWeights();
  bool nucleus(double limit, size_t &kept);
  void applyTopP();
  void applyMinP();
  void compact();

  SamplerOptions opts;
  Rng gen;
  // Scratch reused across calls.
  std::vector<double> scores;   // penalized, temperature-scaled logits by id
  std::vector<int32_t> candIds; // surviving ids, ascending
  std::vector<double> candW;    // their weights exp(score - max)
  std::vector<uint32_t> order;  // positions into candIds, for sorting
  std::vector<double> selectBuf;
  std::vector<int32_t> prevIds; // distinct penalized ids
  double maxScore = 0;
};

} // namespace tfc::rt

#endif // TFC_RUNTIME_SAMPLER_H
