//===- ExecutorTest.cpp - Running plans with fake kernels -----------------===//

#include "runtime/Executor.h"

#include "PlanTestUtil.h"

#include <gtest/gtest.h>

using namespace tfc::rt;
using namespace tfc::rt::test;

namespace {

#define EXPECT_CONTAINS(haystack, needle)                                      \
  EXPECT_NE(std::string(haystack).find(needle), std::string::npos)             \
      << "message: " << (haystack) << "\nexpected to contain: " << (needle)

Tensor boolTensor(Shape shape, const std::vector<uint8_t> &values) {
  Tensor t = *Tensor::zeros(DType::Bool, shape);
  for (size_t i = 0; i < values.size(); ++i)
    t.dataAs<uint8_t>()[i] = values[i];
  return t;
}

Executor makeExecutor(Plan plan = makeToyPlan(),
                      std::vector<KernelFn> kernels = toyKernels()) {
  Expected<Executor> e =
      Executor::create(plan, std::move(kernels), toyWeights());
  EXPECT_TRUE(e.ok()) << e.message();
  return e.take();
}

std::string runError(Executor &e, const std::string &entry,
                     const std::vector<Tensor> &inputs) {
  Expected<std::vector<Tensor>> out = e.run(entry, inputs);
  EXPECT_FALSE(out.ok());
  return out.ok() ? "" : out.message();
}

TEST(ExecutorTest, RunsTheForwardEntry) {
  Executor e = makeExecutor();
  Tensor ids = *Tensor::fromI32({2, 3}, {1, 2, 3, 9, 0, 4});
  Tensor mask = boolTensor({2, 3}, {1, 1, 1, 1, 0, 1});
  Expected<std::vector<Tensor>> out = e.run("forward", {ids, mask});
  ASSERT_TRUE(out.ok()) << out.message();
  ASSERT_EQ(out->size(), 1u);
  const Tensor &h = (*out)[0];
  EXPECT_EQ(h.typeString(), "f32[2, 3, 4]");
  // Row (1, 0) is id 9 -> 2 * [9, 9.25, 9.5, 9.75]; (1, 1) is masked out.
  EXPECT_EQ(h.dataAs<float>()[12], 18.0f);
  EXPECT_EQ(h.dataAs<float>()[15], 19.5f);
  EXPECT_EQ(h.dataAs<float>()[16], 0.0f);
  EXPECT_EQ(h.dataAs<float>()[4], 4.0f);
  EXPECT_EQ(e.lastRunStats().steps, 3u);
}

TEST(ExecutorTest, SymbolicSumsAndDimChecks) {
  Executor e = makeExecutor();
  Tensor past = *Tensor::fromF32({1, 2, 4}, {0, 1, 2, 3, 4, 5, 6, 7});
  Tensor x = *Tensor::fromF32({1, 1, 4}, {8, 9, 10, 11});
  Expected<std::vector<Tensor>> out = e.run("extend", {past, x});
  ASSERT_TRUE(out.ok()) << out.message();
  EXPECT_EQ((*out)[0].typeString(), "f32[1, 3, 4]"); // past + seq
  EXPECT_EQ((*out)[0].dataAs<float>()[11], 11.0f);
  EXPECT_EQ((*out)[1].typeString(), "f32[1, 1, 4]");

  // An empty cache is fine; an empty cache and an empty step is not.
  Tensor empty = *Tensor::zeros(DType::F32, {1, 0, 4});
  EXPECT_TRUE(e.run("extend", {empty, x}).ok());
  EXPECT_EQ(runError(e, "extend", {empty, empty}),
            "entry 'extend': slice [0, 1) of axis 1 at toy.tfm:9:7: needs "
            "past + seq >= 1, got 0");
}

/// k1_mul's stand-in for one row: the product, negated (a kernel that
/// computes something else, so the test sees which one ran).
int fakeMulOneRow(void **args) {
  if (int rc = fakeMul(args))
    return rc;
  halide_buffer_t *out = static_cast<halide_buffer_t *>(args[2]);
  if (out->dim[1].extent != 1)
    return -3; // compiled for seq = 1 only
  for (int64_t i = 0; i < out->dim[0].extent * out->dim[2].extent; ++i)
    reinterpret_cast<float *>(out->host)[i] *= -1.0f;
  return 0;
}

TEST(ExecutorTest, SizeVariantRunsForItsSize) {
  // forward's k1_mul gets a variant for seq (axis 1 of its input 0) = 1.
  Plan plan = makeToyPlan();
  plan.kernels.push_back({"k5_mul_one_row", "tfc.mul",
                          KernelFamily::Elementwise,
                          "tfc.mul (tensor<?x1x4xf32>, tensor<f32>)", 2, 1});
  PlanStep &mul = plan.entries[0].steps[1];
  ASSERT_EQ(mul.kernel, 1);
  mul.variant = {5, 0, 1, 1};
  ASSERT_TRUE(verifyPlan(plan).ok()) << verifyPlan(plan).message();
  std::vector<KernelFn> kernels = toyKernels();
  kernels.push_back(fakeMulOneRow);
  Executor e = makeExecutor(plan, kernels);

  Tensor mask1 = boolTensor({1, 1}, {1});
  Expected<std::vector<Tensor>> one =
      e.run("forward", {*Tensor::fromI32({1, 1}, {3}), mask1});
  ASSERT_TRUE(one.ok()) << one.message();
  EXPECT_EQ((*one)[0].dataAs<float>()[1], -6.5f); // -(2 * 3.25)
  Tensor mask2 = boolTensor({1, 2}, {1, 1});
  Expected<std::vector<Tensor>> two =
      e.run("forward", {*Tensor::fromI32({1, 2}, {3, 4}), mask2});
  ASSERT_TRUE(two.ok()) << two.message();
  EXPECT_EQ((*two)[0].dataAs<float>()[1], 6.5f);
  EXPECT_EQ((*two)[0].dataAs<float>()[4], 8.0f);

  // The entry needs both kernels; a variant out of range does not verify.
  kernels[5] = nullptr;
  Expected<Executor> missing = Executor::create(plan, kernels, toyWeights());
  ASSERT_TRUE(missing.ok()) << missing.message(); // "extend" can still run
  EXPECT_CONTAINS(runError(*missing, "forward",
                           {*Tensor::fromI32({1, 1}, {3}), mask1}),
                  "forward");
  mul.variant.axis = 3;
  EXPECT_CONTAINS(verifyPlan(plan).message(), "variant axis 3");
  mul.variant = {6, 0, 1, 1};
  EXPECT_CONTAINS(verifyPlan(plan).message(), "variant kernel 6");
}

TEST(ExecutorTest, ConvertsCompatibleInputTypes) {
  Executor e = makeExecutor();
  Tensor ids64 = *Tensor::fromI64({1, 2}, {3, 4});
  Tensor maskI32 = *Tensor::fromI32({1, 2}, {1, 0});
  Expected<std::vector<Tensor>> out = e.run("forward", {ids64, maskI32});
  ASSERT_TRUE(out.ok()) << out.message();
  EXPECT_EQ((*out)[0].dataAs<float>()[0], 6.0f);
  EXPECT_EQ((*out)[0].dataAs<float>()[4], 0.0f);

  Tensor maskU8 = *Tensor::zeros(DType::U8, {1, 2});
  EXPECT_TRUE(e.run("forward", {ids64, maskU8}).ok());

  Tensor huge = *Tensor::fromI64({1, 2}, {3, 5000000000LL});
  EXPECT_EQ(runError(e, "forward", {huge, maskI32}),
            "entry 'forward': input 'ids': value 5000000000 at [0, 1] does "
            "not fit in i32");
  Tensor maskTwo = *Tensor::fromI64({1, 2}, {1, 2});
  EXPECT_EQ(runError(e, "forward", {ids64, maskTwo}),
            "entry 'forward': input 'mask': value 2 at [0, 1] is not 0 or 1 "
            "(the input is bool)");
  Tensor idsF = *Tensor::fromF32({1, 2}, {3, 4});
  EXPECT_EQ(runError(e, "forward", {idsF, maskI32}),
            "entry 'forward': input 'ids': expected i32[batch, seq], found "
            "f32[1, 2]");
}

TEST(ExecutorTest, ReportsShapeErrorsByName) {
  Executor e = makeExecutor();
  Tensor ids = *Tensor::fromI32({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor mask = boolTensor({2, 3}, {1, 1, 1, 1, 1, 1});

  EXPECT_EQ(runError(e, "forward", {ids}),
            "entry 'forward': takes 2 inputs (ids, mask), but 1 were given");
  EXPECT_EQ(runError(e, "backward", {ids, mask}),
            "the model has no entry 'backward' (it has: forward, extend)");

  Tensor rank3 = *Tensor::zeros(DType::I32, {2, 3, 4});
  EXPECT_EQ(runError(e, "forward", {rank3, mask}),
            "entry 'forward': input 'ids': expected i32[batch, seq], found "
            "i32[2, 3, 4]");

  Tensor shortMask = boolTensor({2, 5}, {});
  EXPECT_EQ(runError(e, "forward", {ids, shortMask}),
            "entry 'forward': input 'mask': seq is 5 here (axis 1), but 3 in "
            "input 'ids' (axis 1); expected bool[batch, seq], found "
            "bool[2, 5]");

  // seq is declared <= 8.
  Tensor longIds = *Tensor::zeros(DType::I32, {1, 9});
  Tensor longMask = boolTensor({1, 9}, {});
  EXPECT_EQ(runError(e, "forward", {longIds, longMask}),
            "entry 'forward': input 'ids': seq = 9 (axis 1) exceeds its bound "
            "8 (dim seq <= 8)");

  // Static dims.
  Tensor past = *Tensor::zeros(DType::F32, {1, 2, 5});
  Tensor x = *Tensor::zeros(DType::F32, {1, 1, 4});
  EXPECT_EQ(runError(e, "extend", {past, x}),
            "entry 'extend': input 'past': expected f32[batch, past, 4], "
            "found f32[1, 2, 5]");
  EXPECT_EQ(runError(e, "extend", {Tensor(), x}),
            "entry 'extend': input 'past': expected f32[batch, past, 4], "
            "found a null tensor");
}

TEST(ExecutorTest, ChecksTokenIdsBeforeRunning) {
  int calls = 0;
  static int *counter;
  counter = &calls;
  std::vector<KernelFn> kernels = toyKernels();
  kernels[0] = [](void **args) {
    ++*counter;
    return fakeGather(args);
  };
  Executor e = makeExecutor(makeToyPlan(), kernels);
  Tensor mask = boolTensor({2, 4}, {1, 1, 1, 1, 1, 1, 1, 1});
  Tensor ids = *Tensor::fromI32({2, 4}, {0, 1, 2, 3, 4, 5, 6, 10});
  EXPECT_EQ(runError(e, "forward", {ids, mask}),
            "entry 'forward': token id 10 at [1, 3] of input 'ids' is outside "
            "[0, 10) (ids index wte)");
  Tensor negative = *Tensor::fromI64({2, 4}, {0, 1, -1, 3, 4, 5, 6, 7});
  EXPECT_CONTAINS(runError(e, "forward", {negative, mask}),
                  "token id -1 at [0, 2] of input 'ids' is outside [0, 10)");
  EXPECT_EQ(calls, 0);
}

TEST(ExecutorTest, KernelFailureNamesTheStep) {
  std::vector<KernelFn> kernels = toyKernels();
  kernels[1] = [](void **) { return -17; };
  Executor e = makeExecutor(makeToyPlan(), kernels);
  Tensor ids = *Tensor::fromI32({1, 1}, {1});
  Tensor mask = boolTensor({1, 1}, {1});
  EXPECT_EQ(runError(e, "forward", {ids, mask}),
            "toy.tfm:4:5: entry 'forward': kernel 'k1_mul' (tfc.mul "
            "(tensor<?x?x4xf32>, tensor<f32>)) failed with error code -17");
  // The executor is still usable after a failure.
  std::vector<KernelFn> good = toyKernels();
  Executor ok = makeExecutor(makeToyPlan(), good);
  EXPECT_TRUE(ok.run("forward", {ids, mask}).ok());

  // The Halide runtime's message, when a hook provides it.
  ExecutorOptions options;
  options.kernelErrorMessage = [] {
    return std::string("Input buffer b1 has type uint8 but type of the "
                       "buffer passed in is float32");
  };
  Expected<Executor> withMessage =
      Executor::create(makeToyPlan(), kernels, toyWeights(), options);
  ASSERT_TRUE(withMessage.ok());
  EXPECT_CONTAINS(runError(*withMessage, "forward", {ids, mask}),
                  "failed with error code -17: Input buffer b1 has type "
                  "uint8 but type of the buffer passed in is float32");
}

TEST(ExecutorTest, ReleasedTempsAreFreed) {
  Tensor ids = *Tensor::zeros(DType::I32, {4, 8});
  Tensor mask = boolTensor({4, 8}, {});
  const size_t temp = 4 * 8 * 4 * sizeof(float);

  Executor e = makeExecutor();
  ASSERT_TRUE(e.run("forward", {ids, mask}).ok());
  // x, y, z live one after another: at most two at once.
  EXPECT_EQ(e.lastRunStats().peakTempBytes, 2 * temp);

  Plan keepAll = makeToyPlan();
  for (PlanStep &step : keepAll.entries[0].steps)
    step.release.clear();
  Executor k = makeExecutor(keepAll);
  ASSERT_TRUE(k.run("forward", {ids, mask}).ok());
  EXPECT_EQ(k.lastRunStats().peakTempBytes, 3 * temp);
}

/// The hosts of the outputs fakeDoubleWeight wrote, in call order.
std::vector<const void *> gDoubledInto;

/// out = 2 * w over f32[16] (a weight-only step: the prologue runs it).
int fakeDoubleWeight(void **args) {
  halide_buffer_t *w = arg(args, 0), *out = arg(args, 1);
  if (!isType(w, halide_type_float, 32, 1) || elements(w) != elements(out))
    return -1;
  for (int64_t i = 0; i < elements(w); ++i)
    reinterpret_cast<float *>(out->host)[i] =
        2.0f * reinterpret_cast<const float *>(w->host)[i];
  gDoubledInto.push_back(out->host);
  return 0;
}

/// out = x + y over f32[16].
int fakeAdd(void **args) {
  halide_buffer_t *x = arg(args, 0), *y = arg(args, 1), *out = arg(args, 2);
  for (int64_t i = 0; i < elements(out); ++i)
    reinterpret_cast<float *>(out->host)[i] =
        reinterpret_cast<const float *>(x->host)[i] +
        reinterpret_cast<const float *>(y->host)[i];
  return 0;
}

/// apply(x: f32[16]) = x + 2a + 2b, where 2a and 2b are weight-only steps.
Plan makeProloguePlan() {
  using K = PlanValue::Kind;
  Plan plan;
  plan.modelName = "prologue";
  plan.kernels = {{"k0_double", "tfc.mul", KernelFamily::Elementwise,
                   "tfc.mul (tensor<16xf32>, 2)", 1, 1},
                  {"k1_add", "tfc.add", KernelFamily::Elementwise,
                   "tfc.add (tensor<16xf32>, tensor<16xf32>)", 2, 1}};
  plan.params = {{"a", {16}, DType::F32}, {"b", {16}, DType::F32}};
  PlanEntry entry;
  entry.name = "apply";
  entry.values = {
      makeValue(K::Input, DType::F32, {lit(16)}, "", 0), // 0 x
      makeValue(K::Param, DType::F32, {lit(16)}, "a"),   // 1
      makeValue(K::Param, DType::F32, {lit(16)}, "b"),   // 2
      makeValue(K::Temp, DType::F32, {lit(16)}),         // 3 2a
      makeValue(K::Temp, DType::F32, {lit(16)}),         // 4 2b
      makeValue(K::Temp, DType::F32, {lit(16)}),         // 5 x + 2a
      makeValue(K::Temp, DType::F32, {lit(16)}),         // 6 + 2b
  };
  entry.inputs = {0};
  entry.inputNames = {"x"};
  entry.outputs = {6};
  entry.outputNames = {"y"};
  entry.steps = {{0, {1}, {3}, {}, "p.tfm:1:1"},
                 {0, {2}, {4}, {}, "p.tfm:2:1"},
                 {1, {0, 3}, {5}, {}, "p.tfm:3:1"},
                 {1, {5, 4}, {6}, {5}, "p.tfm:4:1"}};
  plan.entries.push_back(entry);
  return plan;
}

TEST(ExecutorTest, PrologueFreesWeightsAndReusesTheirBlocks) {
  Plan plan = makeProloguePlan();
  ASSERT_TRUE(verifyPlan(plan).ok()) << verifyPlan(plan).message();
  Tensor a = *Tensor::fromF32({16}, std::vector<float>(16, 1.0f));
  Tensor b = *Tensor::fromF32({16}, std::vector<float>(16, 10.0f));
  const void *aBlock = a.data();
  Tensor bCopy = b; // The caller keeps b: its block must not be reused.
  WeightMap weights; // (An initializer list would copy the tensors.)
  weights.emplace("a", std::move(a));
  weights.emplace("b", std::move(b));
  gDoubledInto.clear();
  Expected<Executor> e = Executor::create(plan, {fakeDoubleWeight, fakeAdd},
                                          std::move(weights));
  ASSERT_TRUE(e.ok()) << e.message();
  // 2a went to a new block; a, read for the last time, gave its block to 2b.
  ASSERT_EQ(gDoubledInto.size(), 2u);
  EXPECT_NE(gDoubledInto[0], aBlock);
  EXPECT_EQ(gDoubledInto[1], aBlock);
  // The executor let go of b, which only the prologue read.
  EXPECT_FALSE(bCopy.storageShared());
  Expected<std::vector<Tensor>> y =
      e->run("apply", {*Tensor::fromF32({16}, std::vector<float>(16, 0.5f))});
  ASSERT_TRUE(y.ok()) << y.message();
  EXPECT_EQ((*y)[0].dataAs<float>()[15], 22.5f); // 0.5 + 2 + 20
}

TEST(ExecutorTest, WeightsAreCheckedAtCreation) {
  WeightMap bad = {{"wte", *Tensor::zeros(DType::F32, {10, 5})}};
  Expected<Executor> e = Executor::create(makeToyPlan(), toyKernels(), bad);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.message(), "the weights do not match the model (1 problem):\n"
                         "  tensor 'wte': expected shape [10, 4], found "
                         "[10, 5]");

  e = Executor::create(makeToyPlan(), toyKernels(), {});
  ASSERT_FALSE(e.ok());
  EXPECT_CONTAINS(e.message(), "missing tensor 'wte' (expected f32[10, 4])");

  WeightMap wrongType = {{"wte", *Tensor::zeros(DType::F16, {10, 4})}};
  e = Executor::create(makeToyPlan(), toyKernels(), wrongType);
  ASSERT_FALSE(e.ok());
  EXPECT_CONTAINS(e.message(), "tensor 'wte': expected dtype f32, found f16");
}

TEST(ExecutorTest, KernelsAndPlanAreCheckedAtCreation) {
  std::vector<KernelFn> few = toyKernels();
  few.pop_back();
  Expected<Executor> e = Executor::create(makeToyPlan(), few, toyWeights());
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.message(), "the plan has 5 kernels, but 4 were given");

  // Kernels may be missing for entries that will not run (a caller that
  // compiled only what it needs); running such an entry is an error.
  std::vector<KernelFn> partial = toyKernels();
  partial[2] = nullptr; // forward's mask kernel: only 'extend' can run
  e = Executor::create(makeToyPlan(), partial, toyWeights());
  ASSERT_TRUE(e.ok()) << e.message();
  EXPECT_EQ(runError(*e, "forward", {}),
            "entry 'forward': its kernels were not compiled (the executor "
            "was created for other entries)");
  e = Executor::create(makeToyPlan(), std::vector<KernelFn>(5, nullptr),
                       toyWeights());
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.message(), "no entry of the model can run: kernels are null");

