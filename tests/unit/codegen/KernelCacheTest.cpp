//===- KernelCacheTest.cpp - Signatures, caching, errors, AOT outputs -----===//

#include "CodegenTestUtil.h"

#include "codegen/KernelBuilder.h"
#include "codegen/Parallel.h"
#include "plan/KernelSignature.h"

#include <atomic>

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

using namespace tfc::test;
using namespace tfc::codegen;
using tfc::kernelSignature;

namespace {

/// All tfc ops of `module`, in order.
std::vector<mlir::Operation *> tfcOps(mlir::ModuleOp module) {
  std::vector<mlir::Operation *> ops;
  module->walk([&](mlir::Operation *op) {
    if (op->getDialect() && op->getDialect()->getNamespace() == "tfc")
      ops.push_back(op);
  });
  return ops;
}

const char *kTwoLayers = R"(
func.func @two_layers(%x: tensor<?x?x16xf32>, %w0: tensor<16x16xf32>,
                      %w1: tensor<16x16xf32>) -> tensor<?x?x16xf32> {
  %h = tfc.matmul %x, %w0 : (tensor<?x?x16xf32>, tensor<16x16xf32>) -> tensor<?x?x16xf32> loc("model.tfm":3:7)
  %a = tfc.gelu %h : tensor<?x?x16xf32> loc("model.tfm":4:7)
  %y = tfc.matmul %a, %w1 {transpose_b = false} : (tensor<?x?x16xf32>, tensor<16x16xf32>) -> tensor<?x?x16xf32> loc("model.tfm":9:7)
  %b = tfc.gelu %y {approximate = "none", tfc.layer = 1 : i64} : tensor<?x?x16xf32> loc("model.tfm":10:7)
  %z = tfc.matmul %b, %w1 {transpose_b = true} : (tensor<?x?x16xf32>, tensor<16x16xf32>) -> tensor<?x?x16xf32>
  return %z : tensor<?x?x16xf32>
}
)";

TEST(KernelSignatureTest, IgnoresLocationsDefaultsAndDiscardableAttrs) {
  ParsedOp parsed = parseOp(kTwoLayers);
  std::vector<mlir::Operation *> ops = tfcOps(*parsed.module);
  ASSERT_EQ(ops.size(), 5u);
  EXPECT_EQ(kernelSignature(ops[0]), kernelSignature(ops[2]));
  EXPECT_EQ(kernelSignature(ops[1]), kernelSignature(ops[3]));
  EXPECT_NE(kernelSignature(ops[0]), kernelSignature(ops[4]));
  EXPECT_EQ(kernelSignature(ops[0]),
            "tfc.matmul(tensor<?x?x16xf32>, tensor<16x16xf32>) -> "
            "tensor<?x?x16xf32>");
  EXPECT_EQ(kernelSignature(ops[4]),
            "tfc.matmul{transpose_b = true}(tensor<?x?x16xf32>, "
            "tensor<16x16xf32>) -> tensor<?x?x16xf32>");
}

TEST(KernelCacheTest, CompilesEachSignatureOnce) {
  ParsedOp parsed = parseOp(kTwoLayers);
  std::vector<mlir::Operation *> ops = tfcOps(*parsed.module);
  KernelCache local;
  std::vector<const CompiledKernel *> compiled;
  for (mlir::Operation *op : ops) {
    auto k = local.getOrCompile(op);
    ASSERT_TRUE(static_cast<bool>(k)) << llvm::toString(k.takeError());
    compiled.push_back(&*k);
  }
  EXPECT_EQ(local.size(), 3u);
  EXPECT_EQ(compiled[0], compiled[2]);
  EXPECT_EQ(compiled[1], compiled[3]);
  EXPECT_NE(compiled[0], compiled[4]);
  EXPECT_EQ(compiled[0]->name, "tfc_matmul_0");
  EXPECT_EQ(compiled[1]->name, "tfc_gelu_1");
  EXPECT_EQ(compiled[4]->name, "tfc_matmul_2");
  EXPECT_EQ(compiled[0]->numInputs, 2);
  EXPECT_EQ(local.lookup(kernelSignature(ops[1])), compiled[1]);
  EXPECT_EQ(local.lookup("tfc.nothing() -> tensor<f32>"), nullptr);

  // Both layers' matmuls run through the one function.
  Tensor x = Tensor(DT::F32, {1, 2, 16}).random(-1, 1, 1);
  Tensor w = Tensor(DT::F32, {16, 16}).random(-1, 1, 2);
  Tensor out(DT::F32, {1, 2, 16});
  void *args[] = {x.raw(), w.raw(), out.raw()};
  EXPECT_EQ(compiled[2]->fn(args), 0);
}

