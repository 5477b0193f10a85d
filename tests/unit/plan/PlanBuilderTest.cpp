//===- PlanBuilderTest.cpp - tfc IR -> runtime Plan -----------------------===//
//
// Inputs/*.mlir are the frontend's IR of the tiny example models, made with
//   tfc dump --emit=ir --locations examples/tiny/gpt2-tiny.tfm \
//       -o tests/unit/plan/Inputs/gpt2-tiny-1layer.mlir --set layers=1
// (and layers=2; bert-tiny, seed-transformer-tiny without --set), run from
// the repository root.
//
//===----------------------------------------------------------------------===//

#include "plan/PlanBuilder.h"

#include "ir/TfcDialect.h"
#include "runtime/Executor.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <array>
#include <set>
#include <utility>

using namespace tfc;
using rt::DimExpr;
using rt::PlanEntry;
using rt::PlanValue;

namespace {

#define EXPECT_CONTAINS(haystack, needle)                                      \
  EXPECT_NE(std::string(haystack).find(needle), std::string::npos)             \
      << "message: " << (haystack) << "\nexpected to contain: " << (needle)

class PlanBuilderTest : public ::testing::Test {
protected:
  mlir::MLIRContext context;

  PlanBuilderTest() {
    context.loadDialect<mlir::tfc::TfcDialect, mlir::func::FuncDialect>();
  }

  mlir::OwningOpRef<mlir::ModuleOp> parseFile(const std::string &name) {
    std::string path = std::string(TFC_PLAN_INPUTS) + "/" + name;
    auto module = mlir::parseSourceFile<mlir::ModuleOp>(path, &context);
    EXPECT_TRUE(module) << "cannot parse " << path;
    return module;
  }

  mlir::OwningOpRef<mlir::ModuleOp> parse(const std::string &text) {
    auto module = mlir::parseSourceString<mlir::ModuleOp>(text, &context);
    EXPECT_TRUE(module) << "cannot parse:\n" << text;
    return module;
  }

  BuiltPlan build(mlir::ModuleOp module) {
    llvm::Expected<BuiltPlan> built = buildPlan(module);
    if (!built) {
      ADD_FAILURE() << llvm::toString(built.takeError());
      return {};
    }
    return std::move(*built);
  }