  Plan broken = makeToyPlan();
  broken.entries[0].steps[1].inputs = {6, 3}; // z before it is written
  e = Executor::create(broken, toyKernels(), toyWeights());
  ASSERT_FALSE(e.ok());
  EXPECT_CONTAINS(e.message(), "step 1: reads value 6");
}

TEST(ExecutorTest, OutputsThatAreModelTensorsAreCopies) {
  Plan plan = makeToyPlan();
  PlanEntry &fwd = plan.entries[0];
  fwd.outputs = {6, 2};
  fwd.outputNames = {"hidden", "table"};
  Executor e = makeExecutor(plan);
  Tensor ids = *Tensor::fromI32({1, 1}, {1});
  Tensor mask = boolTensor({1, 1}, {1});
  Expected<std::vector<Tensor>> out = e.run("forward", {ids, mask});
  ASSERT_TRUE(out.ok()) << out.message();
  Tensor table = (*out)[1];
  EXPECT_EQ(table.typeString(), "f32[10, 4]");
  table.dataAs<float>()[4] = 100.0f; // must not change the weights
  out = e.run("forward", {ids, mask});
  ASSERT_TRUE(out.ok());
  EXPECT_EQ((*out)[0].dataAs<float>()[0], 2.0f);
}

// Device memory: a fake "GPU" kernel marks its output as living on a device;
// the executor must copy entry outputs back and free every device copy.
int devicesAllocated = 0, devicesFreed = 0, copies = 0;