TEST(KernelCacheTest, CompilesInParallelUnderTheSerialNames) {
  ParsedOp parsed = parseOp(kTwoLayers);
  std::vector<mlir::Operation *> ops = tfcOps(*parsed.module);
  KernelCache local;
  size_t reported = 0;
  llvm::Error err = local.getOrCompileAll(ops, /*jobs=*/3, [&] { ++reported; });
  ASSERT_FALSE(static_cast<bool>(err)) << llvm::toString(std::move(err));
  EXPECT_EQ(reported, 3u);
  ASSERT_EQ(local.size(), 3u);
  std::vector<const CompiledKernel *> kernels = local.kernels();
  EXPECT_EQ(kernels[0]->name, "tfc_matmul_0");
  EXPECT_EQ(kernels[1]->name, "tfc_gelu_1");
  EXPECT_EQ(kernels[2]->name, "tfc_matmul_2");
  EXPECT_EQ(local.lookup(kernelSignature(ops[4])), kernels[2]);

  // The transpose_b matmul computes x * w^T: checked element by element.
  Tensor x = Tensor(DT::F32, {1, 2, 16}).random(-1, 1, 1);
  Tensor w = Tensor(DT::F32, {16, 16}).random(-1, 1, 2);
  Tensor out(DT::F32, {1, 2, 16});
  void *args[] = {x.raw(), w.raw(), out.raw()};
  ASSERT_EQ(kernels[2]->fn(args), 0);
  expectClose(out, [&](const Index &i) {
    double want = 0;
    for (int64_t k = 0; k < 16; ++k)
      want += x.get({0, i[1], k}) * w.get({i[2], k});
    return want;
  });

  // Already compiled: nothing more to do.
  err = local.getOrCompileAll(ops, 2);
  EXPECT_FALSE(static_cast<bool>(err));
  EXPECT_EQ(local.size(), 3u);
}

TEST(KernelCacheTest, ParallelCompileErrorsAddNothing) {
  ParsedOp parsed = parseOp(R"(
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %w = tfc.param "h.0.ln_1.weight" : tensor<4xf32> loc("model.tfm":2:3)
  %y = tfc.gelu %x : tensor<4xf32>
  return %y : tensor<4xf32>
}
)");
  std::vector<mlir::Operation *> ops = tfcOps(*parsed.module);
  ASSERT_EQ(ops.size(), 2u);
  KernelCache local;
  llvm::Error err = local.getOrCompileAll({ops[1], ops[0]}, 2);
  ASSERT_TRUE(static_cast<bool>(err));
  std::string message = llvm::toString(std::move(err));
  EXPECT_NE(message.find("model.tfm:2:3"), std::string::npos) << message;
  EXPECT_EQ(local.size(), 0u);
}

TEST(ParallelTest, RunsEveryIndexAndReportsTheLowestFailure) {
  std::atomic<int> ran{0};
  llvm::Error err = forEachIndex(8, 3, [&](size_t i) -> llvm::Error {
    ++ran;
    if (i == 5 || i == 2)
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "index " + std::to_string(i));
    return llvm::Error::success();
  });
  EXPECT_EQ(ran.load(), 8);
  ASSERT_TRUE(static_cast<bool>(err));
  EXPECT_EQ(llvm::toString(std::move(err)), "index 2");
  EXPECT_FALSE(static_cast<bool>(forEachIndex(0, 2, [](size_t) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "never");
  })));
  EXPECT_EQ(compileJobs(3), 3u);
  EXPECT_GE(compileJobs(0), 1u);
}

