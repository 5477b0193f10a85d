//===- WeightBindingTest.cpp - Parameter tables against checkpoints -------===//

#include "runtime/WeightBinding.h"

#include "TestUtil.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

using namespace tfc::rt;
using namespace tfc::rt::test;

namespace {

#define EXPECT_CONTAINS(haystack, needle)                                      \
  EXPECT_NE(std::string(haystack).find(needle), std::string::npos)             \
      << "message: " << (haystack) << "\nexpected to contain: " << (needle)

Tensor filled(Shape shape, float start = 0.0f) {
  Tensor t = *Tensor::zeros(DType::F32, shape);
  for (int64_t i = 0; i < t.numElements(); ++i)
    t.dataAs<float>()[i] = start + static_cast<float>(i);
  return t;
}

class WeightBindingTest : public ::testing::Test {
protected:
  TempDir tmp;

  std::string write(const std::map<std::string, Tensor> &tensors,
                    const std::string &name = "ckpt.safetensors") {
    std::string path = tmp.path(name);
    Status s = writeSafetensors(path, tensors);
    EXPECT_TRUE(s.ok()) << s.message();
    return path;
  }
};

} // namespace

TEST_F(WeightBindingTest, BindsMatchingCheckpoint) {
  std::string path = write({{"wte.weight", filled({10, 4})},
                            {"ln_f.weight", filled({4}, 1.0f)},
                            {"ln_f.bias", filled({4})}});
  ParamTable table = {
      {"wte.weight", {10, 4}}, {"ln_f.weight", {4}}, {"ln_f.bias", {4}}};
  Expected<BoundWeights> b = bindWeights(table, path);
  ASSERT_TRUE(b.ok()) << b.message();
  EXPECT_TRUE(b->warnings.empty());
  ASSERT_EQ(b->tensors.size(), 3u);
  const Tensor &wte = b->tensors.at("wte.weight");
  EXPECT_EQ(wte.shape(), (Shape{10, 4}));
  EXPECT_EQ(wte.dtype(), DType::F32);
  EXPECT_EQ(wte.dataAs<float>()[39], 39.0f);
  // f32 is bound as read, in a block of its own that the binding alone
  // holds (so an executor can free it once it no longer needs it).
  EXPECT_TRUE(wte.ownsData());
  EXPECT_FALSE(wte.storageShared());
  EXPECT_EQ(b->tensors.at("ln_f.weight").dataAs<float>()[0], 1.0f);
}

TEST_F(WeightBindingTest, MissingTensorNamesExpectedType) {
  std::string path = write({{"wte.weight", filled({10, 4})}});
  ParamTable table = {{"wte.weight", {10, 4}},
                      {"h.0.attn.c_attn.weight", {768, 2304}}};
  Expected<BoundWeights> b = bindWeights(table, path);
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.message().rfind(path + ": ", 0), 0u) << b.message();
  EXPECT_CONTAINS(b.message(), "missing tensor 'h.0.attn.c_attn.weight' "
                               "(expected f32[768, 2304])");
  EXPECT_CONTAINS(b.message(), "(1 problem)");
}

TEST_F(WeightBindingTest, WrongShapeNamesBothShapes) {
  std::string path = write({{"wte.weight", filled({50, 512})}});
  ParamTable table = {{"wte.weight", {50, 768}}};
  Expected<BoundWeights> b = bindWeights(table, path);
  ASSERT_FALSE(b.ok());
  EXPECT_CONTAINS(b.message(), "tensor 'wte.weight': expected shape [50, "
                               "768], found [50, 512]");
}

TEST_F(WeightBindingTest, ReportsAllProblemsAtOnce) {
  Tensor ids = *Tensor::fromI64({4}, {1, 2, 3, 4});
  std::string path = write({{"a", filled({2, 3})},
                            {"b", filled({3})},
                            {"ids", ids},
                            {"extra", filled({1})}});
  ParamTable table = {{"a", {3, 2}},  // wrong shape
                      {"b", {3}},     // fine
                      {"c", {5}},     // missing
                      {"ids", {4}},   // i64 for an f32 parameter
                      {"d", {1, 1}}}; // missing
  Expected<BoundWeights> b = bindWeights(table, path);
  ASSERT_FALSE(b.ok());
  const std::string &m = b.message();
  EXPECT_CONTAINS(m, "the checkpoint does not match the model (4 problems):");
  EXPECT_CONTAINS(m, "\n  tensor 'a': expected shape [3, 2], found [2, 3]");
  EXPECT_CONTAINS(m, "\n  missing tensor 'c' (expected f32[5])");
  EXPECT_CONTAINS(m, "\n  tensor 'ids': unsupported dtype i64 (expected "
                     "f32[4])");
  EXPECT_CONTAINS(m, "\n  missing tensor 'd' (expected f32[1, 1])");
  EXPECT_EQ(m.find("'b'"), std::string::npos);
}

