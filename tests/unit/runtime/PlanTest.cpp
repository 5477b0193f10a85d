//===- PlanTest.cpp - Plan helpers, verification and JSON round trips -----===//

#include "runtime/Plan.h"

#include "PlanTestUtil.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <functional>
#include <fstream>
#include <sstream>

using namespace tfc::rt;
using namespace tfc::rt::test;

namespace {

#define EXPECT_CONTAINS(haystack, needle)                                      \
  EXPECT_NE(std::string(haystack).find(needle), std::string::npos)             \
      << "message: " << (haystack) << "\nexpected to contain: " << (needle)

TEST(PlanTest, EvaluateAndPrintDimExprs) {
  std::vector<SymbolSource> symbols = {{"past", 0, 0, 0}, {"seq", 0, 1, 0}};
  DimExpr sum{0, {{0, 1}, {1, 1}}};
  EXPECT_EQ(evaluate(sum, {5, 3}), 8);
  EXPECT_EQ(dimToString(sum, symbols), "past + seq");
  DimExpr affine{1, {{1, 2}}};
  EXPECT_EQ(evaluate(affine, {5, 3}), 7);
  EXPECT_EQ(dimToString(affine, symbols), "2*seq + 1");
  DimExpr room{64, {{0, -1}, {1, -1}}};
  EXPECT_EQ(evaluate(room, {60, 5}), -1);
  EXPECT_EQ(dimToString(room, symbols), "-past - seq + 64");
  EXPECT_EQ(dimToString(DimExpr::of(768), symbols), "768");
  EXPECT_EQ(evaluate(DimExpr::of(768), {}), 768);

  PlanValue v =
      makeValue(PlanValue::Kind::Input, DType::I32, {sym(0), sym(1), lit(4)});
  EXPECT_EQ(valueTypeToString(v, symbols), "i32[past, seq, 4]");
}

TEST(PlanTest, FindEntry) {
  Plan plan = makeToyPlan();
  ASSERT_NE(plan.findEntry("extend"), nullptr);
  EXPECT_EQ(plan.findEntry("extend")->name, "extend");
  EXPECT_EQ(plan.findEntry("nope"), nullptr);
}

TEST(PlanTest, ToyPlanVerifies) {
  Status s = verifyPlan(makeToyPlan());
  EXPECT_TRUE(s.ok()) << s.message();
}

void expectSamePlan(const Plan &a, const Plan &b) {
  EXPECT_EQ(a.modelName, b.modelName);
  ASSERT_EQ(a.kernels.size(), b.kernels.size());
  for (size_t i = 0; i < a.kernels.size(); ++i) {
    EXPECT_EQ(a.kernels[i].name, b.kernels[i].name);
    EXPECT_EQ(a.kernels[i].op, b.kernels[i].op);
    EXPECT_EQ(a.kernels[i].family, b.kernels[i].family);
    EXPECT_EQ(a.kernels[i].signature, b.kernels[i].signature);
    EXPECT_EQ(a.kernels[i].numInputs, b.kernels[i].numInputs);
    EXPECT_EQ(a.kernels[i].numOutputs, b.kernels[i].numOutputs);
  }
  ASSERT_EQ(a.params.size(), b.params.size());
  for (size_t i = 0; i < a.params.size(); ++i) {
    EXPECT_EQ(a.params[i].name, b.params[i].name);
    EXPECT_EQ(a.params[i].shape, b.params[i].shape);
    EXPECT_EQ(a.params[i].storedDType, b.params[i].storedDType);
  }
  ASSERT_EQ(a.constants.size(), b.constants.size());
  for (size_t i = 0; i < a.constants.size(); ++i) {
    EXPECT_EQ(a.constants[i].typeString(), b.constants[i].typeString());
    ASSERT_EQ(a.constants[i].byteSize(), b.constants[i].byteSize());
    EXPECT_EQ(std::memcmp(a.constants[i].data(), b.constants[i].data(),
                          a.constants[i].byteSize()),
              0);
  }
  ASSERT_EQ(a.entries.size(), b.entries.size());
  for (size_t e = 0; e < a.entries.size(); ++e) {
    const PlanEntry &x = a.entries[e], &y = b.entries[e];
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.inputs, y.inputs);
    EXPECT_EQ(x.inputNames, y.inputNames);
    EXPECT_EQ(x.outputs, y.outputs);
    EXPECT_EQ(x.outputNames, y.outputNames);
    ASSERT_EQ(x.symbols.size(), y.symbols.size());
    for (size_t i = 0; i < x.symbols.size(); ++i) {
      EXPECT_EQ(x.symbols[i].name, y.symbols[i].name);
      EXPECT_EQ(x.symbols[i].input, y.symbols[i].input);
      EXPECT_EQ(x.symbols[i].axis, y.symbols[i].axis);
      EXPECT_EQ(x.symbols[i].bound, y.symbols[i].bound);
    }
    ASSERT_EQ(x.values.size(), y.values.size());
    for (size_t i = 0; i < x.values.size(); ++i) {
      EXPECT_EQ(x.values[i].kind, y.values[i].kind);
      EXPECT_EQ(x.values[i].dtype, y.values[i].dtype);
      EXPECT_EQ(x.values[i].shape, y.values[i].shape);
      EXPECT_EQ(x.values[i].name, y.values[i].name);
      EXPECT_EQ(x.values[i].index, y.values[i].index);
    }
    ASSERT_EQ(x.indexChecks.size(), y.indexChecks.size());
    for (size_t i = 0; i < x.indexChecks.size(); ++i) {
      EXPECT_EQ(x.indexChecks[i].value, y.indexChecks[i].value);
      EXPECT_EQ(x.indexChecks[i].limit, y.indexChecks[i].limit);
      EXPECT_EQ(x.indexChecks[i].what, y.indexChecks[i].what);
    }
    ASSERT_EQ(x.dimChecks.size(), y.dimChecks.size());
    for (size_t i = 0; i < x.dimChecks.size(); ++i) {
      EXPECT_EQ(x.dimChecks[i].dim, y.dimChecks[i].dim);
      EXPECT_EQ(x.dimChecks[i].min, y.dimChecks[i].min);
      EXPECT_EQ(x.dimChecks[i].what, y.dimChecks[i].what);
    }
    ASSERT_EQ(x.steps.size(), y.steps.size());
    for (size_t i = 0; i < x.steps.size(); ++i) {
      EXPECT_EQ(x.steps[i].kernel, y.steps[i].kernel);
      EXPECT_EQ(x.steps[i].inputs, y.steps[i].inputs);
      EXPECT_EQ(x.steps[i].outputs, y.steps[i].outputs);
      EXPECT_EQ(x.steps[i].release, y.steps[i].release);
      EXPECT_EQ(x.steps[i].location, y.steps[i].location);
      EXPECT_EQ(x.steps[i].view.perm, y.steps[i].view.perm);
      EXPECT_EQ(x.steps[i].view.axis, y.steps[i].view.axis);
      EXPECT_EQ(x.steps[i].view.start, y.steps[i].view.start);
      EXPECT_EQ(x.steps[i].view.step, y.steps[i].view.step);
      EXPECT_EQ(x.steps[i].view.strided, y.steps[i].view.strided);
      EXPECT_EQ(x.steps[i].layout, y.steps[i].layout);
    }
  }
}