  std::string buildError(mlir::ModuleOp module) {
    llvm::Expected<BuiltPlan> built = buildPlan(module);
    if (built) {
      ADD_FAILURE() << "expected an error";
      return "";
    }
    return llvm::toString(built.takeError());
  }
};

const PlanEntry &entry(const BuiltPlan &built, const std::string &name) {
  const PlanEntry *e = built.plan.findEntry(name);
  EXPECT_NE(e, nullptr) << "no entry " << name;
  static PlanEntry none;
  return e ? *e : none;
}

std::string typeOf(const PlanEntry &e, int32_t id) {
  return rt::valueTypeToString(e.values[static_cast<size_t>(id)], e.symbols);
}

size_t outputIndex(const PlanEntry &e, const std::string &name) {
  for (size_t i = 0; i < e.outputNames.size(); ++i)
    if (e.outputNames[i] == name)
      return i;
  ADD_FAILURE() << "no output " << name;
  return 0;
}

/// Every temp is an output or released exactly once, never inputs, params
/// or constants (verifyPlan checks use-after-release).
void expectCompleteLiveness(const PlanEntry &e) {
  std::set<int32_t> outputs(e.outputs.begin(), e.outputs.end());
  std::multiset<int32_t> released;
  for (const rt::PlanStep &s : e.steps)
    released.insert(s.release.begin(), s.release.end());
  for (size_t id = 0; id < e.values.size(); ++id) {
    int32_t i = static_cast<int32_t>(id);
    if (e.values[id].kind != PlanValue::Kind::Temp || outputs.count(i)) {
      EXPECT_EQ(released.count(i), 0u) << e.name << " value " << id;
    } else {
      EXPECT_EQ(released.count(i), 1u) << e.name << " value " << id;
    }
  }
}

TEST_F(PlanBuilderTest, Gpt2EntriesSymbolsAndShapes) {
  auto module = parseFile("gpt2-tiny-1layer.mlir");
  ASSERT_TRUE(module);
  BuiltPlan built = build(*module);
  const rt::Plan &plan = built.plan;
  EXPECT_EQ(plan.modelName, "gpt2_tiny");
  ASSERT_EQ(plan.entries.size(), 3u);

  const PlanEntry &fwd = entry(built, "forward");
  ASSERT_EQ(fwd.inputNames, std::vector<std::string>{"ids"});
  EXPECT_EQ(typeOf(fwd, fwd.inputs[0]), "i32[batch, seq]");
  ASSERT_EQ(fwd.symbols.size(), 2u);
  EXPECT_EQ(fwd.symbols[1].name, "seq");
  EXPECT_EQ(fwd.symbols[1].axis, 1);
  EXPECT_EQ(fwd.symbols[1].bound, 64);
  EXPECT_EQ(fwd.symbols[0].bound, 0); // batch is unbounded
  ASSERT_EQ(fwd.outputNames, std::vector<std::string>{"logits"});
  EXPECT_EQ(typeOf(fwd, fwd.outputs[0]), "f32[batch, seq, 512]");

  const PlanEntry &decode = entry(built, "decode");
  EXPECT_EQ((std::vector<std::string>{"ids", "past_k", "past_v"}),
            decode.inputNames);
  EXPECT_EQ(typeOf(decode, decode.inputs[1]), "f32[1, batch, 4, past, 16]");
  // The KV cache grows by the step: concat of past and seq along the axis.
  EXPECT_EQ(typeOf(decode, decode.outputs[outputIndex(decode, "present_k")]),
            "f32[1, batch, 4, seq + past, 16]");
  EXPECT_EQ(typeOf(decode, decode.outputs[outputIndex(decode, "logits")]),
            "f32[batch, seq, 512]");
  // Scores are [batch, heads, seq, past + seq]: matmul with a transposed K.
  bool sawScores = false;
  for (size_t id = 0; id < decode.values.size(); ++id)
    sawScores |= typeOf(decode, static_cast<int32_t>(id)) ==
                 "f32[batch, 4, seq, seq + past]";
  EXPECT_TRUE(sawScores);
  bool sawMask = false;
  for (size_t id = 0; id < decode.values.size(); ++id)
    sawMask |=
        typeOf(decode, static_cast<int32_t>(id)) == "bool[seq, seq + past]";
  EXPECT_TRUE(sawMask) << "causal_mask is [q, k]";

  for (const PlanEntry &e : plan.entries)
    expectCompleteLiveness(e);
}

TEST_F(PlanBuilderTest, Gpt2ChecksAndLocations) {
  auto module = parseFile("gpt2-tiny-1layer.mlir");
  ASSERT_TRUE(module);
  BuiltPlan built = build(*module);

  const PlanEntry &fwd = entry(built, "forward");
  ASSERT_EQ(fwd.indexChecks.size(), 1u);
  EXPECT_EQ(fwd.indexChecks[0].value, fwd.inputs[0]);
  EXPECT_EQ(fwd.indexChecks[0].limit, 512);
  EXPECT_CONTAINS(fwd.indexChecks[0].what, "ids index wte.weight at ");

  // decode's positions continue after the cache: past + seq <= 64 rows of
  // wpe.weight.
  const PlanEntry &decode = entry(built, "decode");
  ASSERT_EQ(decode.dimChecks.size(), 1u);
  const rt::DimCheck &check = decode.dimChecks[0];
  EXPECT_EQ(rt::dimToString(check.dim, decode.symbols), "-seq - past + 64");
  EXPECT_EQ(check.min, 0);
  EXPECT_CONTAINS(check.what, "positions index wpe.weight (64 rows)");

  llvm::Regex fileLineCol("^.+\\.tfm:[0-9]+:[0-9]+$");
  for (const PlanEntry &e : built.plan.entries)
    for (const rt::PlanStep &s : e.steps)
      EXPECT_TRUE(fileLineCol.match(s.location)) << s.location;
}

TEST_F(PlanBuilderTest, KernelsAreSharedAcrossLayersAndEntries) {
  auto one = parseFile("gpt2-tiny-1layer.mlir");
  auto two = parseFile("gpt2-tiny-2layer.mlir");
  ASSERT_TRUE(one && two);
  BuiltPlan b1 = build(*one), b2 = build(*two);

  // The second layer needs no kernel the first did not: forward (no KV
  // cache) uses the same kernels for 1 and 2 layers. (prefill and decode do
  // get a few more: each layer slices its own part of the stacked cache.)
  auto kernelsOf = [](const BuiltPlan &b, const std::string &name) {
    std::set<std::string> used;
    for (const rt::PlanStep &s : entry(b, name).steps)
      used.insert(b.plan.kernels[static_cast<size_t>(s.kernel)].signature);
    return used;
  };
  EXPECT_EQ(kernelsOf(b1, "forward"), kernelsOf(b2, "forward"));
  size_t steps1 = entry(b1, "forward").steps.size();
  size_t steps2 = entry(b2, "forward").steps.size();
  EXPECT_GE(steps2, steps1 + 30);
  EXPECT_LE(b2.plan.kernels.size(), b1.plan.kernels.size() + 4);
  size_t allSteps = 0;
  for (const PlanEntry &e : b2.plan.entries)
    allSteps += e.steps.size();
  EXPECT_LT(b2.plan.kernels.size() * 3, allSteps);

  ASSERT_EQ(b2.kernelOps.size(), b2.plan.kernels.size());
  llvm::Regex identifier("^k[0-9]+_[a-z_]+$");
  std::set<std::string> names, signatures;
  for (size_t i = 0; i < b2.plan.kernels.size(); ++i) {
    const rt::PlanKernel &k = b2.plan.kernels[i];
    EXPECT_TRUE(identifier.match(k.name)) << k.name;
    EXPECT_TRUE(names.insert(k.name).second);
    EXPECT_TRUE(signatures.insert(k.signature).second);
    EXPECT_EQ(kernelSignature(b2.kernelOps[i]), k.signature);
    EXPECT_EQ(k.numInputs,
              static_cast<int32_t>(b2.kernelOps[i]->getNumOperands()));
    EXPECT_EQ(k.signature.find("loc("), std::string::npos) << k.signature;
  }
  // Constants are shared too (the 1/sqrt(d) scale, the mask fill value).
  EXPECT_EQ(b1.plan.constants.size(), b2.plan.constants.size());
  // Params are listed once each.
  std::set<std::string> params;
  for (const rt::ParamInfo &p : b2.plan.params)
    EXPECT_TRUE(params.insert(p.name).second) << p.name;
  EXPECT_TRUE(params.count("h.1.attn.c_attn.weight"));
}

TEST_F(PlanBuilderTest, OtherModelsPlanAndRoundTrip) {
  for (const char *file : {"bert-tiny.mlir", "seed-transformer-tiny.mlir",
                           "gpt2-tiny-2layer.mlir"}) {
    auto module = parseFile(file);
    ASSERT_TRUE(module);
    BuiltPlan built = build(*module);
    EXPECT_FALSE(built.plan.entries.empty()) << file;
    for (const PlanEntry &e : built.plan.entries)
      expectCompleteLiveness(e);
    rt::Expected<std::string> json = rt::serializePlan(built.plan);
    ASSERT_TRUE(json.ok()) << json.message();
    rt::Expected<rt::Plan> back = rt::deserializePlan(*json);
    ASSERT_TRUE(back.ok()) << back.message();
    rt::Expected<std::string> again = rt::serializePlan(*back);
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(*json, *again) << file;
  }
}

// Fused attention whose keys are more than its queries (a decode step:
// Sk = past + seq) gets a one-query-row kernel beside the general one,
// chosen at run time when seq = 1 (PlanStep::variant); where Sk is Sq
// (prefill) there is none. Layers share both kernels; entries share the
// general one.
TEST_F(PlanBuilderTest, DecodeAttentionGetsAOneRowKernel) {
  auto module = parse(R"mlir(
    module {
      func.func @prefill(%q: tensor<?x2x?x16xf32> {tfc.name = "q", tfc.dims = ["batch", "2", "seq", "16"]},
                         %k: tensor<?x2x?x16xf32> {tfc.name = "k", tfc.dims = ["batch", "2", "seq", "16"]})
          -> (tensor<?x2x?x16xf32> {tfc.name = "y"}) {
        %y = tfc.fused_attention %q, %k, %k {scale = 0.25 : f64, causal = true} : (tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>) -> tensor<?x2x?x16xf32>
        return %y : tensor<?x2x?x16xf32>
      }
      func.func @decode(%q: tensor<?x2x?x16xf32> {tfc.name = "q", tfc.dims = ["batch", "2", "seq", "16"]},
                        %past: tensor<?x2x?x16xf32> {tfc.name = "past", tfc.dims = ["batch", "2", "past", "16"]})
          -> (tensor<?x2x?x16xf32> {tfc.name = "y"}) {
        %k = tfc.concat %past, %q {axis = 2 : i64} : (tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>) -> tensor<?x2x?x16xf32>
        %y = tfc.fused_attention %q, %k, %k {scale = 0.25 : f64, causal = true} : (tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>) -> tensor<?x2x?x16xf32>
        %z = tfc.fused_attention %y, %k, %k {scale = 0.25 : f64, causal = true} : (tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>) -> tensor<?x2x?x16xf32>
        return %z : tensor<?x2x?x16xf32>
      }
    })mlir");
  ASSERT_TRUE(module);
  BuiltPlan built = build(*module);
  const rt::Plan &plan = built.plan;
  ASSERT_EQ(plan.kernels.size(), 3u); // attention, concat, one-row attention
  ASSERT_EQ(built.kernelOps.size(), 3u);
  const PlanEntry &prefill = entry(built, "prefill");
  ASSERT_EQ(prefill.steps.size(), 1u);
  EXPECT_EQ(prefill.steps[0].variant.kernel, -1);
  int32_t general = prefill.steps[0].kernel;

  const PlanEntry &decode = entry(built, "decode");
  ASSERT_EQ(decode.steps.size(), 3u);
  int32_t oneRow = decode.steps[1].variant.kernel;
  for (size_t s : {1u, 2u}) {
    const rt::PlanStep &step = decode.steps[s];
    EXPECT_EQ(step.kernel, general);
    EXPECT_EQ(step.variant.kernel, oneRow);
    EXPECT_EQ(step.variant.input, 0); // q
    EXPECT_EQ(step.variant.axis, 2);  // its rows
    EXPECT_EQ(step.variant.extent, 1);
  }
  ASSERT_GE(oneRow, 0);
  ASSERT_NE(oneRow, general);
  // Compiled from a copy of the op with one query row in its types.
  EXPECT_CONTAINS(plan.kernels[static_cast<size_t>(oneRow)].signature,
                  "scale = 2.500000e-01 : f64}(tensor<?x2x1x16xf32>, "
                  "tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>) -> "
                  "tensor<?x2x1x16xf32>");
  EXPECT_EQ(kernelSignature(built.kernelOps[static_cast<size_t>(oneRow)]),
            plan.kernels[static_cast<size_t>(oneRow)].signature);
  EXPECT_EQ(plan.kernels[static_cast<size_t>(oneRow)].op,
            "tfc.fused_attention");
  EXPECT_NE(plan.kernels[static_cast<size_t>(oneRow)].name,
            plan.kernels[static_cast<size_t>(general)].name);

  // The variants survive the plan's JSON form.
  rt::Expected<std::string> json = rt::serializePlan(plan);
  ASSERT_TRUE(json.ok()) << json.message();
  rt::Expected<rt::Plan> back = rt::deserializePlan(*json);
  ASSERT_TRUE(back.ok()) << back.message();
  const rt::PlanStep &read = back->findEntry("decode")->steps[2];
  EXPECT_EQ(read.variant.kernel, oneRow);
  EXPECT_EQ(read.variant.axis, 2);
  EXPECT_EQ(back->findEntry("prefill")->steps[0].variant.kernel, -1);
}

// Planning only reads the module: what --emit=ir-fused prints is what is
// compiled. bert-tiny has transpose_b products on nn.Linear weights, which
// planning once rewrote (now the weight-layout pass does, before).
TEST_F(PlanBuilderTest, PlanningDoesNotChangeTheModule) {
  for (const char *file : {"bert-tiny.mlir", "gpt2-tiny-2layer.mlir"}) {
    auto module = parseFile(file);
    ASSERT_TRUE(module);
    auto print = [&] {
      std::string text;
      llvm::raw_string_ostream os(text);
      module->print(os, mlir::OpPrintingFlags().enableDebugInfo());
      return text;
    };
    std::string before = print();
    BuiltPlan built = build(*module);
    EXPECT_FALSE(built.plan.entries.empty()) << file;
    EXPECT_EQ(before, print()) << file;
  }
}

TEST_F(PlanBuilderTest, BertMaskInputIsBool) {
  auto module = parseFile("bert-tiny.mlir");
  ASSERT_TRUE(module);
  BuiltPlan built = build(*module);
  const PlanEntry &e = entry(built, "encode");
  ASSERT_EQ(e.inputNames.size(), 2u);
  EXPECT_EQ(typeOf(e, e.inputs[1]), "bool[batch, seq]");
}

//===----------------------------------------------------------------------===//
// Hand-written IR
//===----------------------------------------------------------------------===//

TEST_F(PlanBuilderTest, SliceOfDynamicAxisNeedsADimCheck) {
  auto module = parse(R"mlir(
    module attributes {tfc.model = "m", tfc.dim_bounds = {seq = 16 : i64}} {
      func.func @cls(%x: tensor<?x?x8xf32> {tfc.name = "x", tfc.dims = ["batch", "seq", "8"]})
          -> (tensor<?x2x8xf32> {tfc.name = "y"}) {
        %y = tfc.slice %x {axis = 1 : i64, start = 1 : i64, end = 3 : i64}
            : tensor<?x?x8xf32> -> tensor<?x2x8xf32> loc("m.tfm":4:9)
        return %y : tensor<?x2x8xf32>
      }
    })mlir");
  ASSERT_TRUE(module);
  BuiltPlan built = build(*module);
  const PlanEntry &e = entry(built, "cls");
  ASSERT_EQ(e.dimChecks.size(), 1u);
  EXPECT_EQ(rt::dimToString(e.dimChecks[0].dim, e.symbols), "seq");
  EXPECT_EQ(e.dimChecks[0].min, 3);
  EXPECT_EQ(e.dimChecks[0].what, "slice [1, 3) of axis 1 at m.tfm:4:9");
  EXPECT_EQ(typeOf(e, e.outputs[0]), "f32[batch, 2, 8]");
  ASSERT_EQ(e.steps.size(), 1u);
  EXPECT_EQ(e.steps[0].location, "m.tfm:4:9");
}

TEST_F(PlanBuilderTest, ReshapeCarriesDynamicDimsInOrder) {
  auto module = parse(R"mlir(
    module {
      func.func @f(%x: tensor<1x?x4x?x16xf32> {tfc.dims = ["1", "batch", "4", "past", "16"]})
          -> tensor<?x4x?x16xf32> {
        %y = tfc.reshape %x {shape = array<i64: -1, 4, -1, 16>}
            : tensor<1x?x4x?x16xf32> -> tensor<?x4x?x16xf32>
        %z = tfc.transpose %y {perm = array<i64: 0, 2, 1, 3>}
            : tensor<?x4x?x16xf32> -> tensor<?x?x4x16xf32>
        %w = tfc.reduce_sum %z {axis = 2 : i64, keepdim = true}
            : tensor<?x?x4x16xf32> -> tensor<?x?x1x16xf32>
        %v = tfc.reduce_max %w {axis = 3 : i64}
            : tensor<?x?x1x16xf32> -> tensor<?x?x1xf32>
        return %y : tensor<?x4x?x16xf32>
      }
    })mlir");
  ASSERT_TRUE(module);
  BuiltPlan built = build(*module);
  const PlanEntry &e = entry(built, "f");
  EXPECT_EQ(typeOf(e, e.outputs[0]), "f32[batch, 4, past, 16]");
  EXPECT_EQ(e.inputNames[0], "arg0");
  EXPECT_EQ(e.outputNames[0], "output0");
  ASSERT_EQ(e.values.size(), 5u);
  EXPECT_EQ(typeOf(e, 2), "f32[batch, past, 4, 16]");
  EXPECT_EQ(typeOf(e, 3), "f32[batch, past, 1, 16]");
  EXPECT_EQ(typeOf(e, 4), "f32[batch, past, 1]");
  // %w's last reader is the last step; %v is never read: freed right after
  // it is made. %y is an output and never freed.
  EXPECT_EQ(e.steps[3].release, (std::vector<int32_t>{3, 4}));
}

TEST_F(PlanBuilderTest, UndecidableBroadcastIsAnError) {
  auto module = parse(R"mlir(
    module {
      func.func @f(%a: tensor<?xf32> {tfc.dims = ["seq"]},
                   %b: tensor<?xf32> {tfc.dims = ["past"]}) -> tensor<?xf32> {
        %c = tfc.add %a, %b : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32> loc("m.tfm":7:3)
        return %c : tensor<?xf32>
      }
    })mlir");
  ASSERT_TRUE(module);
  EXPECT_EQ(buildError(*module),
            "m.tfm:7:3: cannot plan 'tfc.add': cannot broadcast seq against "
            "past: their sizes are only known at run time");
}

TEST_F(PlanBuilderTest, DeclaredResultDimsAreChecked) {
  auto module = parse(R"mlir(
    module {
      func.func @f(%a: tensor<?x4xf32> {tfc.dims = ["past", "4"]},
                   %b: tensor<?x4xf32> {tfc.dims = ["seq", "4"]})
          -> (tensor<?x4xf32> {tfc.name = "kv", tfc.dims = ["past + 2*seq", "4"]}) {
        %c = tfc.concat %a, %b {axis = 0 : i64}
            : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
        return %c : tensor<?x4xf32>
      }
    })mlir");
  ASSERT_TRUE(module);
  EXPECT_EQ(buildError(*module), "entry 'f': output 'kv' is declared "
                                 "[past + 2*seq, 4] but its shape is "
                                 "[past + seq, 4]");
}

TEST_F(PlanBuilderTest, NonTfcOpsAreRefused) {
  auto module = parse(R"mlir(
    module {
      func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {
        %c = call @g(%a) : (tensor<2xf32>) -> tensor<2xf32> loc("m.tfm":3:4)
        return %c : tensor<2xf32>
      }
      func.func private @g(%a: tensor<2xf32>) -> tensor<2xf32>
    })mlir");
  ASSERT_TRUE(module);
  EXPECT_EQ(buildError(*module), "m.tfm:3:4: cannot plan 'func.call': only "
                                 "tfc ops can be compiled");
}

// Transposes that keep the innermost axis and slices with step 1 there
// (or any step on an outer axis) are marked as strided views for the
// executor; a transpose that moves the innermost axis and a strided slice
// of it are not.
TEST_F(PlanBuilderTest, HeadSplitsAreStridedViews) {
  auto module = parse(R"mlir(
    module {
      func.func @f(%x: tensor<?x?x2304xf32>, %m: tensor<64x96xf32>)
          -> (tensor<?x12x?x64xf32>, tensor<96x64xf32>, tensor<?x?x1152xf32>,
              tensor<2x?x2304xf32>) {
        %q = tfc.slice %x {axis = 2 : i64, start = 768 : i64, end = 1536 : i64} : tensor<?x?x2304xf32> -> tensor<?x?x768xf32>
        %r = tfc.reshape %q {shape = array<i64: -1, -1, 12, 64>} : tensor<?x?x768xf32> -> tensor<?x?x12x64xf32>
        %a = tfc.transpose %r {perm = array<i64: 0, 2, 1, 3>} : tensor<?x?x12x64xf32> -> tensor<?x12x?x64xf32>
        %t = tfc.transpose %m {perm = array<i64: 1, 0>} : tensor<64x96xf32> -> tensor<96x64xf32>
        %e = tfc.slice %x {axis = 2 : i64, start = 0 : i64, end = 2304 : i64, step = 2 : i64} : tensor<?x?x2304xf32> -> tensor<?x?x1152xf32>
        %o = tfc.slice %x {axis = 0 : i64, start = 1 : i64, end = 5 : i64, step = 2 : i64} : tensor<?x?x2304xf32> -> tensor<2x?x2304xf32>
        return %a, %t, %e, %o : tensor<?x12x?x64xf32>, tensor<96x64xf32>, tensor<?x?x1152xf32>, tensor<2x?x2304xf32>
      }
    })mlir");
  ASSERT_TRUE(module);
  BuiltPlan built = build(*module);
  const PlanEntry &f = entry(built, "f");
  ASSERT_EQ(f.steps.size(), 6u);
  const rt::PlanStep::StridedView &slice = f.steps[0].view;
  EXPECT_EQ(slice.perm, (std::vector<int32_t>{0, 1, 2}));
  EXPECT_EQ(slice.axis, 2);
  EXPECT_EQ(slice.start, 768);
  EXPECT_EQ(slice.step, 1);
  EXPECT_TRUE(f.steps[1].view.empty()); // the reshape: a View kernel
  EXPECT_EQ(f.steps[2].view.perm, (std::vector<int32_t>{0, 2, 1, 3}));
  EXPECT_EQ(f.steps[2].view.axis, -1);
  EXPECT_TRUE(f.steps[3].view.empty());
  EXPECT_TRUE(f.steps[4].view.empty());
  EXPECT_EQ(f.steps[5].view.axis, 0);
  EXPECT_EQ(f.steps[5].view.start, 1);
  EXPECT_EQ(f.steps[5].view.step, 2);
  rt::Status verified = rt::verifyPlan(built.plan);
  EXPECT_TRUE(verified.ok()) << verified.message();
}

// Kernels that read some extents at run time are planned from a
// shape-generic copy of their op, so that ops differing only in those
// extents share one kernel: weight packing of any [K, N], and the head
// split/merge transposes of attention ([B, S, H, D] <-> [B, H, S, D]) whose
// innermost axis stays. A transpose that moves the innermost axis keeps its
// static shape (tiled when static).
TEST_F(PlanBuilderTest, ShapeGenericKernelsAreShared) {
  auto module = parse(R"mlir(
    module {
      func.func @f(%x: tensor<?x?x12x64xf32>, %w1: tensor<768x2304xf32>,
                   %w2: tensor<3072x768xf32>, %m: tensor<64x96xf32>)
          -> (tensor<?x?x12x64xf32>, tensor<48x768x48xf32>,
              tensor<16x3072x48xf32>, tensor<96x64xf32>) {
        %a = tfc.transpose %x {perm = array<i64: 0, 2, 1, 3>} : tensor<?x?x12x64xf32> -> tensor<?x12x?x64xf32>
        %b = tfc.transpose %a {perm = array<i64: 0, 2, 1, 3>} : tensor<?x12x?x64xf32> -> tensor<?x?x12x64xf32>
        %p1 = tfc.pack_panels %w1 : tensor<768x2304xf32> -> tensor<48x768x48xf32>
        %p2 = tfc.pack_panels %w2 : tensor<3072x768xf32> -> tensor<16x3072x48xf32>
        %t = tfc.transpose %m {perm = array<i64: 1, 0>} : tensor<64x96xf32> -> tensor<96x64xf32>
        return %b, %p1, %p2, %t : tensor<?x?x12x64xf32>, tensor<48x768x48xf32>, tensor<16x3072x48xf32>, tensor<96x64xf32>
      }
    })mlir");
  ASSERT_TRUE(module);
  BuiltPlan built = build(*module);
  const PlanEntry &f = entry(built, "f");
  ASSERT_EQ(f.steps.size(), 5u);
  ASSERT_EQ(built.plan.kernels.size(), 3u);
  EXPECT_EQ(f.steps[0].kernel, f.steps[1].kernel);
  EXPECT_EQ(f.steps[2].kernel, f.steps[3].kernel);
  EXPECT_NE(f.steps[4].kernel, f.steps[0].kernel);
  auto signatureOf = [&](const rt::PlanStep &step) {
    return built.plan.kernels[static_cast<size_t>(step.kernel)].signature;
  };
  EXPECT_EQ(signatureOf(f.steps[0]),
            "tfc.transpose{perm = array<i64: 0, 2, 1, 3>}"
            "(tensor<?x?x?x64xf32>) -> tensor<?x?x?x64xf32>");
  EXPECT_EQ(signatureOf(f.steps[2]),
            "tfc.pack_panels(tensor<?x?xf32>) -> tensor<?x?x48xf32>");
  EXPECT_EQ(signatureOf(f.steps[4]),
            "tfc.transpose{perm = array<i64: 1, 0>}"
            "(tensor<64x96xf32>) -> tensor<96x64xf32>");
  // The kernels compile from the copies, whose signatures are the plan's;
  // the steps keep their own static shapes.
  for (size_t i = 0; i < built.kernelOps.size(); ++i)
    EXPECT_EQ(kernelSignature(built.kernelOps[i]),
              built.plan.kernels[i].signature);
  EXPECT_EQ(typeOf(f, f.steps[3].outputs[0]), "f32[16, 3072, 48]");
}

// With PlanOptions::genericPanelProducts (kernels in this process, whose
// fp32 products on panels take K and N at run time), fp32 linears on panels
// that differ only in K and N share one kernel; an activation, bf16 panels
// and the default options keep their own.
TEST_F(PlanBuilderTest, PanelProductsShareAKernelWhereAsked) {
  auto module = parse(R"mlir(
    module {
      func.func @f(%x: tensor<?x?x768xf32>, %h: tensor<?x?x3072xf32>,
                   %p1: tensor<48x768x48xf32>, %b1: tensor<2304xf32>,
                   %p2: tensor<16x768x48xf32>, %b2: tensor<768xf32>,
                   %p3: tensor<16x3072x48xf32>,
                   %p4: tensor<16x384x48x2xbf16>)
          -> (tensor<?x?x2304xf32>, tensor<?x?x768xf32>, tensor<?x?x768xf32>,
              tensor<?x?x768xf32>, tensor<?x?x768xf32>) {
        %q = tfc.linear %x, %p1, %b1 {packed_n = 2304 : i64} : (tensor<?x?x768xf32>, tensor<48x768x48xf32>, tensor<2304xf32>) -> tensor<?x?x2304xf32>
        %o = tfc.linear %x, %p2, %b2 {packed_n = 768 : i64} : (tensor<?x?x768xf32>, tensor<16x768x48xf32>, tensor<768xf32>) -> tensor<?x?x768xf32>
        %d = tfc.linear %h, %p3, %b2 {packed_n = 768 : i64} : (tensor<?x?x3072xf32>, tensor<16x3072x48xf32>, tensor<768xf32>) -> tensor<?x?x768xf32>
        %g = tfc.linear %x, %p2, %b2 {packed_n = 768 : i64, activation = "gelu"} : (tensor<?x?x768xf32>, tensor<16x768x48xf32>, tensor<768xf32>) -> tensor<?x?x768xf32>
        %e = tfc.linear %x, %p4, %b2 {packed_n = 768 : i64} : (tensor<?x?x768xf32>, tensor<16x384x48x2xbf16>, tensor<768xf32>) -> tensor<?x?x768xf32>
        return %q, %o, %d, %g, %e : tensor<?x?x2304xf32>, tensor<?x?x768xf32>, tensor<?x?x768xf32>, tensor<?x?x768xf32>, tensor<?x?x768xf32>
      }
    })mlir");
  ASSERT_TRUE(module);
  PlanOptions options;
  options.genericPanelProducts = true;
  llvm::Expected<BuiltPlan> generic = buildPlan(*module, options);
  ASSERT_TRUE(static_cast<bool>(generic))
      << llvm::toString(generic.takeError());
  const PlanEntry &f = entry(*generic, "f");
  ASSERT_EQ(f.steps.size(), 5u);
  auto signatureOf = [](const BuiltPlan &built, size_t step) {
    const rt::PlanStep &s = built.plan.entries.front().steps[step];
    return built.plan.kernels[static_cast<size_t>(s.kernel)].signature;
  };
  EXPECT_EQ(generic->plan.kernels.size(), 3u);
  EXPECT_EQ(f.steps[0].kernel, f.steps[1].kernel);
  EXPECT_EQ(f.steps[0].kernel, f.steps[2].kernel);
  EXPECT_EQ(signatureOf(*generic, 0),
            "tfc.linear{packed_n}(tensor<?x?x?xf32>, tensor<?x?x48xf32>, "
            "tensor<?xf32>) -> tensor<?x?x?xf32>");
  EXPECT_EQ(signatureOf(*generic, 3),
            "tfc.linear{activation = \"gelu\", packed_n}(tensor<?x?x?xf32>, "
            "tensor<?x?x48xf32>, tensor<?xf32>) -> tensor<?x?x?xf32>");
  EXPECT_EQ(signatureOf(*generic, 4),
            "tfc.linear{packed_n}(tensor<?x?x768xf32>, "
            "tensor<16x384x48x2xbf16>, tensor<768xf32>) -> "
            "tensor<?x?x768xf32>");
  for (size_t i = 0; i < generic->kernelOps.size(); ++i)
    EXPECT_EQ(kernelSignature(generic->kernelOps[i]),
              generic->plan.kernels[i].signature);
  // The steps keep their static shapes.
  EXPECT_EQ(typeOf(f, f.steps[0].outputs[0]), "f32[arg0.0, arg0.1, 2304]");

  // By default (AOT libraries, emitted sources, GPU kernels) every shape
  // keeps its own kernel.
  BuiltPlan fixed = build(*module);
  EXPECT_EQ(fixed.plan.kernels.size(), 5u);
  EXPECT_EQ(signatureOf(fixed, 1),
            "tfc.linear{packed_n}(tensor<?x?x768xf32>, "
            "tensor<16x768x48xf32>, tensor<768xf32>) -> tensor<?x?x768xf32>");
}

TEST_F(PlanBuilderTest, CustomSignatureDecidesSharing) {
  auto module = parse(R"mlir(
    module {
      func.func @f(%a: tensor<2xf32>, %b: tensor<3xf32>) -> (tensor<2xf32>, tensor<3xf32>) {
        %c = tfc.exp %a : tensor<2xf32>
        %d = tfc.exp %b : tensor<3xf32>
        %e = tfc.constant dense<[1.0, 2.0]> : tensor<2xf32>
        %f = tfc.mul %c, %e : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
        return %f, %d : tensor<2xf32>, tensor<3xf32>
      }
    })mlir");
  ASSERT_TRUE(module);
  BuiltPlan byType = build(*module);
  EXPECT_EQ(byType.plan.kernels.size(), 3u);
  llvm::Expected<BuiltPlan> byName =
      buildPlan(*module, {}, [](mlir::Operation *op) {
        return op->getName().getStringRef().str();
      });
  ASSERT_TRUE(static_cast<bool>(byName));
  EXPECT_EQ(byName->plan.kernels.size(), 2u);
  EXPECT_EQ(byName->plan.kernels[0].name, "k0_exp");
  EXPECT_EQ(byName->plan.kernels[1].name, "k1_mul");
  ASSERT_EQ(byName->plan.constants.size(), 1u);
  EXPECT_EQ(byName->plan.constants[0].dataAs<float>()[1], 2.0f);
}

TEST_F(PlanBuilderTest, SplatConstantsAreExpanded) {
  auto module = parse(R"mlir(
    module {
      func.func @f(%a: tensor<2x3xi1>) -> tensor<2x3xi1> {
        %m = tfc.constant dense<true> : tensor<2x3xi1>
        %r = tfc.and %a, %m : (tensor<2x3xi1>, tensor<2x3xi1>) -> tensor<2x3xi1>
        return %r : tensor<2x3xi1>
      }
    })mlir");
  ASSERT_TRUE(module);
  BuiltPlan built = build(*module);
  ASSERT_EQ(built.plan.constants.size(), 1u);
  const rt::Tensor &c = built.plan.constants[0];
  EXPECT_EQ(c.typeString(), "bool[2, 3]");
  for (int i = 0; i < 6; ++i)
    EXPECT_EQ(c.dataAs<uint8_t>()[i], 1);
}

//===----------------------------------------------------------------------===//
// Through the executor
//===----------------------------------------------------------------------===//

// Fake kernels that check every buffer against the IR types of the op they
// stand for: element type, rank and each static dim (reversed: Halide's dim
// 0 is the last axis), then write nothing. Kernel i's expectations live in
// gExpected[i]; the function pointers are instantiated per index.
struct ExpectedBuffer {
  halide_type_t type;
  std::vector<int64_t> dims; // IR order, -1 for dynamic
};
std::vector<std::vector<ExpectedBuffer>> gExpected;
std::vector<std::string> gFailures;

template <size_t I> int checkingKernel(void **args) {
  const std::vector<ExpectedBuffer> &want = gExpected[I];
  for (size_t a = 0; a < want.size(); ++a) {
    auto *b = static_cast<halide_buffer_t *>(args[a]);
    bool ok = b && b->host && b->type == want[a].type &&
              b->dimensions == static_cast<int32_t>(want[a].dims.size());
    for (size_t d = 0; ok && d < want[a].dims.size(); ++d) {
      int64_t w = want[a].dims[want[a].dims.size() - 1 - d];
      ok = w < 0 || b->dim[d].extent == w;
    }
    if (!ok) {
      gFailures.push_back("kernel " + std::to_string(I) + " arg " +
                          std::to_string(a));
      return -1;
    }
  }
  return 0;
}

template <size_t... I>
std::vector<rt::KernelFn> checkingKernels(std::index_sequence<I...>) {
  return {&checkingKernel<I>...};
}

ExpectedBuffer expectedOf(mlir::Type type) {
  auto tensor = mlir::cast<mlir::RankedTensorType>(type);
  mlir::Type e = tensor.getElementType();
  ExpectedBuffer b{rt::halideTypeOf(e.isF32()         ? rt::DType::F32
                                    : e.isInteger(1)  ? rt::DType::Bool
                                    : e.isInteger(32) ? rt::DType::I32
                                                      : rt::DType::I64),
                   {}};
  for (int64_t d : tensor.getShape())
    b.dims.push_back(mlir::ShapedType::isDynamic(d) ? -1 : d);
  return b;
}

TEST_F(PlanBuilderTest, Gpt2DecodeRunsThroughTheExecutor) {
  auto module = parseFile("gpt2-tiny-2layer.mlir");
  ASSERT_TRUE(module);
  BuiltPlan built = build(*module);
  constexpr size_t kMaxKernels = 64;
  ASSERT_LE(built.plan.kernels.size(), kMaxKernels);
  gExpected.clear();
  gFailures.clear();
  for (mlir::Operation *op : built.kernelOps) {
    std::vector<ExpectedBuffer> want;
    for (mlir::Type t : op->getOperandTypes())
      want.push_back(expectedOf(t));
    for (mlir::Type t : op->getResultTypes())
      want.push_back(expectedOf(t));
    gExpected.push_back(want);
  }
  std::vector<rt::KernelFn> all =
      checkingKernels(std::make_index_sequence<kMaxKernels>());
  std::vector<rt::KernelFn> kernels(all.begin(),
                                    all.begin() + built.plan.kernels.size());

  rt::ParamTable table;
  for (const rt::ParamInfo &p : built.plan.params)
    table.push_back({p.name, p.shape, p.storedDType});
  rt::Expected<rt::WeightMap> weights = rt::randomWeights(table, 1);
  ASSERT_TRUE(weights.ok()) << weights.message();
  rt::Expected<rt::Executor> exec =
      rt::Executor::create(built.plan, kernels, weights.take());
  ASSERT_TRUE(exec.ok()) << exec.message();

  // batch 2, seq 3, past 5; the cache is [layers, batch, heads, past, d].
  rt::Tensor ids = *rt::Tensor::fromI64({2, 3}, {1, 2, 3, 4, 5, 6});
  rt::Tensor past = *rt::Tensor::zeros(rt::DType::F32, {2, 2, 4, 5, 16});
  rt::Expected<std::vector<rt::Tensor>> out =
      exec->run("decode", {ids, past, past});
  ASSERT_TRUE(out.ok()) << out.message();
  EXPECT_TRUE(gFailures.empty()) << gFailures.front();
  ASSERT_EQ(out->size(), 3u);
  EXPECT_EQ((*out)[0].typeString(), "f32[2, 3, 512]");
  EXPECT_EQ((*out)[1].typeString(), "f32[2, 2, 4, 8, 16]");
  EXPECT_EQ(exec->lastRunStats().steps, entry(built, "decode").steps.size());

  // The cache plus the new tokens must fit the 64 positions.
  rt::Tensor longPast = *rt::Tensor::zeros(rt::DType::F32, {2, 2, 4, 62, 16});
  out = exec->run("decode", {ids, longPast, longPast});
  ASSERT_FALSE(out.ok());
  EXPECT_CONTAINS(out.message(), "entry 'decode': positions index wpe.weight "
                                 "(64 rows) at ");
  EXPECT_CONTAINS(out.message(), ": needs seq + past <= 64, got 65");

  rt::Tensor badIds = *rt::Tensor::fromI32({1, 2}, {7, 512});
  out = exec->run("forward", {badIds});
  ASSERT_FALSE(out.ok());
  EXPECT_CONTAINS(out.message(), "entry 'forward': token id 512 at [0, 1] of "
                                 "input 'ids' is outside [0, 512) (ids index "
                                 "wte.weight at ");

  // Mismatched batch between ids and the cache.
  rt::Tensor otherBatch = *rt::Tensor::zeros(rt::DType::F32, {2, 3, 4, 5, 16});
  out = exec->run("decode", {ids, otherBatch, otherBatch});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.message(),
            "entry 'decode': input 'past_k': batch is 3 here (axis 1), but 2 "
            "in input 'ids' (axis 0); expected f32[2, batch, 4, past, 16], "
            "found f32[2, 3, 4, 5, 16]");
}

} // namespace