TEST_F(WeightBindingTest, CapsTheProblemList) {
  std::string path = write({{"x", filled({1})}});
  ParamTable table;
  for (int i = 0; i < 25; ++i)
    table.push_back({"p" + std::to_string(i), {2}});
  BindOptions opts;
  opts.maxProblems = 20;
  Expected<BoundWeights> b = bindWeights(table, path, opts);
  ASSERT_FALSE(b.ok());
  EXPECT_CONTAINS(b.message(), "(25 problems)");
  EXPECT_CONTAINS(b.message(), "missing tensor 'p19'");
  EXPECT_EQ(b.message().find("'p20'"), std::string::npos);
  EXPECT_CONTAINS(b.message(), "\n  ... and 5 more");
  EXPECT_CONTAINS(b.message(), "none of the model's parameters were found");
}

TEST_F(WeightBindingTest, UnusedTensorsAreWarnings) {
  std::string path = write({{"w", filled({2})},
                            {"lm_head.weight", filled({3, 2})},
                            {"h.0.attn.bias", filled({1, 1})}});
  Expected<BoundWeights> b = bindWeights({{"w", {2}}}, path);
  ASSERT_TRUE(b.ok()) << b.message();
  ASSERT_EQ(b->warnings.size(), 2u);
  EXPECT_EQ(b->warnings[0], "unused tensor 'h.0.attn.bias' (f32[1, 1])");
  EXPECT_EQ(b->warnings[1], "unused tensor 'lm_head.weight' (f32[3, 2])");
}

TEST_F(WeightBindingTest, MissingAndUnusedTogether) {
  // A renamed tensor shows up as missing (error) ...
  std::string path = write({{"wte.weights", filled({2})}});
  Expected<BoundWeights> b = bindWeights({{"wte.weight", {2}}}, path);
  ASSERT_FALSE(b.ok());
  EXPECT_CONTAINS(b.message(), "missing tensor 'wte.weight' (expected f32[2])");
  // ... and once the table is right, the stray name is a warning.
  Expected<BoundWeights> c = bindWeights({{"wte.weights", {2}}}, path);
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE(c->warnings.empty());
}

TEST_F(WeightBindingTest, AcceptsHuggingFacePrefixes) {
  std::string path = write({{"transformer.wte.weight", filled({2, 2})},
                            {"lm_head.weight", filled({2, 2})}});
  Expected<BoundWeights> b = bindWeights({{"wte.weight", {2, 2}}}, path);
  ASSERT_TRUE(b.ok()) << b.message();
  EXPECT_EQ(b->tensors.count("wte.weight"), 1u); // keyed by the table name
  ASSERT_EQ(b->warnings.size(), 1u);
  EXPECT_CONTAINS(b->warnings[0], "lm_head.weight");

  // A shape error under a prefix names the checkpoint's tensor.
  Expected<BoundWeights> c = bindWeights({{"wte.weight", {2, 3}}}, path);
  ASSERT_FALSE(c.ok());
  EXPECT_CONTAINS(c.message(), "tensor 'transformer.wte.weight': expected "
                               "shape [2, 3], found [2, 2]");

  BindOptions noPrefixes;
  noPrefixes.prefixes.clear();
  EXPECT_FALSE(bindWeights({{"wte.weight", {2, 2}}}, path, noPrefixes).ok());
}