TEST(PlanTest, JsonRoundTrip) {
  Plan plan = makeToyPlan();
  // Constants of every size class of base64 padding, and non-float types.
  plan.constants.push_back(*Tensor::fromI32({2}, {-1, 7}));
  plan.constants.push_back(*Tensor::fromI64({1}, {1LL << 40}));
  Tensor mask = *Tensor::zeros(DType::Bool, {5});
  mask.dataAs<uint8_t>()[1] = 1;
  plan.constants.push_back(mask);
  plan.constants.push_back(*Tensor::zeros(DType::F32, {0, 3}));
  plan.params.push_back({"unicode ünïcode", {3}, DType::BF16});
  // The extend entry's slice as a strided view (also a strided one), its
  // result laid out with the first two axes swapped.
  plan.entries[1].steps[1].view = {{0, 1, 2}, 1, 0, 1, /*strided=*/true};
  plan.entries[1].steps[1].layout = {1, 0, 2};

  Expected<std::string> json = serializePlan(plan);
  ASSERT_TRUE(json.ok()) << json.message();
  Expected<Plan> back = deserializePlan(*json);
  ASSERT_TRUE(back.ok()) << back.message();
  expectSamePlan(plan, *back);

  // A second trip produces the same bytes: the format is canonical.
  Expected<std::string> again = serializePlan(*back);
  ASSERT_TRUE(again.ok()) << again.message();
  EXPECT_EQ(*json, *again);
}

