//===- SamplerTest.cpp - Sampler and Rng against the Python reference -----===//
//
// Expected values come from tools/gen_sampler_fixtures.py, which reimplements
// the RNG and the pipeline in Python and checks its kept sets against HF's own
// logits processors.
//
//===----------------------------------------------------------------------===//

#include "runtime/Sampler.h"

#include "SamplerFixture.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

using namespace tfc::rt;
using namespace tfc::rt::test;

namespace {

SafetensorsFile openSamplerFixture() {
  Expected<SafetensorsFile> f =
      SafetensorsFile::open(samplerFixturePath("sampler.safetensors"));
  EXPECT_TRUE(f.ok()) << f.message();
  return f.take();
}

TEST(SamplerRng, StreamsMatchReference) {
  SafetensorsFile f = openSamplerFixture();
  auto seeds = fixtureValues<uint64_t>(f, "rng.seeds");
  auto u64s = fixtureValues<uint64_t>(f, "rng.u64");
  auto doubles = fixtureValues<double>(f, "rng.double");
  ASSERT_TRUE(seeds && u64s && doubles);
  ASSERT_GE(seeds->size(), 3u);
  size_t n = u64s->size() / seeds->size();
  ASSERT_EQ(n, 64u);
  for (size_t s = 0; s < seeds->size(); ++s) {
    Rng a((*seeds)[s]), b((*seeds)[s]);
    for (size_t i = 0; i < n; ++i) {
      ASSERT_EQ(a.nextU64(), (*u64s)[s * n + i]) << "seed " << s << " #" << i;
      double d = b.nextDouble();
      ASSERT_EQ(d, (*doubles)[s * n + i]) << "seed " << s << " #" << i;
      ASSERT_GE(d, 0.0);
      ASSERT_LT(d, 1.0);
    }
  }
}

TEST(SamplerRng, SplitMix64KnownValue) {
  // First output of SplitMix64 from state 0 (the published test vector).
  uint64_t state = 0;
  EXPECT_EQ(splitMix64(state), 0xE220A8397B1DCDAFULL);
  EXPECT_EQ(state, 0x9E3779B97F4A7C15ULL);
}

struct FixtureCase {
  std::string name;
  std::vector<float> logits;
  SamplerOptions opts;
  std::vector<int32_t> prev, expected, kept;
  std::vector<double> probs;
  int64_t keptCount = 0;
};

/// The logits tensor of each case, from the "case_logits" metadata entry
/// (comma-separated, in case order).
std::vector<std::string> caseLogitsNames(const SafetensorsFile &f) {
  std::vector<std::string> names;
  auto it = f.metadata().find("case_logits");
  if (it == f.metadata().end())
    return names;
  std::string list = it->second;
  for (size_t start = 0; start <= list.size();) {
    size_t comma = std::min(list.find(',', start), list.size());
    names.push_back(list.substr(start, comma - start));
    start = comma + 1;
  }
  return names;
}

bool loadCase(const SafetensorsFile &f, const std::string &logitsName, int n,
              FixtureCase &c) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "case%02d", n);
  std::string p = buf;
  c.name = p;
  auto logits = fixtureValues<float>(f, logitsName);
  auto of = fixtureValues<double>(f, p + ".opts_f");
  auto oi = fixtureValues<int64_t>(f, p + ".opts_i");
  auto prev = fixtureValues<int32_t>(f, p + ".prev");
  auto expected = fixtureValues<int32_t>(f, p + ".expected");
  auto count = fixtureValues<int64_t>(f, p + ".kept_count");
  if (!logits || !of || !oi || !prev || !expected || !count)
    return false;
  c.logits = *logits;
  c.opts.temperature = static_cast<float>((*of)[0]);
  c.opts.topP = static_cast<float>((*of)[1]);
  c.opts.minP = static_cast<float>((*of)[2]);
  c.opts.repetitionPenalty = static_cast<float>((*of)[3]);
  c.opts.greedy = (*oi)[0] != 0;
  c.opts.topK = static_cast<int>((*oi)[1]);
  c.opts.seed = static_cast<uint64_t>((*oi)[2]);
  c.prev = *prev;
  c.expected = *expected;
  c.keptCount = (*count)[0];
  if (f.contains(p + ".kept")) {
    c.kept = *fixtureValues<int32_t>(f, p + ".kept");
    c.probs = *fixtureValues<double>(f, p + ".probs");
  }
  return true;
}