TEST_F(WeightBindingTest, ConvertsHalfPrecisionCheckpoints) {
  Tensor h = *Tensor::zeros(DType::F16, {2});
  uint16_t hv[] = {0x3C00, 0xC000};
  std::memcpy(h.data(), hv, sizeof hv);
  Tensor b16 = *Tensor::zeros(DType::BF16, {1});
  b16.dataAs<uint16_t>()[0] = 0x3F80;
  std::string path = write({{"h", h}, {"b", b16}});
  Expected<BoundWeights> b = bindWeights({{"h", {2}}, {"b", {1}}}, path);
  ASSERT_TRUE(b.ok()) << b.message();
  EXPECT_EQ(b->tensors.at("h").dtype(), DType::F32);
  EXPECT_EQ(b->tensors.at("h").dataAs<float>()[1], -2.0f);
  EXPECT_EQ(b->tensors.at("b").dataAs<float>()[0], 1.0f);
}

TEST_F(WeightBindingTest, IntegerParametersNeedExactDtype) {
  std::string path = write({{"pos", *Tensor::fromI32({2}, {0, 1})}});
  Expected<BoundWeights> ok = bindWeights({{"pos", {2}, DType::I32}}, path);
  ASSERT_TRUE(ok.ok()) << ok.message();
  EXPECT_EQ(ok->tensors.at("pos").dataAs<int32_t>()[1], 1);
  Expected<BoundWeights> bad = bindWeights({{"pos", {2}, DType::I64}}, path);
  ASSERT_FALSE(bad.ok());
  EXPECT_CONTAINS(bad.message(),
                  "tensor 'pos': unsupported dtype i32 (expected i64[2])");
}

TEST_F(WeightBindingTest, OpenErrorsPassThrough) {
  Expected<BoundWeights> b = bindWeights({{"w", {1}}}, tmp.path("none.st"));
  ASSERT_FALSE(b.ok());
  EXPECT_CONTAINS(b.message(), "none.st");
  EXPECT_CONTAINS(b.message(), "No such file or directory");
}

TEST_F(WeightBindingTest, RefusesMalformedTables) {
  std::string path = write({{"w", filled({1})}});
  Expected<BoundWeights> dup = bindWeights({{"w", {1}}, {"w", {1}}}, path);
  ASSERT_FALSE(dup.ok());
  EXPECT_CONTAINS(dup.message(), "lists 'w' twice");
  Expected<BoundWeights> neg = bindWeights({{"w", {-1}}}, path);
  ASSERT_FALSE(neg.ok());
  EXPECT_CONTAINS(neg.message(), "parameter 'w'");
}

//===----------------------------------------------------------------------===//
// Random weights
//===----------------------------------------------------------------------===//

static ParamTable smallModel() {
  return {{"wte.weight", {64, 32}},       {"h.0.ln_1.weight", {32}},
          {"h.0.ln_1.bias", {32}},        {"h.0.attn.c_attn.weight", {32, 96}},
          {"h.0.attn.c_attn.bias", {96}}, {"encoder.norm.gamma", {32}},
          {"encoder.norm.beta", {32}},    {"position_ids", {1, 8}, DType::I64}};
}

static bool sameBytes(const Tensor &a, const Tensor &b) {
  return a.byteSize() == b.byteSize() &&
         std::memcmp(a.data(), b.data(), a.byteSize()) == 0;
}

TEST(RandomWeights, DeterministicPerSeed) {
  Expected<WeightMap> a = randomWeights(smallModel(), 42);
  Expected<WeightMap> b = randomWeights(smallModel(), 42);
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_EQ(a->size(), smallModel().size());
  for (const auto &kv : *a)
    EXPECT_TRUE(sameBytes(kv.second, b->at(kv.first))) << kv.first;
}

TEST(RandomWeights, DifferentAcrossSeedsAndTensors) {
  WeightMap a = *randomWeights(smallModel(), 1);
  WeightMap b = *randomWeights(smallModel(), 2);
  EXPECT_FALSE(sameBytes(a.at("wte.weight"), b.at("wte.weight")));
  EXPECT_FALSE(sameBytes(a.at("h.0.attn.c_attn.weight"),
                         b.at("h.0.attn.c_attn.weight")));
  // Two tensors of one model draw from different streams.
  EXPECT_NE(a.at("wte.weight").dataAs<float>()[0],
            a.at("h.0.attn.c_attn.weight").dataAs<float>()[0]);
}