/// The runtime fuzzer's plan seed (scripts/make-plan-seed.sh) is a plan of
/// the current format, with what a version-3 plan adds: a KV cache grown in
/// place, each kernel's op and family. When the format changes this fails
/// until the seed is made again, so the fuzzer never starts from a plan
/// the reader refuses at once.
TEST(PlanTest, FuzzSeedIsACurrentPlan) {
  const char *root = std::getenv("TFC_SOURCE_DIR");
  if (!root)
    GTEST_SKIP() << "TFC_SOURCE_DIR is not set (ctest sets it)";
  std::string path =
      std::string(root) + "/tests/fuzz/runtime-corpus/plan-v3-kv-cache.json";
  std::ifstream in(path, std::ios::binary);
  ASSERT_TRUE(in) << "cannot read " << path;
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_LT(text.str().size(), 4096u) << "scripts/fuzz.sh: -max_len=4096";
  Expected<Plan> plan = deserializePlan(text.str());
  ASSERT_TRUE(plan.ok()) << plan.message()
                         << "\n(run scripts/make-plan-seed.sh)";
  ASSERT_EQ(plan->entries.size(), 1u);
  const PlanEntry &entry = plan->entries[0];
  EXPECT_EQ(entry.caches.size(), 1u);
  EXPECT_EQ(entry.indexChecks.size(), 1u);
  ASSERT_EQ(plan->kernels.size(), 4u);
  for (const PlanKernel &kernel : plan->kernels) {
    EXPECT_FALSE(kernel.op.empty()) << kernel.name;
    EXPECT_NE(kernel.family, KernelFamily::None) << kernel.name;
  }
  // The canonical form: serializing it again gives the same bytes.
  Expected<std::string> again = serializePlan(*plan);
  ASSERT_TRUE(again.ok()) << again.message();
  EXPECT_EQ(*again, text.str());
}

TEST(PlanTest, SerializeRefusesAnInvalidPlan) {
  Plan plan = makeToyPlan();
  plan.entries[0].steps[0].kernel = 42;
  Expected<std::string> json = serializePlan(plan);
  ASSERT_FALSE(json.ok());
  EXPECT_CONTAINS(json.message(), "step 0: kernel 42 is out of range");
}

/// Applies `edit` to the toy plan's JSON and expects deserialization to fail
/// with `message` in the error.
void expectCorrupt(const std::string &from, const std::string &to,
                   const std::string &message) {
  Expected<std::string> json = serializePlan(makeToyPlan());
  ASSERT_TRUE(json.ok());
  std::string text = *json;
  size_t at = text.find(from);
  ASSERT_NE(at, std::string::npos) << from << " not in " << text;
  text.replace(at, from.size(), to);
  Expected<Plan> plan = deserializePlan(text);
  ASSERT_FALSE(plan.ok()) << "accepted: " << text;
  EXPECT_CONTAINS(plan.message(), message);
}