// The start order: the longest first (ties in index order); on one thread
// the indices run in exactly that order, and the error reported is still
// the lowest index's.
TEST(ParallelTest, StartsTheLongestFirst) {
  std::vector<size_t> order = longestFirst({80, 1100, 200, 700, 80});
  EXPECT_EQ(order, (std::vector<size_t>{1, 3, 2, 0, 4}));
  std::vector<size_t> ran;
  llvm::Error err = forEachIndex(
      5, 1,
      [&](size_t i) -> llvm::Error {
        ran.push_back(i);
        if (i == 0 || i == 3)
          return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                         "index " + std::to_string(i));
        return llvm::Error::success();
      },
      order);
  EXPECT_EQ(ran, order);
  ASSERT_TRUE(static_cast<bool>(err));
  EXPECT_EQ(llvm::toString(std::move(err)), "index 0");
}

TEST(KernelCacheTest, CompileCostHintsRankAttentionAndMatmulFirst) {
  ParsedOp parsed = parseOp(R"(
func.func @f(%q: tensor<1x2x4x16xf32>, %w: tensor<16x16xf32>) -> tensor<1x2x4x16xf32> {
  %a = tfc.fused_attention %q, %q, %q {scale = 0.25 : f64} : (tensor<1x2x4x16xf32>, tensor<1x2x4x16xf32>, tensor<1x2x4x16xf32>) -> tensor<1x2x4x16xf32>
  %m = tfc.matmul %a, %w : (tensor<1x2x4x16xf32>, tensor<16x16xf32>) -> tensor<1x2x4x16xf32>
  %g = tfc.gelu %m : tensor<1x2x4x16xf32>
  return %g : tensor<1x2x4x16xf32>
}
)");
  std::vector<mlir::Operation *> ops = tfcOps(*parsed.module);
  ASSERT_EQ(ops.size(), 3u);
  EXPECT_GT(compileCostHint(ops[0]), compileCostHint(ops[1]));
  EXPECT_GT(compileCostHint(ops[1]), compileCostHint(ops[2]));
  EXPECT_EQ(compileCostHint(nullptr), 0u);
}

TEST(KernelCacheTest, OpsWithoutKernelsAreErrorsNotCrashes) {
  ParsedOp parsed = parseOp(R"(
func.func @f() -> tensor<4xf32> {
  %w = tfc.param "h.0.ln_1.weight" : tensor<4xf32> loc("model.tfm":2:3)
  return %w : tensor<4xf32>
}
)");
  EXPECT_FALSE(hasKernel(parsed.op));
  auto k = cache().getOrCompile(parsed.op);
  ASSERT_FALSE(static_cast<bool>(k));
  std::string message = llvm::toString(k.takeError());
  EXPECT_NE(message.find("tfc.param"), std::string::npos) << message;
  EXPECT_NE(message.find("model.tfm:2:3"), std::string::npos) << message;
  auto none = cache().getOrCompile(nullptr);
  EXPECT_FALSE(static_cast<bool>(none));
  llvm::consumeError(none.takeError());
}