int fakeDeviceFree(void *, halide_buffer_t *b) {
  ++devicesFreed;
  b->device = 0;
  return 0;
}
int fakeCopyToHost(void *, halide_buffer_t *b) {
  ++copies;
  b->set_device_dirty(false);
  return 0;
}

TEST(ExecutorTest, DeviceBuffersAreCopiedBackAndFreed) {
  std::vector<KernelFn> kernels = toyKernels();
  // The mask step "runs on the device": it uploads its inputs (marking them
  // as having device copies) and leaves its output there.
  kernels[2] = [](void **args) {
    int rc = fakeMask(args);
    for (int i = 0; i < 3; ++i) {
      if (!arg(args, i)->device) {
        arg(args, i)->device = 1;
        ++devicesAllocated;
      }
    }
    arg(args, 2)->set_device_dirty(true);
    return rc;
  };
  Tensor ids = *Tensor::fromI32({1, 1}, {1});
  Tensor mask = boolTensor({1, 1}, {1});

  {
    Executor cpuOnly = makeExecutor(makeToyPlan(), kernels);
    EXPECT_CONTAINS(runError(cpuOnly, "forward", {ids, mask}),
                    "left its output in device memory, but the executor was "
                    "created without device support");
  }

  devicesAllocated = devicesFreed = copies = 0;
  {
    ExecutorOptions options;
    options.deviceFree = fakeDeviceFree;
    options.copyToHost = fakeCopyToHost;
    Expected<Executor> e =
        Executor::create(makeToyPlan(), kernels, toyWeights(), options);
    ASSERT_TRUE(e.ok()) << e.message();
    ASSERT_TRUE(e->run("forward", {ids, mask}).ok());
    EXPECT_EQ(copies, 1);
    EXPECT_EQ(devicesAllocated, 3); // mask input, y, z
    EXPECT_EQ(devicesFreed, 3);
  }
}

TEST(ExecutorTest, HalideTypes) {
  EXPECT_EQ(halideTypeOf(DType::F32), halide_type_t(halide_type_float, 32));
  EXPECT_EQ(halideTypeOf(DType::I32), halide_type_t(halide_type_int, 32));
  EXPECT_EQ(halideTypeOf(DType::I64), halide_type_t(halide_type_int, 64));
  EXPECT_EQ(halideTypeOf(DType::Bool), halide_type_t(halide_type_uint, 8));

  Tensor t = *Tensor::zeros(DType::F32, {2, 3, 5});
  halide_buffer_t b;
  halide_dimension_t dims[3];
  ASSERT_TRUE(describeTensor(t, b, dims).ok());
  EXPECT_EQ(b.dimensions, 3);
  EXPECT_EQ(b.host, t.data());
  EXPECT_EQ(dims[0].extent, 5);
  EXPECT_EQ(dims[0].stride, 1);
  EXPECT_EQ(dims[1].extent, 3);
  EXPECT_EQ(dims[1].stride, 5);
  EXPECT_EQ(dims[2].extent, 2);
  EXPECT_EQ(dims[2].stride, 15);
}

} // namespace