TEST(PlanTest, DeserializeRefusesCorruptPlans) {
  EXPECT_FALSE(deserializePlan("").ok());
  EXPECT_CONTAINS(deserializePlan("{\"format\": ").message(), "not valid JSON");
  EXPECT_CONTAINS(deserializePlan("[1, 2]").message(), "expected an object");
  expectCorrupt("\"tfc-plan\"", "\"onnx\"", "expected 'tfc-plan'");
  expectCorrupt("\"version\":3", "\"version\":4", "unsupported version 4");
  expectCorrupt("\"op\":0", "\"op\":7", "unknown step op 7");
  expectCorrupt("\"op\":0", "\"op\":1", "cache step without a cache");
  // Older plans (version 1: no cache steps; 2: no kernel op or family) are
  // refused, not guessed.
  expectCorrupt("\"version\":3", "\"version\":2", "unsupported version 2");
  expectCorrupt("\"family\":\"data_movement\"", "\"family\":\"dataMovement\"",
                "kernels[0].family: unknown kernel family 'dataMovement'");
  expectCorrupt("\"family\":\"data_movement\"", "\"family\":\"none\"",
                "unknown kernel family 'none'");
  expectCorrupt("\"op\":\"tfc.gather\",", "", "kernels[0]");
  expectCorrupt("\"kind\":\"temp\"", "\"kind\":\"scratch\"",
                "unknown value kind 'scratch'");
  expectCorrupt("\"dtype\":\"bool\"", "\"dtype\":\"b1\"", "unknown dtype 'b1'");
  expectCorrupt("\"kernel\":1", "\"kernel\":9", "kernel 9 is out of range");
  expectCorrupt("\"kernel\":1", "\"kernel\":\"1\"",
                "steps[1].kernel: expected an integer, found a string");
  expectCorrupt("\"kernel\":1", "\"kernel\":99999999999",
                "integer 99999999999 is out of range");
  expectCorrupt("\"inputs\":[4,3]", "\"inputs\":[4,77]",
                "reads value 77, which is not defined there");
  // Reading a temp after its release.
  expectCorrupt("\"inputs\":[1,5]", "\"inputs\":[4,5]",
                "reads value 4, which is not defined there");
  expectCorrupt("\"release\":[4]", "\"release\":[0]",
                "releases value 0, which is not a live temp");
  expectCorrupt("\"outputs\":[6]", "\"outputs\":[5]",
                "output value 5 is not defined at the end");
  expectCorrupt("\"data\":\"AAAAQA==\"", "\"data\":\"AAAAQA\"",
                "is not valid base64");
  expectCorrupt("\"data\":\"AAAAQA==\"", "\"data\":\"AAAAQAAA\"",
                "holds 6 bytes, but f32[] needs 4");
  expectCorrupt("[[1,1],[2,1]]", "[[1,1],[7,1]]", "symbol 7 is out of range");
  expectCorrupt("{\"axis\":1,\"bound\":8,\"input\":0,",
                "{\"axis\":5,\"bound\":8,\"input\":0,",
                "symbol 'seq': axis 5 is out of range for input 'ids'");
  expectCorrupt("{\"axis\":1,\"bound\":8,\"input\":0,",
                "{\"axis\":1,\"bound\":8,\"input\":3,",
                "symbol 'seq': input 3 is out of range");
  // The symbol must be read from an axis that is that symbol.
  expectCorrupt("{\"axis\":1,\"bound\":8,\"input\":0,",
                "{\"axis\":0,\"bound\":8,\"input\":0,",
                "symbol 'seq': axis 0 of input 'ids' is not the symbol itself");
  expectCorrupt("\"name\":\"wte\",\"shape\":[10,4]}],\"version\"",
                "\"name\":\"wte\",\"shape\":[10,-4]}],\"version\"",
                "params[0].shape[1]: negative dimension -4");
  expectCorrupt("\"kind\":\"param\",\"name\":\"wte\",\"shape\":[10,4]",
                "\"kind\":\"param\",\"name\":\"wte\",\"shape\":[10,5]",
                "parameter 'wte' has shape [10, 5] but the table says [10, 4]");
  expectCorrupt("\"kind\":\"param\",\"name\":\"wte\"",
                "\"kind\":\"param\",\"name\":\"wpe\"",
                "parameter 'wpe' is not in the plan's parameter table");
  expectCorrupt("\"limit\":10", "\"limit\":-1", "negative limit");
  expectCorrupt("\"index_checks\":[{\"limit\":10,\"value\":0",
                "\"index_checks\":[{\"limit\":10,\"value\":4",
                "does not name an input value");
  expectCorrupt("\"input_names\":[\"ids\",\"mask\"]",
                "\"input_names\":[\"ids\"]", "has 2 inputs but 1 input names");
}