TEST(HalideErrorTest, CompileErrorsBecomeValues) {
  // Calling a Func with the wrong number of arguments is a Halide user
  // error: it must come back as an llvm::Error carrying Halide's message,
  // not abort the process.
  llvm::Error err = withHalideErrors([] {
    Halide::Func f("one_dim"), g("g");
    Halide::Var x("x");
    f(x) = 1;
    g(x) = f(x, x);
  });
  ASSERT_TRUE(static_cast<bool>(err));
  std::string message = llvm::toString(std::move(err));
  EXPECT_NE(message.find("Halide"), std::string::npos) << message;
  EXPECT_NE(message.find("one_dim"), std::string::npos) << message;

  // Lowering errors too: a schedule that refers to a missing loop.
  llvm::Error lowering = withHalideErrors([] {
    Halide::Func f("g"), h("h");
    Halide::Var x("x"), y("y");
    f(x) = x;
    h(x) = f(x);
    f.compute_at(h, y);
    h.compile_to_module({}, "h", Halide::get_host_target());
  });
  ASSERT_TRUE(static_cast<bool>(lowering));
  llvm::consumeError(std::move(lowering));

  // The library still works afterwards.
  llvm::Error fine = withHalideErrors([] {
    Halide::Func f("ok");
    Halide::Var x("x");
    f(x) = x * 2;
    Halide::Buffer<int> out = f.realize({4});
    if (out(3) != 6)
      ADD_FAILURE() << "wrong result";
  });
  EXPECT_FALSE(static_cast<bool>(fine)) << llvm::toString(std::move(fine));
}

TEST(HalideErrorTest, RuntimeErrorsReturnNonZero) {
  // A buffer whose static extent is wrong: the default handler would abort.
  std::string ir = singleOpFunc(
      "%x: tensor<?x8xf32>", "tfc.exp %x : tensor<?x8xf32>", "tensor<?x8xf32>");
  ParsedOp parsed = parseOp(ir);
  auto k = cache().getOrCompile(parsed.op);
  ASSERT_TRUE(static_cast<bool>(k)) << llvm::toString(k.takeError());
  takeKernelRuntimeError();
  Tensor x(DT::F32, {2, 9}), out(DT::F32, {2, 8});
  void *args[] = {x.raw(), out.raw()};
  EXPECT_NE(k->fn(args), 0);
  std::string message = takeKernelRuntimeError();
  EXPECT_NE(message.find("_in0"), std::string::npos) << message;
  EXPECT_EQ(takeKernelRuntimeError(), "");

  // (A buffer of the wrong element type or rank is not checked: the
  // executor binds the plan's, codegen::InProcessLowering.)

  // And a good call still works.
  Tensor xf(DT::F32, {2, 8}), outOk(DT::F32, {2, 8});
  void *args3[] = {xf.raw(), outOk.raw()};
  EXPECT_EQ(k->fn(args3), 0);
  EXPECT_EQ(outOk.get({1, 7}), 1.0f);
}

TEST(HalideErrorTest, InProcessKernelsKeepTheChecksTheExecutorCannotMake) {
  std::string ir = singleOpFunc(
      "%x: tensor<?x8xf32>", "tfc.exp %x : tensor<?x8xf32>", "tensor<?x8xf32>");
  ParsedOp parsed = parseOp(ir);
  auto aot = buildKernel(parsed.op, hostTarget(), "tfc_exp_aot");
  ASSERT_TRUE(static_cast<bool>(aot)) << llvm::toString(aot.takeError());
  auto stmt = loweredStmt(*aot, aot->target);
  ASSERT_TRUE(static_cast<bool>(stmt)) << llvm::toString(stmt.takeError());
  EXPECT_NE(stmt->find("halide_error_bad_type"), std::string::npos);

  auto local = buildKernel(parsed.op, hostTarget(), "tfc_exp_local");
  ASSERT_TRUE(static_cast<bool>(local)) << llvm::toString(local.takeError());
  InProcessLowering lowering(*local);
  const Halide::Target &target = lowering.target();
  EXPECT_TRUE(target.has_feature(Halide::Target::NoBoundsQuery));
  EXPECT_TRUE(target.has_feature(Halide::Target::DisableLLVMLoopOpt));
  stmt = loweredStmt(*local, target);
  ASSERT_TRUE(static_cast<bool>(stmt)) << llvm::toString(stmt.takeError());
  // Types, ranks and null arguments are the executor's to guarantee...
  EXPECT_EQ(stmt->find("halide_error_bad_type"), std::string::npos) << *stmt;
  EXPECT_EQ(stmt->find("halide_error_bad_dimensions"), std::string::npos);
  EXPECT_EQ(stmt->find("halide_error_buffer_argument_is_null"),
            std::string::npos);
  // ...the static extent of the input is still the kernel's.
  EXPECT_NE(stmt->find("halide_error_constraint_violated"), std::string::npos)
      << *stmt;
}