TEST(Sampler, DrawsMatchReferenceForEveryFixtureCase) {
  SafetensorsFile f = openSamplerFixture();
  std::vector<std::string> logitsNames = caseLogitsNames(f);
  ASSERT_GE(logitsNames.size(), 20u);
  size_t draws = 0;
  for (int n = 0; n < static_cast<int>(logitsNames.size()); ++n) {
    FixtureCase c;
    ASSERT_TRUE(loadCase(f, logitsNames[n], n, c));
    SCOPED_TRACE(c.name);
    Expected<Sampler> s = Sampler::create(c.opts);
    ASSERT_TRUE(s.ok()) << s.message();
    for (size_t i = 0; i < c.expected.size(); ++i) {
      Expected<int32_t> id = s->sample(c.logits, c.prev);
      ASSERT_TRUE(id.ok()) << id.message();
      ASSERT_EQ(*id, c.expected[i]) << "draw " << i;
      ++draws;
    }
  }
  EXPECT_GT(draws, 5000u);
}

TEST(Sampler, KeptSetsAndProbabilitiesMatchReference) {
  SafetensorsFile f = openSamplerFixture();
  std::vector<std::string> logitsNames = caseLogitsNames(f);
  ASSERT_GE(logitsNames.size(), 20u);
  for (int n = 0; n < static_cast<int>(logitsNames.size()); ++n) {
    FixtureCase c;
    ASSERT_TRUE(loadCase(f, logitsNames[n], n, c));
    SCOPED_TRACE(c.name);
    Sampler s = Sampler::create(c.opts).take();
    auto dist = s.distribution(c.logits.data(), c.logits.size(), c.prev.data(),
                               c.prev.size());
    ASSERT_TRUE(dist.ok()) << dist.message();
    ASSERT_EQ(static_cast<int64_t>(dist->size()), c.keptCount);
    double total = 0;
    for (const TokenProb &tp : *dist)
      total += tp.prob;
    EXPECT_NEAR(total, 1.0, 1e-12);
    if (c.kept.empty())
      continue;
    for (size_t i = 0; i < dist->size(); ++i) {
      EXPECT_EQ((*dist)[i].id, c.kept[i]);
      EXPECT_NEAR((*dist)[i].prob, c.probs[i], 1e-12 + 1e-12 * c.probs[i]);
    }
  }
}

/// Top-p by the documented rule with a full sort (no prefilter): the ids
/// kept, ascending.
std::vector<int32_t> bruteForceTopP(const std::vector<float> &logits,
                                    double topP) {
  double mx = -INFINITY;
  for (float x : logits)
    mx = std::max(mx, static_cast<double>(x));
  std::vector<int32_t> ids;
  std::vector<double> w(logits.size());
  double total = 0;
  for (size_t i = 0; i < logits.size(); ++i) {
    w[i] = std::exp(static_cast<double>(logits[i]) - mx);
    total += w[i];
    ids.push_back(static_cast<int32_t>(i));
  }
  std::sort(ids.begin(), ids.end(), [&](int32_t a, int32_t b) {
    return logits[a] > logits[b] || (logits[a] == logits[b] && a > b);
  });
  double mass = 0;
  size_t r = 0;
  for (; r < ids.size(); ++r) {
    if (r > 0 && mass >= topP * total)
      break;
    mass += w[ids[r]];
  }
  ids.resize(r);
  std::sort(ids.begin(), ids.end());
  return ids;
}

TEST(Sampler, TopPPrefilterAgreesWithAFullSort) {
  // Random rows of several shapes (wide and narrow spreads, heavy ties,
  // weights that underflow to 0) and nucleus sizes from 1 to thousands.
  std::mt19937 gen(123);
  for (int trial = 0; trial < 60; ++trial) {
    size_t vocab = 1 + gen() % 5000;
    float spread = std::vector<float>{0.01f, 1.0f, 5.0f, 400.0f}[trial % 4];
    std::normal_distribution<float> normal(0.0f, spread);
    std::vector<float> logits(vocab);
    for (float &x : logits)
      x = trial % 5 == 0 ? static_cast<float>(gen() % 4) : normal(gen);
    SamplerOptions o;
    o.topP = std::uniform_real_distribution<float>(0.01f, 1.0f)(gen);
    Sampler s = Sampler::create(o).take();
    auto dist = s.distribution(logits.data(), logits.size());
    ASSERT_TRUE(dist.ok());
    std::vector<int32_t> got;
    for (const TokenProb &tp : *dist)
      got.push_back(tp.id);
    ASSERT_EQ(got, bruteForceTopP(logits, o.topP))
        << "trial " << trial << " vocab " << vocab << " topP " << o.topP;
  }
}

