//===- SessionTest.cpp - The compile session through its API -------------===//
//
// What tfc's commands do, done by a program that links only the session
// library: compile examples/tiny/bert-tiny.tfm, bind the fixture's weights,
// run it on the fixture's inputs and compare with the outputs PyTorch
// computed (tests/fixtures/bert_tiny.safetensors: input.*, expected.*; made
// by tests/fixtures/make_fixtures.py, not regenerated here). Then the
// errors: a bad model file gives an llvm::Error whose text carries
// file:line:col, and nothing is printed on stdout or stderr.
//
//===----------------------------------------------------------------------===//

#include "session/Compile.h"
#include "session/Inspect.h"
#include "session/Weights.h"

#include "runtime/Safetensors.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>

using namespace tfc;

namespace {

std::string sourcePath(const std::string &relative) {
  return std::string(TFC_SOURCE_ROOT) + "/" + relative;
}

session::CompileOptions bertTinyOptions() {
  session::CompileOptions options;
  options.model.path = sourcePath("examples/tiny/bert-tiny.tfm");
  options.cache.dir = TFC_SESSION_TEST_CACHE;
  return options;
}

/// The largest |a - b| over two f32 tensors of one shape.
double maxAbsError(const rt::Tensor &a, const rt::Tensor &b) {
  const float *x = a.dataAs<float>();
  const float *y = b.dataAs<float>();
  double worst = 0;
  for (int64_t i = 0; i < a.numElements(); ++i) {
    double error = std::fabs(static_cast<double>(x[i]) - y[i]);
    worst = std::isnan(error) ? INFINITY : std::max(worst, error);
  }
  return worst;
}

TEST(Session, CompilesRunsAndMatchesPyTorch) {
  std::string fixture = sourcePath("tests/fixtures/bert_tiny.safetensors");
  llvm::Expected<session::CompiledModel> model =
      session::compile(bertTinyOptions());
  ASSERT_TRUE(static_cast<bool>(model)) << llvm::toString(model.takeError());
  EXPECT_EQ(model->stage, session::Stage::Planned);
  // Every kernel but those a view may stand for (compiled when a step
  // needs one: none does here).
  std::vector<bool> viewOnly = rt::viewOnlyKernels(model->plan());
  size_t views = 0;
  for (size_t i = 0; i < model->kernels.size(); ++i) {
    EXPECT_EQ(model->kernels[i] == nullptr, bool(viewOnly[i])) << i;
    views += viewOnly[i];
  }
  EXPECT_GT(views, 0u);
  EXPECT_EQ(model->stats.deferred, views);
  EXPECT_EQ(model->stats.compiled + model->stats.cacheHits + views,
            model->plan().kernels.size());

  session::WeightSource source;
  source.path = fixture;
  std::vector<std::string> warnings;
  rt::Expected<rt::WeightMap> weights = session::loadWeights(
      model->plan(), source, &warnings, {"input.", "expected."});
  ASSERT_TRUE(weights.ok()) << weights.message();
  EXPECT_TRUE(warnings.empty()) << warnings.front();
  rt::Expected<rt::Executor> executor =
      rt::Executor::create(model->plan(), model->kernels, std::move(*weights),
                           session::executorOptions(*model));
  ASSERT_TRUE(executor.ok()) << executor.message();

  rt::Expected<rt::SafetensorsFile> file = rt::SafetensorsFile::open(fixture);
  ASSERT_TRUE(file.ok()) << file.message();
  llvm::Expected<const rt::PlanEntry *> entry = model->requireEntry("encode");
  ASSERT_TRUE(static_cast<bool>(entry)) << llvm::toString(entry.takeError());
  std::vector<rt::Tensor> inputs;
  for (const std::string &name : (*entry)->inputNames) {
    rt::Expected<rt::Tensor> input = file->tensor("input." + name);
    ASSERT_TRUE(input.ok()) << input.message();
    inputs.push_back(std::move(*input));
  }
  rt::Expected<std::vector<rt::Tensor>> outputs =
      executor->run("encode", inputs);
  ASSERT_TRUE(outputs.ok()) << outputs.message();
  ASSERT_EQ(outputs->size(), 2u);
  for (size_t i = 0; i < outputs->size(); ++i) {
    const std::string &name = (*entry)->outputNames[i];
    rt::Expected<rt::Tensor> expected = file->loadF32("expected." + name);
    ASSERT_TRUE(expected.ok()) << expected.message();
    const rt::Tensor &got = (*outputs)[i];
    ASSERT_EQ(got.shape(), expected->shape()) << name;
    // The tolerance of tests/lit/fixtures/bert-tiny.test (tfc check's).
    EXPECT_LE(maxAbsError(got, *expected), 1e-4) << name;
  }
}

/// A model file with the error `body` says, in a fresh temporary folder.
std::string writeModel(const std::string &name, const std::string &body) {
  llvm::SmallString<128> dir;
  EXPECT_FALSE(llvm::sys::fs::createUniqueDirectory("tfc-session", dir));
  std::string path = std::string(dir) + "/" + name;
  std::ofstream(path) << body;
  return path;
}

/// Runs `compile` with stdout and stderr captured; returns what it printed.
std::string printedBy(const std::function<void()> &compile) {
  testing::internal::CaptureStdout();
  testing::internal::CaptureStderr();
  compile();
  llvm::outs().flush();
  llvm::errs().flush();
  return testing::internal::GetCapturedStdout() +
         testing::internal::GetCapturedStderr();
}

TEST(Session, BadModelIsAnErrorWithItsLocationAndPrintsNothing) {
  std::string path = writeModel("unknown-name.tfm",
                                "entry f(x: f32[batch, seq]) {\n"
                                "  return x + bias\n"
                                "}\n");
  session::CompileOptions options;
  options.model.path = path;
  std::string rendered;
  bool isDiagnostics = false;
  std::string printed = printedBy([&] {
    llvm::Expected<session::CompiledModel> model = session::compile(options);
    ASSERT_FALSE(static_cast<bool>(model));
    llvm::handleAllErrors(
        model.takeError(),
        [&](const session::DiagnosticsError &diags) {
          isDiagnostics = true;
          rendered = diags.text();
        },
        [&](const llvm::ErrorInfoBase &other) { rendered = other.message(); });
  });
  EXPECT_EQ(printed, "");
  EXPECT_TRUE(isDiagnostics) << rendered;
  EXPECT_NE(rendered.find(path + ":2:14: error: unknown name 'bias'"),
            std::string::npos)
      << rendered;
  llvm::sys::fs::remove(path);
}

TEST(Session, EveryStageReportsErrorsWithoutPrinting) {
  // A syntax error stops the front half at its first stage; a missing file
  // names the file; an unknown pass is refused before any pass runs.
  std::string syntax = writeModel("syntax.tfm", "entry f(x: f32[4]) {\n"
                                                "  return x +\n"
                                                "}\n");
  std::vector<std::pair<session::CompileOptions, std::string>> cases(3);
  cases[0].first.model.path = syntax;
  cases[0].second = syntax + ":3:1: error:";
  cases[1].first.model.path = syntax + ".missing";
  cases[1].second = syntax + ".missing";
  cases[2].first = bertTinyOptions();
  cases[2].first.pipeline.disabledPasses = {"no-such-pass"};
  cases[2].second = "--disable-pass: unknown pass 'no-such-pass'";
  for (const auto &[options, expected] : cases) {
    std::string message;
    std::string printed = printedBy([&] {
      llvm::Expected<session::CompiledModel> model =
          session::openUpTo(options, session::Stage::Planned);
      ASSERT_FALSE(static_cast<bool>(model));
      message = llvm::toString(model.takeError());
    });
    EXPECT_EQ(printed, "");
    EXPECT_NE(message.find(expected), std::string::npos) << message;
  }
  llvm::sys::fs::remove(syntax);
}

TEST(Session, FrontHalfStopsAtEachStage) {
  // dump and info stop early: no IR when parsed, no plan before planning,
  // and FLOPs counted on the elaborated IR with the dims bound.
  session::CompileOptions options = bertTinyOptions();
  llvm::Expected<session::CompiledModel> parsed =
      session::openUpTo(options, session::Stage::Parsed);
  ASSERT_TRUE(static_cast<bool>(parsed)) << llvm::toString(parsed.takeError());
  EXPECT_FALSE(parsed->session->modules.empty());
  EXPECT_FALSE(parsed->session->model.module);
  EXPECT_TRUE(parsed->plan().kernels.empty());

  options.dimValues = {{"batch", 2}, {"seq", 7}};
  llvm::Expected<session::CompiledModel> elaborated =
      session::openUpTo(options, session::Stage::Elaborated);
  ASSERT_TRUE(static_cast<bool>(elaborated))
      << llvm::toString(elaborated.takeError());
  std::vector<session::EntryFlops> flops = session::entryFlops(*elaborated);
  ASSERT_EQ(flops.size(), 1u);
  EXPECT_EQ(flops[0].entry, "encode");
  EXPECT_EQ(flops[0].flops.dynamicOps, 0);
  // 2 * M * N * K per product, B*S = 14 rows, d 64, d_ff 128, 2 layers:
  // Q, K, V, out (4 * 2*14*64*64) + FFN (2 * 2*14*64*128) + scores and
  // context (2 * 2*2*7*7*64), per layer, and the pooler (2*2*64*64).
  double perLayer = 4 * 2 * 14 * 64 * 64 + 2 * 2 * 14 * 64 * 128 +
                    2 * 2 * 2 * 7 * 7 * 64;
  EXPECT_DOUBLE_EQ(flops[0].flops.matmul, 2 * perLayer + 2 * 2 * 64 * 64);

  ASSERT_FALSE(static_cast<bool>(session::advance(
      *elaborated, options, session::Stage::Planned)));
  EXPECT_EQ(elaborated->stage, session::Stage::Planned);
  EXPECT_FALSE(elaborated->plan().kernels.empty());
  llvm::Expected<std::string> text = session::kernelText(
      *elaborated, 0, session::KernelText::Halide, session::KernelTarget::Host);
  ASSERT_TRUE(static_cast<bool>(text)) << llvm::toString(text.takeError());
  EXPECT_NE(text->find("func " + elaborated->plan().kernels[0].name),
            std::string::npos)
      << *text;
}

// Head split and merge as the executor's strided views (PlanStep::
// StridedView): a slice or transpose is bound as a view where it reads its
// input densely, or where only kernels read its result (then also a strided
// one), else its kernel copies; a result whose one use is a transpose is
// laid out for it (PlanStep::layout). Either way the outputs equal those of
// the kernels alone on row-major buffers (ExecutorOptions::stridedViews =
// false), bit for bit. Outputs that are views are returned as dense copies.
TEST(Session, StridedViewsEqualTheKernels) {
  std::string path = writeModel("views.tfm", R"(model views
config {
  h = 2
}
dim seq <= 16
entry f(x: f32[batch, seq, 24]) {
  a, b, c = split(x, 3, -1)
  q = split_heads(a, h)
  return q: q, s: b, m: merge_heads(q * split_heads(c, h)), t: transpose(q, 2, 3)
}
)");
  session::CompileOptions options;
  options.model.path = path;
  options.cache.dir = TFC_SESSION_TEST_CACHE;
  llvm::Expected<session::CompiledModel> model = session::compile(options);
  ASSERT_TRUE(static_cast<bool>(model)) << llvm::toString(model.takeError());
  // (batch, seq, steps bound as views). One row: the 3 slices, the 2 head
  // splits' transposes and the merge's (the last transpose moves the
  // innermost axis: always a kernel). More rows: the slices of whole heads
  // of reshape(x) (tfc-simplify) and c's head split are strided views read
  // only by kernels; the merge reads the product, laid out for it, densely;
  // `s` (returned) and q's head split (returned, and read by a transpose)
  // would be strided: their kernels copy.
  struct Case {
    int64_t batch, seq;
    size_t views;
  };
  for (Case c : {Case{1, 1, 6}, Case{2, 1, 4}, Case{2, 3, 4}}) {
    int64_t seq = c.seq;
    std::vector<float> values(static_cast<size_t>(c.batch * seq * 24));
    for (size_t i = 0; i < values.size(); ++i)
      values[i] = static_cast<float>(i) * 0.25f - 7.0f;
    rt::Expected<rt::Tensor> x =
        rt::Tensor::fromF32({c.batch, seq, 24}, values);
    ASSERT_TRUE(x.ok()) << x.message();
    std::vector<std::vector<rt::Tensor>> results;
    std::vector<size_t> views;
    for (bool strided : {true, false}) {
      rt::ExecutorOptions executorOptions = session::executorOptions(*model);
      executorOptions.stridedViews = strided;
      rt::Expected<rt::Executor> executor = rt::Executor::create(
          model->plan(), model->kernels, rt::WeightMap(), executorOptions);
      ASSERT_TRUE(executor.ok()) << executor.message();
      rt::Expected<std::vector<rt::Tensor>> out = executor->run("f", {*x});
      ASSERT_TRUE(out.ok()) << out.message();
      results.push_back(std::move(*out));
      views.push_back(executor->lastRunStats().views);
    }
    EXPECT_EQ(views[0], c.views) << "batch " << c.batch << ", seq " << seq;
    EXPECT_EQ(views[1], 0u);
    ASSERT_EQ(results[0].size(), 4u);
    for (size_t i = 0; i < results[0].size(); ++i) {
      const rt::Tensor &a = results[0][i], &b = results[1][i];
      ASSERT_EQ(a.shape(), b.shape()) << i;
      EXPECT_EQ(std::memcmp(a.data(), b.data(), a.byteSize()), 0)
          << "output " << i << " at seq " << seq;
    }
  }
}

// The head split and merge of BERT's and GPT-2's attention at prefill bind
// as views: per layer the 3 slices of whole heads of the merged Q/K/V
// projection, their 3 transposes and the merge's transpose of the
// attention result (laid out for it); the reshapes are views too, so no
// data-movement kernel runs in a layer. The outputs equal the kernels'
// (row-major buffers) bit for bit.
TEST(Session, HeadSplitAndMergeAreViewsAtPrefill) {
  struct Case {
    std::string model, entry;
    size_t views; // 2 layers of 7
    size_t kernelCalls;
  };
  // The kernels that run. BERT-tiny: gather, positions, gather, add,
  // add_layer_norm; per layer the Q/K/V linear, attention, the output
  // linear, add_layer_norm, the FFN's two linears, add_layer_norm (7); then
  // the pooler's slice (strided at batch 2 and read by a reshape: its
  // kernel copies), linear and tanh. GPT-2-tiny: gather, positions, gather;
  // 7 per layer (the embeddings' add in the first add_layer_norm); the
  // final add_layer_norm and the LM head's matmul.
  for (const Case &c : {Case{"examples/tiny/bert-tiny.tfm", "encode", 14,
                             5 + 2 * 7 + 3},
                        Case{"examples/tiny/gpt2-tiny.tfm", "forward", 14,
                             3 + 2 * 7 + 2}}) {
    session::CompileOptions options;
    options.model.path = sourcePath(c.model);
    options.cache.dir = TFC_SESSION_TEST_CACHE;
    llvm::Expected<session::CompiledModel> model = session::compile(options);
    ASSERT_TRUE(static_cast<bool>(model)) << llvm::toString(model.takeError());
    llvm::Expected<const rt::PlanEntry *> entry =
        model->requireEntry(c.entry);
    ASSERT_TRUE(static_cast<bool>(entry)) << llvm::toString(entry.takeError());
    std::vector<rt::Tensor> inputs;
    for (int32_t id : (*entry)->inputs) {
      const rt::PlanValue &value = (*entry)->values[static_cast<size_t>(id)];
      std::vector<int64_t> shape = {2, 5};
      ASSERT_EQ(value.shape.size(), 2u) << c.model;
      std::vector<int32_t> data(10);
      for (size_t i = 0; i < data.size(); ++i)
        data[i] = value.dtype == rt::DType::Bool
                      ? (i % 5 != 4 || i < 5)
                      : static_cast<int32_t>(7 * i + 3) % 50;
      rt::Expected<rt::Tensor> t =
          value.dtype == rt::DType::Bool
              ? rt::Tensor::allocate(rt::DType::Bool, shape)
              : rt::Tensor::fromI32(shape, data);
      ASSERT_TRUE(t.ok()) << t.message();
      if (value.dtype == rt::DType::Bool)
        for (size_t i = 0; i < data.size(); ++i)
          t->dataAs<uint8_t>()[i] = static_cast<uint8_t>(data[i]);
      inputs.push_back(std::move(*t));
    }
    // The view kernels were left for a step that needs one: the run
    // without views compiles those of the entry.
    std::vector<size_t> deferred = {model->stats.deferred};
    session::WeightSource random;
    random.random = true;
    random.seed = 3;
    std::vector<std::vector<rt::Tensor>> results;
    std::vector<rt::RunStats> stats;
    for (bool strided : {true, false}) {
      rt::Expected<rt::WeightMap> weights =
          session::loadWeights(model->plan(), random);
      ASSERT_TRUE(weights.ok()) << weights.message();
      rt::ExecutorOptions executorOptions = session::executorOptions(*model);
      executorOptions.stridedViews = strided;
      rt::Expected<rt::Executor> executor =
          rt::Executor::create(model->plan(), model->kernels,
                               std::move(*weights), executorOptions);
      ASSERT_TRUE(executor.ok()) << executor.message();
      rt::Expected<std::vector<rt::Tensor>> out =
          executor->run(c.entry, inputs);
      ASSERT_TRUE(out.ok()) << out.message();
      results.push_back(std::move(*out));
      stats.push_back(executor->lastRunStats());
      deferred.push_back(model->stats.deferred);
    }
    EXPECT_EQ(stats[0].views, c.views) << c.model;
    EXPECT_EQ(stats[1].views, 0u) << c.model;
    EXPECT_GT(deferred[0], 0u) << c.model;
    EXPECT_LT(deferred[2], deferred[1]) << c.model;
    EXPECT_EQ(stats[0].kernelCalls, c.kernelCalls) << c.model;
    ASSERT_EQ(results[0].size(), results[1].size());
    for (size_t i = 0; i < results[0].size(); ++i) {
      const rt::Tensor &a = results[0][i], &b = results[1][i];
      ASSERT_EQ(a.shape(), b.shape()) << c.model << " output " << i;
      EXPECT_EQ(std::memcmp(a.data(), b.data(), a.byteSize()), 0)
          << c.model << " output " << i;
    }
  }
}

// A kernel left for a step that needs one (CompileOptions::
// deferViewKernels) is compiled once, by the first such step, with the
// cache settings of the model's compile; when it cannot be compiled, the run
// fails naming the step's kernel and the reason.
TEST(Session, DeferredViewKernelsCompileOnceWhenNeeded) {
  std::string path = writeModel("deferred.tfm", R"(model deferred
entry f(x: f32[batch, 4, 6]) {
  return t: transpose(x * 2.0, 0, 1)
}
)");
  // With the disk cache, and without (a temporary folder per compile).
  for (bool cached : {true, false}) {
    SCOPED_TRACE(cached ? "disk cache" : "no cache");
    session::CompileOptions options;
    options.cache.enabled = cached;
    options.model.path = path;
    options.cache.dir = TFC_SESSION_TEST_CACHE;
    llvm::Expected<session::CompiledModel> model = session::compile(options);
    ASSERT_TRUE(static_cast<bool>(model)) << llvm::toString(model.takeError());
    ASSERT_EQ(model->stats.deferred, 1u);
    // Moved: the executor still finds the model to compile in.
    session::CompiledModel moved = std::move(*model);
    rt::Expected<rt::Tensor> x = rt::Tensor::fromF32(
        {1, 4, 6},
        std::vector<float>{0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11,
                           12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23});
    ASSERT_TRUE(x.ok()) << x.message();

    rt::ExecutorOptions failing = session::executorOptions(moved);
    failing.stridedViews = false;
    failing.compileKernel = [](size_t) -> rt::Expected<rt::KernelFn> {
      return rt::Status::error("no compiler here");
    };
    rt::Expected<rt::Executor> broken =
        rt::Executor::create(moved.plan(), moved.kernels, {}, failing);
    ASSERT_TRUE(broken.ok()) << broken.message();
    rt::Expected<std::vector<rt::Tensor>> none = broken->run("f", {*x});
    ASSERT_FALSE(none.ok());
    EXPECT_NE(none.message().find("tfc.transpose"), std::string::npos)
        << none.message();
    EXPECT_NE(none.message().find("could not be compiled when needed: no "
                                  "compiler here"),
              std::string::npos)
        << none.message();

    rt::ExecutorOptions counted = session::executorOptions(moved);
    counted.stridedViews = false;
    int calls = 0;
    counted.compileKernel = [&calls,
                             compile = counted.compileKernel](size_t index) {
      ++calls;
      return compile(index);
    };
    rt::Expected<rt::Executor> executor =
        rt::Executor::create(moved.plan(), moved.kernels, {}, counted);
    ASSERT_TRUE(executor.ok()) << executor.message();
    for (int run = 0; run < 2; ++run) {
      rt::Expected<std::vector<rt::Tensor>> out = executor->run("f", {*x});
      ASSERT_TRUE(out.ok()) << out.message();
      // t[i, 0, j] = 2 x[0, i, j]
      EXPECT_EQ((*out)[0].typeString(), "f32[4, 1, 6]");
      EXPECT_EQ((*out)[0].dataAs<float>()[1], 2.0f);
      EXPECT_EQ((*out)[0].dataAs<float>()[23], 46.0f);
    }
    EXPECT_EQ(calls, 1);
    EXPECT_EQ(moved.stats.deferred, 0u);
  }
}

} // namespace
