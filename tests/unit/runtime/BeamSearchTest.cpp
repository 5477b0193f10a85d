//===- BeamSearchTest.cpp - Beam search against HF generate() -------------===//
//
// tests/fixtures/sampler/beam.safetensors holds a synthetic model (next-token
// log-probs = table[step][last token]) and, for several option settings, the
// hypotheses and scores that transformers 4.47 generate() produced with it
// (tools/gen_sampler_fixtures.py). The step callback below is the same model.
//
//===----------------------------------------------------------------------===//

#include "runtime/BeamSearch.h"

#include "SamplerFixture.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using namespace tfc::rt;
using namespace tfc::rt::test;

namespace {

struct TableModel {
  std::vector<float> logp; // [steps, vocab, vocab]
  size_t steps = 0, vocab = 0;
  int32_t promptLast = 0;
  // A stand-in for a KV cache: row i holds every token fed to beam i.
  std::vector<std::vector<int32_t>> cache;
  int calls = 0;

  Status step(const BeamStep &s, std::vector<float> &out) {
    ++calls;
    // Reorder the "cache" as a KV-cache decoder would, then append the new
    // token; each row must then equal the beam's tokens.
    std::vector<std::vector<int32_t>> next;
    for (size_t i = 0; i < s.tokens.size(); ++i) {
      if (s.step == 0) {
        next.emplace_back();
        continue;
      }
      next.push_back(cache.at(static_cast<size_t>(s.parents[i])));
      next.back().push_back(s.tokens[i].back());
    }
    cache = std::move(next);
    for (size_t i = 0; i < s.tokens.size(); ++i) {
      if (cache[i] != s.tokens[i])
        return Status::error("cache row " + std::to_string(i) + " diverged");
      if (s.tokens[i].size() != static_cast<size_t>(s.step))
        return Status::error("beam length differs from step");
      int32_t last = s.step == 0 ? promptLast : s.tokens[i].back();
      size_t base = (static_cast<size_t>(s.step) * vocab + last) * vocab;
      std::copy(logp.begin() + base, logp.begin() + base + vocab,
                out.begin() + i * vocab);
    }
    return Status::success();
  }
};

TEST(BeamSearch, MatchesHuggingFaceGenerate) {
  Expected<SafetensorsFile> f =
      SafetensorsFile::open(samplerFixturePath("beam.safetensors"));
  ASSERT_TRUE(f.ok()) << f.message();
  Expected<Tensor> table = f->tensor("table.logp");
  ASSERT_TRUE(table.ok());
  TableModel model;
  model.steps = static_cast<size_t>(table->dim(0));
  model.vocab = static_cast<size_t>(table->dim(2));
  model.logp = *fixtureValues<float>(*f, "table.logp");
  model.promptLast = fixtureValues<int32_t>(*f, "prompt")->back();
  int numCases = std::stoi(f->metadata().at("num_cases"));
  ASSERT_GE(numCases, 10);
  int withEos = 0, withoutEos = 0;
  for (int n = 0; n < numCases; ++n) {
    char buf[16];
    std::snprintf(buf, sizeof(buf), "case%02d", n);
    std::string p = buf;
    SCOPED_TRACE(p);
    auto opts = *fixtureValues<double>(*f, p + ".opts");
    auto scores = *fixtureValues<double>(*f, p + ".scores");
    auto lengths = *fixtureValues<int32_t>(*f, p + ".lengths");
    auto tokens = *fixtureValues<int32_t>(*f, p + ".tokens");
    BeamOptions o;
    o.numBeams = static_cast<int>(opts[0]);
    o.maxNewTokens = static_cast<int>(opts[1]);
    o.lengthPenalty = opts[2];
    o.earlyStopping = static_cast<EarlyStopping>(static_cast<int>(opts[3]));
    o.eosId = static_cast<int32_t>(opts[4]);
    o.minNewTokens = static_cast<int>(opts[5]);
    ASSERT_LE(static_cast<size_t>(o.maxNewTokens), model.steps);
    model.calls = 0;
    auto hyps = beamSearch(o, model.vocab,
                           [&](const BeamStep &s, std::vector<float> &out) {
                             return model.step(s, out);
                           });
    ASSERT_TRUE(hyps.ok()) << hyps.message();
    ASSERT_EQ(hyps->size(), scores.size());
    EXPECT_LE(model.calls, o.maxNewTokens);
    size_t at = 0;
    for (size_t h = 0; h < hyps->size(); ++h) {
      const BeamHypothesis &hyp = (*hyps)[h];
      std::vector<int32_t> want(tokens.begin() + at,
                                tokens.begin() + at + lengths[h]);
      at += static_cast<size_t>(lengths[h]);
      EXPECT_EQ(hyp.tokens, want) << "hypothesis " << h;
      EXPECT_NEAR(hyp.score, scores[h], 1e-5) << "hypothesis " << h;
      bool eos = o.eosId >= 0 && !want.empty() && want.back() == o.eosId;
      EXPECT_EQ(hyp.endsWithEos, eos) << "hypothesis " << h;
      (eos ? withEos : withoutEos)++;
      EXPECT_NEAR(
          hyp.score,
          hyp.sumLogProbs /
              std::pow(static_cast<double>(hyp.tokens.size()), o.lengthPenalty),
          1e-12);
    }
  }
  // The fixture exercises both ways a hypothesis ends.
  EXPECT_GT(withEos, 5);
  EXPECT_GT(withoutEos, 3);
}

TEST(BeamSearch, OptionValidationNamesTheOption) {
  auto fn = [](const BeamStep &, std::vector<float> &) { return Status(); };
  auto check = [&](BeamOptions o, size_t vocab, const std::string &msg) {
    auto r = beamSearch(o, vocab, fn);
    ASSERT_FALSE(r.ok()) << msg;
    EXPECT_EQ(r.message(), msg);
  };
  BeamOptions o;
  o.numBeams = 0;
  check(o, 10, "beam search: numBeams must be >= 1, got 0");
  o = BeamOptions();
  o.maxNewTokens = 0;
  check(o, 10, "beam search: maxNewTokens must be >= 1, got 0");
  o = BeamOptions();
  o.lengthPenalty = NAN;
  check(o, 10, "beam search: lengthPenalty must be finite");
  o = BeamOptions();
  o.minNewTokens = -1;
  check(o, 10, "beam search: minNewTokens must be >= 0, got -1");
  o = BeamOptions();
  check(o, 1,
        "beam search: vocab 1 must be >= 2 and numBeams * vocab must fit "
        "int32");
  o.eosId = 10;
  check(o, 10,
        "beam search: eosId 10 is out of range for vocab 10 (-1 = none)");
  o.eosId = -2;
  check(o, 10,
        "beam search: eosId -2 is out of range for vocab 10 (-1 = none)");
  EXPECT_FALSE(beamSearch(BeamOptions(), 10, BeamStepFn()).ok());
}

TEST(BeamSearch, CallbackErrorsAndBadLogProbsStopTheSearch) {
  BeamOptions o;
  o.numBeams = 2;
  o.maxNewTokens = 4;
  int calls = 0;
  auto failing = [&](const BeamStep &s, std::vector<float> &out) {
    ++calls;
    std::fill(out.begin(), out.end(), -1.0f);
    if (s.step == 1)
      return Status::error("model: out of memory");
    return Status();
  };
  auto r = beamSearch(o, 4, failing);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.message(), "model: out of memory");
  EXPECT_EQ(calls, 2);