/// An in-process compile leaves the kernel as it found it: after it, the
/// kernel compiled for AOT keeps every check and its own lowering pass (the
/// one that lets bf16 products emit vdpbf16ps), which Halide can clear only
/// with the in-process one.
TEST(HalideErrorTest, InProcessLoweringLeavesTheKernelAsItWas) {
  ParsedOp parsed =
      parseOp(singleOpFunc("%x: tensor<?x8xf32>",
                           "tfc.exp %x : tensor<?x8xf32>", "tensor<?x8xf32>"));
  auto kernel = buildKernel(parsed.op, hostTarget(), "tfc_exp_both");
  ASSERT_TRUE(static_cast<bool>(kernel)) << llvm::toString(kernel.takeError());
  size_t own = kernel->pipeline.custom_lowering_passes().size();
  EXPECT_EQ(own, 1u);
  {
    InProcessLowering lowering(*kernel);
    EXPECT_EQ(kernel->pipeline.custom_lowering_passes().size(), own + 1);
  }
  EXPECT_EQ(kernel->pipeline.custom_lowering_passes().size(), own);
  auto stmt = loweredStmt(*kernel, kernel->target);
  ASSERT_TRUE(static_cast<bool>(stmt)) << llvm::toString(stmt.takeError());
  EXPECT_NE(stmt->find("halide_error_bad_type"), std::string::npos);
}

TEST(AotTest, ModuleStmtAndSources) {
  ParsedOp parsed = parseOp(
      singleOpFunc("%x: tensor<?x?x32xf32>",
                   "tfc.softmax %x {axis = 2 : i64} : tensor<?x?x32xf32>",
                   "tensor<?x?x32xf32>"));
  auto kernel = buildKernel(parsed.op, hostTarget(), "tfc_softmax_7");
  ASSERT_TRUE(static_cast<bool>(kernel)) << llvm::toString(kernel.takeError());
  EXPECT_EQ(kernel->name, "tfc_softmax_7");
  EXPECT_EQ(kernel->output.name(), "softmax_7");
  ASSERT_EQ(kernel->arguments.size(), 1u);

  auto stmt = loweredStmt(*kernel, hostTarget());
  ASSERT_TRUE(static_cast<bool>(stmt)) << llvm::toString(stmt.takeError());
  EXPECT_NE(stmt->find("softmax_7_max"), std::string::npos);
  EXPECT_NE(stmt->find("softmax_7_sum"), std::string::npos);

  llvm::SmallString<128> dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("tfc-codegen-aot", dir));
  auto path = [&](const char *name) {
    llvm::SmallString<128> p(dir);
    llvm::sys::path::append(p, name);
    return std::string(p);
  };
  Halide::Target aot = hostTarget().with_feature(Halide::Target::NoRuntime);
  llvm::Error err = compileToFiles(
      *kernel, aot,
      {{Halide::OutputFileType::object, path("softmax.o")},
       {Halide::OutputFileType::c_header, path("softmax.h")},
       {Halide::OutputFileType::c_source, path("softmax.cpp")},
       {Halide::OutputFileType::stmt_html, path("softmax.html")}});
  ASSERT_FALSE(static_cast<bool>(err)) << llvm::toString(std::move(err));
  for (const char *name :
       {"softmax.o", "softmax.h", "softmax.cpp", "softmax.html"})
    EXPECT_TRUE(llvm::sys::fs::exists(path(name))) << name;
  auto header = llvm::MemoryBuffer::getFile(path("softmax.h"));
  ASSERT_TRUE(static_cast<bool>(header));
  EXPECT_NE((*header)->getBuffer().find("tfc_softmax_7_argv"),
            llvm::StringRef::npos);
  llvm::sys::fs::remove_directories(dir);
}

} // namespace