/// The toy plan with its extend entry's slice ([b, past + seq, 4] ->
/// [b, 1, 4]) marked as a strided view, edited by `edit`: verifyPlan's
/// message, empty when it verifies.
std::string verifyView(
    const std::function<void(PlanStep::StridedView &)> &edit) {
  Plan plan = makeToyPlan();
  PlanStep::StridedView &view = plan.entries[1].steps[1].view;
  view = {{0, 1, 2}, 1, 0, 1};
  edit(view);
  Status s = verifyPlan(plan);
  return s.ok() ? "" : s.message();
}

TEST(PlanTest, StridedViewsAreVerified) {
  EXPECT_EQ(verifyView([](PlanStep::StridedView &) {}), "");
  // A transpose of the outer axes keeps the innermost one.
  EXPECT_EQ(verifyView([](PlanStep::StridedView &v) {
              v = {{1, 0, 2}, -1, 0, 1};
            }),
            "");
  EXPECT_CONTAINS(verifyView([](PlanStep::StridedView &v) {
                    v.perm = {0, 2, 1};
                  }),
                  "step 1: view: perm must keep the last axis last");
  EXPECT_CONTAINS(verifyView([](PlanStep::StridedView &v) {
                    v.perm = {0, 0, 2};
                  }),
                  "perm is not a permutation of the axes");
  EXPECT_CONTAINS(verifyView([](PlanStep::StridedView &v) {
                    v.perm = {0, 1};
                  }),
                  "the permutation, input and result ranks differ");
  EXPECT_CONTAINS(verifyView([](PlanStep::StridedView &v) { v.step = 0; }),
                  "slice axis 1, start 0, step 0 is not a valid view");
  EXPECT_CONTAINS(verifyView([](PlanStep::StridedView &v) { v.axis = 3; }),
                  "is not a valid view");
  EXPECT_CONTAINS(verifyView([](PlanStep::StridedView &v) {
                    v.axis = 2;
                    v.step = 2;
                  }),
                  "is not a valid view");
  EXPECT_CONTAINS(verifyView([](PlanStep::StridedView &v) { v.start = -1; }),
                  "is not a valid view");
  // Only a step of one input and one output.
  Plan plan = makeToyPlan();
  plan.entries[1].steps[0].view = {{0, 1, 2}, -1, 0, 1};
  EXPECT_CONTAINS(verifyPlan(plan).message(),
                  "only a kernel step of one input and one output is a view");
}

/// The toy plan with its extend entry's slice given `layout`:
/// verifyPlan's message, empty when it verifies.
std::string verifyLayout(std::vector<int32_t> layout, size_t step = 1) {
  Plan plan = makeToyPlan();
  plan.entries[1].steps[step].layout = std::move(layout);
  Status s = verifyPlan(plan);
  return s.ok() ? "" : s.message();
}

TEST(PlanTest, LayoutsAreVerified) {
  EXPECT_EQ(verifyLayout({}), "");
  EXPECT_EQ(verifyLayout({1, 0, 2}), "");
  EXPECT_CONTAINS(verifyLayout({0, 2, 1}),
                  "step 1: layout must keep the last axis last");
  EXPECT_CONTAINS(verifyLayout({0, 0, 2}),
                  "step 1: layout is not a permutation of the axes");
  EXPECT_CONTAINS(verifyLayout({0, 1}),
                  "step 1: layout is not a permutation of the axes");
}

TEST(PlanTest, DeserializeNeverCrashesOnTruncationOrMutation) {
  Expected<std::string> json = serializePlan(makeToyPlan());
  ASSERT_TRUE(json.ok());
  const std::string &text = *json;
  // Every prefix is invalid JSON or an incomplete plan.
  for (size_t n = 0; n < text.size(); n += 3)
    EXPECT_FALSE(deserializePlan(text.substr(0, n)).ok()) << n;
  // Single-character mutations of digits and quotes must be handled; most
  // are refused, some (a changed location string) are harmless.
  const char replacements[] = {'0', '9', '-', '"', '[', '{', 'x'};
  for (size_t i = 0; i < text.size(); i += 2) {
    for (char r : replacements) {
      std::string mutated = text;
      mutated[i] = r;
      Expected<Plan> plan = deserializePlan(mutated);
      if (plan.ok()) {
        EXPECT_TRUE(verifyPlan(*plan).ok());
      }
    }
  }
}

} // namespace