TEST(RandomWeights, IndependentOfTableOrderAndNeighbours) {
  ParamTable t = smallModel();
  ParamTable reversed(t.rbegin(), t.rend());
  ParamTable alone = {t[3]};
  WeightMap a = *randomWeights(t, 7);
  WeightMap b = *randomWeights(reversed, 7);
  WeightMap c = *randomWeights(alone, 7);
  for (const auto &kv : a)
    EXPECT_TRUE(sameBytes(kv.second, b.at(kv.first))) << kv.first;
  EXPECT_TRUE(sameBytes(a.at(t[3].name), c.at(t[3].name)));
}

TEST(RandomWeights, FollowsTheNamingRules) {
  WeightMap w = *randomWeights(smallModel(), 3);
  auto all = [](const Tensor &t, float v) {
    const float *p = t.dataAs<float>();
    for (int64_t i = 0; i < t.numElements(); ++i)
      if (p[i] != v)
        return false;
    return true;
  };
  EXPECT_TRUE(all(w.at("h.0.ln_1.weight"), 1.0f));
  EXPECT_TRUE(all(w.at("encoder.norm.gamma"), 1.0f));
  EXPECT_TRUE(all(w.at("h.0.ln_1.bias"), 0.0f));
  EXPECT_TRUE(all(w.at("h.0.attn.c_attn.bias"), 0.0f));
  EXPECT_TRUE(all(w.at("encoder.norm.beta"), 0.0f));
  EXPECT_EQ(w.at("position_ids").dtype(), DType::I64);
  EXPECT_EQ(w.at("position_ids").dataAs<int64_t>()[7], 0);
  EXPECT_EQ(w.at("wte.weight").shape(), (Shape{64, 32}));
}

TEST(RandomWeights, NormalWithStd002) {
  ParamTable t = {{"big.weight", {256, 1024}}};
  Tensor w = (*randomWeights(t, 11)).at("big.weight");
  const float *p = w.dataAs<float>();
  double sum = 0, sq = 0, maxAbs = 0;
  int64_t n = w.numElements();
  for (int64_t i = 0; i < n; ++i) {
    ASSERT_TRUE(std::isfinite(p[i]));
    sum += p[i];
    sq += double(p[i]) * p[i];
    maxAbs = std::max(maxAbs, std::fabs(double(p[i])));
  }
  double mean = sum / double(n);
  double sd = std::sqrt(sq / double(n) - mean * mean);
  // 262144 samples: the sample mean's s.e. is 4e-5, the std's about 3e-5.
  EXPECT_NEAR(mean, 0.0, 2e-4);
  EXPECT_NEAR(sd, 0.02, 2e-4);
  EXPECT_LT(maxAbs, 0.02 * 7);
}

TEST(RandomWeights, HalfPrecisionParameters) {
  ParamTable t = {{"w", {16, 16}, DType::BF16}, {"ln.weight", {4}, DType::F16}};
  WeightMap w = *randomWeights(t, 5);
  EXPECT_EQ(w.at("w").dtype(), DType::BF16);
  Tensor f = *w.at("w").toF32();
  bool anyNonZero = false;
  for (int64_t i = 0; i < f.numElements(); ++i)
    anyNonZero |= f.dataAs<float>()[i] != 0.0f;
  EXPECT_TRUE(anyNonZero);
  EXPECT_EQ(w.at("ln.weight").dataAs<uint16_t>()[0], 0x3C00);
}

TEST(RandomWeights, Splitmix64KnownValues) {
  // Reference values of splitmix64 seeded with 0 (Vigna's C code): the
  // first outputs of the sequential generator are mix(k * golden) for
  // k = 1, 2, ..., which is splitmix64((k - 1) * golden) here.
  EXPECT_EQ(splitmix64(0), 0xE220A8397B1DCDAFull);
  EXPECT_EQ(splitmix64(0x9E3779B97F4A7C15ull), 0x6E789E6AA1B965F4ull);
}

TEST(RandomWeights, RefusesMalformedTables) {
  EXPECT_FALSE(randomWeights({{"a", {1}}, {"a", {2}}}, 0).ok());
  EXPECT_FALSE(randomWeights({{"", {1}}}, 0).ok());
  EXPECT_FALSE(randomWeights({{"a", {-2}}}, 0).ok());
}