TEST(Sampler, GreedyTakesLowestIdOnTies) {
  SamplerOptions o;
  o.greedy = true;
  Sampler s = Sampler::create(o).take();
  std::vector<float> logits = {1, 5, 2, 5, 5, -1};
  EXPECT_EQ(*s.sample(logits), 1);
  // A greedy draw consumes no random numbers.
  Rng fresh(o.seed);
  EXPECT_EQ(s.rng().nextU64(), fresh.nextU64());
  // The repetition penalty applies first: 5 / 2 = 2.5 loses to the third 5.
  o.repetitionPenalty = 2.0f;
  Sampler p = Sampler::create(o).take();
  EXPECT_EQ(*p.sample(logits, {1, 3}), 4);
  std::vector<float> infs = {-INFINITY, INFINITY, 0, INFINITY};
  EXPECT_EQ(*s.sample(infs), 1);
}

TEST(Sampler, TopKKeepsEveryTieAtTheBoundary) {
  SamplerOptions o;
  o.topK = 2;
  Sampler s = Sampler::create(o).take();
  std::vector<float> logits = {0, 3, 1, 3, 3, 2};
  auto dist = s.distribution(logits.data(), logits.size());
  ASSERT_TRUE(dist.ok());
  ASSERT_EQ(dist->size(), 3u);
  EXPECT_EQ((*dist)[0].id, 1);
  EXPECT_EQ((*dist)[1].id, 3);
  EXPECT_EQ((*dist)[2].id, 4);
  EXPECT_DOUBLE_EQ((*dist)[0].prob, 1.0 / 3);
}

TEST(Sampler, PositiveInfinityIsUniformOverInfiniteLogits) {
  SamplerOptions o;
  o.seed = 9;
  Sampler s = Sampler::create(o).take();
  std::vector<float> logits = {0, INFINITY, 50, INFINITY, -INFINITY};
  auto dist = s.distribution(logits.data(), logits.size());
  ASSERT_TRUE(dist.ok());
  for (const TokenProb &tp : *dist)
    EXPECT_EQ(tp.prob, (tp.id == 1 || tp.id == 3) ? 0.5 : 0.0) << tp.id;
  int counts[5] = {};
  for (int i = 0; i < 400; ++i)
    ++counts[*s.sample(logits)];
  EXPECT_EQ(counts[0] + counts[2] + counts[4], 0);
  EXPECT_GT(counts[1], 150);
  EXPECT_GT(counts[3], 150);
}

TEST(Sampler, BadLogitsAreErrorsAndConsumeNothing) {
  Sampler s = Sampler::create(SamplerOptions()).take();
  std::vector<float> nan = {0, 1, std::numeric_limits<float>::quiet_NaN()};
  auto r = s.sample(nan);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.message(), "sampler: logit 2 is NaN");
  std::vector<float> allNegInf(4, -INFINITY);
  r = s.sample(allNegInf);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.message(), "sampler: every logit is -inf");
  r = s.sample(std::vector<float>{});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.message(), "sampler: no logits (vocab 0)");
  std::vector<float> ok = {0, 1};
  r = s.sample(ok, {0, 2});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.message(),
            "sampler: previous token 1 (id 2) is out of range for vocab 2");
  Rng fresh(0);
  EXPECT_EQ(s.rng().nextU64(), fresh.nextU64());
}

TEST(Sampler, OptionValidationNamesTheOption) {
  auto check = [](SamplerOptions o, const std::string &msg) {
    Expected<Sampler> s = Sampler::create(o);
    ASSERT_FALSE(s.ok()) << msg;
    EXPECT_EQ(s.message(), msg);
  };
  SamplerOptions o;
  o.temperature = 0;
  check(o, "sampler: temperature must be > 0 and finite, got 0");
  o.temperature = -1.5f;
  check(o, "sampler: temperature must be > 0 and finite, got -1.5");
  o.greedy = true; // temperature is ignored when greedy
  EXPECT_TRUE(Sampler::create(o).ok());
  o = SamplerOptions();
  o.topK = -1;
  check(o, "sampler: topK must be >= 0 (0 = off), got -1");
  o = SamplerOptions();
  o.topP = 0;
  check(o, "sampler: topP must be in (0, 1], got 0");
  o.topP = 1.5f;
  check(o, "sampler: topP must be in (0, 1], got 1.5");
  o.topP = std::numeric_limits<float>::quiet_NaN();
  check(o, "sampler: topP must be in (0, 1], got nan");
  o = SamplerOptions();
  o.minP = -0.25f;
  check(o, "sampler: minP must be in [0, 1], got -0.25");
  o = SamplerOptions();
  o.repetitionPenalty = 0;
  check(o, "sampler: repetitionPenalty must be > 0 and finite, got 0");
  o.repetitionPenalty = INFINITY;
  check(o, "sampler: repetitionPenalty must be > 0 and finite, got inf");
}

} // namespace
