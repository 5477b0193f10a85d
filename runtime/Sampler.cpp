//===- Sampler.cpp - Seeded token sampling (HF transformers order) --------===//
//
// The pipeline works on a compact list of candidate ids kept in ascending id
// order: top-k shrinks it with a selection (O(V)), top-p sorts only a prefix
// of the candidates that grows until it holds the nucleus, and min-p and the
// final draw are linear scans. Exponentials are only taken for the tokens
// that survive top-k.
//
//===----------------------------------------------------------------------===//

#include "runtime/Sampler.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

namespace tfc::rt {

//===----------------------------------------------------------------------===//
// Rng
//===----------------------------------------------------------------------===//

uint64_t splitMix64(uint64_t &state) {
  state += 0x9E3779B97F4A7C15ULL;
  uint64_t z = state;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

Rng::Rng(uint64_t seed) {
  uint64_t state = seed;
  for (uint64_t &word : s)
    word = splitMix64(state);
}

uint64_t Rng::nextU64() {
  uint64_t result = rotl(s[1] * 5, 7) * 9;
  uint64_t t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = rotl(s[3], 45);
  return result;
}

double Rng::nextDouble() {
  return static_cast<double>(nextU64() >> 11) * 0x1.0p-53;
}

//===----------------------------------------------------------------------===//
// Options
//===----------------------------------------------------------------------===//

static std::string num(double v) {
  std::string s = std::to_string(v);
  // to_string prints 6 decimals; trim trailing zeros for readable messages.
  if (s.find('.') != std::string::npos) {
    s.erase(s.find_last_not_of('0') + 1);
    if (s.back() == '.')
      s.pop_back();
  }
  return s;
}

Status validateSamplerOptions(const SamplerOptions &o) {
  if (!o.greedy && !(std::isfinite(o.temperature) && o.temperature > 0))
    return Status::error("sampler: temperature must be > 0 and finite, got " +
                         num(o.temperature));
  if (o.topK < 0)
    return Status::error("sampler: topK must be >= 0 (0 = off), got " +
                         std::to_string(o.topK));
  if (!(o.topP > 0 && o.topP <= 1))
    return Status::error("sampler: topP must be in (0, 1], got " + num(o.topP));
  if (!(o.minP >= 0 && o.minP <= 1))
    return Status::error("sampler: minP must be in [0, 1], got " + num(o.minP));
  if (!(std::isfinite(o.repetitionPenalty) && o.repetitionPenalty > 0))
    return Status::error(
        "sampler: repetitionPenalty must be > 0 and finite, got " +
        num(o.repetitionPenalty));
  return Status::success();
}

Expected<Sampler> Sampler::create(const SamplerOptions &options) {
  TFC_RT_RETURN_IF_ERROR(validateSamplerOptions(options));
  return Sampler(options);
}

//===----------------------------------------------------------------------===//
// Pipeline
//===----------------------------------------------------------------------===//

/// Applies the HF repetition penalty to `scores` for each distinct id.
static Status applyPenalty(std::vector<double> &scores, double penalty,
                           const int32_t *previous, size_t numPrevious,
                           std::vector<int32_t> &ids) {
  size_t vocab = scores.size();
  for (size_t i = 0; i < numPrevious; ++i)
    if (previous[i] < 0 || static_cast<size_t>(previous[i]) >= vocab)
      return Status::error("sampler: previous token " + std::to_string(i) +
                           " (id " + std::to_string(previous[i]) +
                           ") is out of range for vocab " +
                           std::to_string(vocab));
  if (penalty == 1.0)
    return Status::success();
  ids.assign(previous, previous + numPrevious);
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  for (int32_t id : ids) {
    double &s = scores[id];
    s = s < 0 ? s * penalty : s / penalty;
  }
  return Status::success();
}

Status Sampler::prepare(const float *logits, size_t vocab,
                        const int32_t *previous, size_t numPrevious) {
  if (vocab == 0 || !logits)
    return Status::error("sampler: no logits (vocab 0)");
  if (vocab > static_cast<size_t>(std::numeric_limits<int32_t>::max()))
    return Status::error("sampler: vocab " + std::to_string(vocab) +
                         " does not fit int32 ids");
  if (numPrevious && !previous)
    return Status::error("sampler: previous ids missing");
  scores.resize(vocab);
  bool anyNaN = false;
  for (size_t i = 0; i < vocab; ++i) {
    anyNaN |= std::isnan(logits[i]);
    scores[i] = static_cast<double>(logits[i]);
  }
  if (anyNaN)
    for (size_t i = 0; i < vocab; ++i)
      if (std::isnan(logits[i]))
        return Status::error("sampler: logit " + std::to_string(i) + " is NaN");
  TFC_RT_RETURN_IF_ERROR(applyPenalty(scores, opts.repetitionPenalty, previous,
                                      numPrevious, prevIds));
  double temperature = opts.greedy ? 1.0 : opts.temperature;
  if (temperature != 1.0)
    for (double &x : scores)
      x /= temperature;
  maxScore = *std::max_element(scores.begin(), scores.end());
  if (maxScore == -std::numeric_limits<double>::infinity())
    return Status::error("sampler: every logit is -inf");
  return Status::success();
}

int32_t Sampler::argmax() const {
  // max_element returns the first maximum: the lowest id on ties.
  return static_cast<int32_t>(std::max_element(scores.begin(), scores.end()) -
                              scores.begin());
}

/// The k-th largest score (counting repeats, like torch.topk), or -inf when
/// fewer than k scores are finite-or-+inf. A min-heap of the k best: O(V log k)
/// in the worst case, O(V) comparisons typically.
static double kthLargest(const std::vector<double> &scores, size_t k,
                         std::vector<double> &heap) {
  heap.clear();
  auto greater = std::greater<double>();
  for (double x : scores) {
    if (heap.size() < k) {
      if (x == -std::numeric_limits<double>::infinity())
        continue;
      heap.push_back(x);
      std::push_heap(heap.begin(), heap.end(), greater);
    } else if (x > heap.front()) {
      std::pop_heap(heap.begin(), heap.end(), greater);
      heap.back() = x;
      std::push_heap(heap.begin(), heap.end(), greater);
    }
  }
  return heap.size() < k ? -std::numeric_limits<double>::infinity()
                         : heap.front();
}

/// candIds = every id whose score is >= the k-th largest (all non--inf ids
/// when top-k is off or k is at least their number).
void Sampler::applyTopK() {
  double kth = -std::numeric_limits<double>::infinity();
  if (opts.topK > 0 && static_cast<size_t>(opts.topK) < scores.size())
    kth = kthLargest(scores, static_cast<size_t>(opts.topK), selectBuf);
  candIds.clear();
  for (size_t i = 0; i < scores.size(); ++i)
    if (scores[i] >= kth &&
        scores[i] != -std::numeric_limits<double>::infinity())
      candIds.push_back(static_cast<int32_t>(i));
}

/// exp(score - max) for every candidate; with a +inf maximum, the limit of
/// softmax: weight 1 for the +inf tokens and 0 for the rest.
void Sampler::computeWeights() {
  candW.resize(candIds.size());
  bool infMax = std::isinf(maxScore);
  for (size_t i = 0; i < candIds.size(); ++i) {
    double s = scores[candIds[i]];
    candW[i] = infMax ? (s == maxScore ? 1.0 : 0.0) : std::exp(s - maxScore);
  }
}

/// Keeps the candidates whose `keep` flag (in selectBuf) is nonzero.
void Sampler::compact() {
  size_t out = 0;
  for (size_t i = 0; i < candIds.size(); ++i) {
    if (selectBuf[i] == 0)
      continue;
    candIds[out] = candIds[i];
    candW[out] = candW[i];
    ++out;
  }
  candIds.resize(out);
  candW.resize(out);
}

/// 0 for weight 1, b for weights in [2^-b, 2^-(b-1)) (b <= 64), 65 for 0.
/// Read off the IEEE exponent field; weights are in [0, 1].
static int weightBucket(double w) {
  if (w <= 0)
    return 65;
  uint64_t bits;
  std::memcpy(&bits, &w, sizeof(bits));
  int biased = static_cast<int>((bits >> 52) & 0x7FF);
  return std::min(64, 1023 - biased);
}

/// Walks `positions` (a prefix of the descending order, as a set) in
/// descending order and finds how many ranks top-p keeps: rank r is kept
/// while r == 0 or the mass of ranks < r is below `limit`. Returns false when
/// the answer lies beyond the given positions.
bool Sampler::nucleus(double limit, size_t &kept) {
  size_t n = order.size();
  // Descending by score; ties: the higher id first (the order in which HF's
  // stable ascending sort would meet them from the top).
  auto before = [&](uint32_t a, uint32_t b) {
    double sa = scores[candIds[a]], sb = scores[candIds[b]];
    return sa > sb || (sa == sb && a > b);
  };
  for (size_t m = std::min<size_t>(n, 64);; m = std::min(n, m * 4)) {
    std::nth_element(order.begin(), order.begin() + (m - 1), order.end(),
                     before);
    std::sort(order.begin(), order.begin() + m, before);
    double mass = 0; // of the ranks before r
    size_t r = 0;
    for (; r < m; ++r) {
      if (r > 0 && mass >= limit)
        break;
      mass += candW[order[r]];
    }
    if (r < m || (m == n && (mass >= limit || n == candIds.size()))) {
      kept = r;
      return true;
    }
    if (m == n)
      return false;
  }
}

void Sampler::applyTopP() {
  if (opts.topP >= 1.0f)
    return;
  size_t n = candIds.size();
  double total = 0;
  for (double w : candW)
    total += w;
  double limit = static_cast<double>(opts.topP) * total;
  // Only the heaviest weights can be in the nucleus: sum the mass per binary
  // exponent, and sort just the buckets needed to pass the limit (a prefix of
  // the descending order). Fall back to every candidate if that was short.
  double bucketMass[66] = {};
  for (double w : candW)
    bucketMass[weightBucket(w)] += w;
  int last = 65;
  double acc = 0;
  for (int b = 0; b < 66; ++b) {
    acc += bucketMass[b];
    if (acc > limit * (1 + 1e-9)) {
      last = b;
      break;
    }
  }
  order.clear();
  for (size_t i = 0; i < n; ++i)
    if (weightBucket(candW[i]) <= last)
      order.push_back(static_cast<uint32_t>(i));
  size_t kept = 0;
  if (!nucleus(limit, kept)) {
    order.resize(n);
    for (size_t i = 0; i < n; ++i)
      order[i] = static_cast<uint32_t>(i);
    (void)nucleus(limit, kept);
  }
  selectBuf.assign(n, 0);
  for (size_t r = 0; r < kept; ++r)
    selectBuf[order[r]] = 1;
  compact();
}

void Sampler::applyMinP() {
  if (opts.minP <= 0.0f)
    return;
  // The top candidate has weight 1, so p / p_max is the weight itself.
  double minP = static_cast<double>(opts.minP);
  selectBuf.resize(candIds.size());
  for (size_t i = 0; i < candIds.size(); ++i)
    selectBuf[i] = candW[i] >= minP ? 1 : 0;
  compact();
}

Status Sampler::filter(const float *logits, size_t vocab,
                       const int32_t *previous, size_t numPrevious) {
  TFC_RT_RETURN_IF_ERROR(prepare(logits, vocab, previous, numPrevious));
  if (opts.greedy) {
    candIds.assign(1, argmax());
    candW.assign(1, 1.0);
    return Status::success();
  }
  applyTopK();
  computeWeights();
  applyTopP();
  applyMinP();
  return Status::success();
}

//===----------------------------------------------------------------------===//
// Public entry points
//===----------------------------------------------------------------------===//

Expected<int32_t> Sampler::sample(const float *logits, size_t vocab,
                                  const int32_t *previous, size_t numPrevious) {
  TFC_RT_RETURN_IF_ERROR(filter(logits, vocab, previous, numPrevious));
  if (opts.greedy)
    return candIds.front();
  double total = 0;
  for (double w : candW)
    total += w;
  double target = gen.nextDouble() * total;
  double cum = 0;
  int32_t lastPositive = candIds.front();
  for (size_t i = 0; i < candIds.size(); ++i) {
    cum += candW[i];
    if (candW[i] > 0)
      lastPositive = candIds[i];
    if (cum > target)
      return candIds[i];
  }
  // Only reachable if u * total rounded up to total.
  return lastPositive;
}

Expected<int32_t> Sampler::sample(const std::vector<float> &logits,
                                  const std::vector<int32_t> &previous) {
  return sample(logits.data(), logits.size(), previous.data(), previous.size());
}

Expected<std::vector<TokenProb>> Sampler::distribution(const float *logits,
                                                       size_t vocab,
                                                       const int32_t *previous,
                                                       size_t numPrevious) {
  TFC_RT_RETURN_IF_ERROR(filter(logits, vocab, previous, numPrevious));
  double total = 0;
  for (double w : candW)
    total += w;
  std::vector<TokenProb> out(candIds.size());
  for (size_t i = 0; i < candIds.size(); ++i)
    out[i] = TokenProb{candIds[i], candW[i] / total};
  return out;
}

} // namespace tfc::rt