  auto nan = [](const BeamStep &, std::vector<float> &out) {
    std::fill(out.begin(), out.end(), -1.0f);
    out[4 + 3] = std::numeric_limits<float>::quiet_NaN();
    return Status();
  };
  r = beamSearch(o, 4, nan);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.message(), "beam search: step 0: log-prob of token 3 in beam 1 "
                         "is NaN");
  auto resized = [](const BeamStep &, std::vector<float> &out) {
    out.resize(3);
    return Status();
  };
  r = beamSearch(o, 4, resized);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.message(), "beam search: step 0: the step callback returned 3 "
                         "log-probs, expected 8");
}

TEST(BeamSearch, GreedyStopsAtEosAndTakesLowestIdOnTies) {
  BeamOptions o; // numBeams = 1: greedy
  o.maxNewTokens = 10;
  o.eosId = 2;
  auto fn = [](const BeamStep &s, std::vector<float> &out) {
    // Tokens 1 and 3 tie until step 3, where EOS wins.
    std::vector<float> row = {-3, -1, -4, -1};
    if (s.step == 3)
      row = {-3, -2, -0.5f, -2};
    std::copy(row.begin(), row.end(), out.begin());
    return Status();
  };
  auto r = beamSearch(o, 4, fn);
  ASSERT_TRUE(r.ok()) << r.message();
  ASSERT_EQ(r->size(), 1u);
  EXPECT_EQ((*r)[0].tokens, (std::vector<int32_t>{1, 1, 1, 2}));
  EXPECT_TRUE((*r)[0].endsWithEos);
  EXPECT_FLOAT_EQ((*r)[0].sumLogProbs, -3.5f);
  EXPECT_DOUBLE_EQ((*r)[0].score, -3.5 / 4);
}

TEST(BeamSearch, LogSoftmaxNormalizes) {
  std::vector<float> x = {1.0f, 2.0f, 3.0f, -INFINITY};
  std::vector<float> y(4);
  logSoftmax(x.data(), x.size(), y.data());
  double lse = std::log(std::exp(1.0) + std::exp(2.0) + std::exp(3.0));
  EXPECT_FLOAT_EQ(y[0], static_cast<float>(1.0 - lse));
  EXPECT_FLOAT_EQ(y[2], static_cast<float>(3.0 - lse));
  EXPECT_EQ(y[3], -INFINITY);
  logSoftmax(x.data(), x.size(), x.data()); // in place
  EXPECT_EQ(x, y);
}

} // namespace
