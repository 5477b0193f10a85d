//===- CudaCompileTest.cpp - GPU schedules compile to PTX -----------------===//
//
// No GPU is needed to generate PTX: these tests build kernels with their
// CUDA schedules for host-cuda-cuda_capability_80, lower them, and compile
// them to an object (host code with the PTX embedded). Running them is for
// a machine with a GPU.
//
//===----------------------------------------------------------------------===//

#include "CodegenTestUtil.h"

#include "codegen/KernelBuilder.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

using namespace tfc::test;
using namespace tfc::codegen;

namespace {

struct CudaCase {
  const char *name;
  std::string ir;
};

void PrintTo(const CudaCase &c, std::ostream *os) { *os << c.name; }

class CudaCompileTest : public ::testing::TestWithParam<CudaCase> {};

TEST_P(CudaCompileTest, CompilesToPTX) {
  ParsedOp parsed = parseOp(GetParam().ir);
  ASSERT_NE(parsed.op, nullptr);
  Halide::Target cuda = cudaTarget();
  EXPECT_TRUE(cuda.has_feature(Halide::Target::CUDA));
  EXPECT_EQ(cuda.get_cuda_capability_lower_bound(), 80);

  auto kernel =
      buildKernel(parsed.op, cuda, std::string("tfc_") + GetParam().name);
  ASSERT_TRUE(static_cast<bool>(kernel)) << llvm::toString(kernel.takeError());
  auto module = compileToModule(*kernel, cuda);
  ASSERT_TRUE(static_cast<bool>(module)) << llvm::toString(module.takeError());

  // The lowered host code launches GPU kernels (loops over block ids),
  // and the module carries their PTX.
  auto stmt = loweredStmt(*kernel, cuda);
  ASSERT_TRUE(static_cast<bool>(stmt)) << llvm::toString(stmt.takeError());
  EXPECT_NE(stmt->find("halide_cuda_run"), std::string::npos);
  EXPECT_NE(stmt->find("__block_id"), std::string::npos);
  EXPECT_NE(stmt->find(".target sm_80"), std::string::npos);

  // Full code generation: the object embeds PTX for sm_80.
  llvm::SmallString<128> obj;
  ASSERT_FALSE(llvm::sys::fs::createTemporaryFile("tfc-cuda", "o", obj));
  llvm::Error err =
      compileToFiles(*kernel, cuda.with_feature(Halide::Target::NoRuntime),
                     {{Halide::OutputFileType::object, std::string(obj)}});
  ASSERT_FALSE(static_cast<bool>(err)) << llvm::toString(std::move(err));
  auto bytes = llvm::MemoryBuffer::getFile(obj);
  ASSERT_TRUE(static_cast<bool>(bytes));
  EXPECT_NE((*bytes)->getBuffer().find("sm_80"), llvm::StringRef::npos);
  llvm::sys::fs::remove(obj);
}

INSTANTIATE_TEST_SUITE_P(
    Ops, CudaCompileTest,
    ::testing::Values(
        CudaCase{"matmul",
                 singleOpFunc("%a: tensor<?x?x64xf32>, %b: tensor<64x96xf32>",
                              "tfc.matmul %a, %b : (tensor<?x?x64xf32>, "
                              "tensor<64x96xf32>) -> tensor<?x?x96xf32>",
                              "tensor<?x?x96xf32>")},
        CudaCase{
            "matmul_qk",
            singleOpFunc("%q: tensor<?x4x?x16xf32>, %k: tensor<?x4x?x16xf32>",
                         "tfc.matmul %q, %k {transpose_b = true} : "
                         "(tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>) -> "
                         "tensor<?x4x?x?xf32>",
                         "tensor<?x4x?x?xf32>")},
        CudaCase{"softmax",
                 singleOpFunc(
                     "%x: tensor<?x4x?x?xf32>",
                     "tfc.softmax %x {axis = 3 : i64} : tensor<?x4x?x?xf32>",
                     "tensor<?x4x?x?xf32>")},
        CudaCase{"add",
                 singleOpFunc("%a: tensor<?x?x64xf32>, %b: tensor<64xf32>",
                              "tfc.add %a, %b : (tensor<?x?x64xf32>, "
                              "tensor<64xf32>) -> tensor<?x?x64xf32>",
                              "tensor<?x?x64xf32>")},
        CudaCase{"gelu", singleOpFunc("%x: tensor<?x?x64xf32>",
                                      "tfc.gelu %x {approximate = \"tanh\"} : "
                                      "tensor<?x?x64xf32>",
                                      "tensor<?x?x64xf32>")},
        CudaCase{"layer_norm",
                 singleOpFunc("%x: tensor<?x?x64xf32>, %g: tensor<64xf32>, %b: "
                              "tensor<64xf32>",
                              "tfc.layer_norm %x, %g, %b {epsilon = 1.0e-05 : "
                              "f64} : (tensor<?x?x64xf32>, tensor<64xf32>, "
                              "tensor<64xf32>) -> tensor<?x?x64xf32>",
                              "tensor<?x?x64xf32>")},
        CudaCase{"reduce_sum",
                 singleOpFunc("%x: tensor<?x?xf32>",
                              "tfc.reduce_sum %x {axis = 0 : i64} : "
                              "tensor<?x?xf32> -> tensor<?xf32>",
                              "tensor<?xf32>")},
        CudaCase{"gather",
                 singleOpFunc("%t: tensor<100x64xf32>, %ids: tensor<?x?xi32>",
                              "tfc.gather %t, %ids : (tensor<100x64xf32>, "
                              "tensor<?x?xi32>) -> tensor<?x?x64xf32>",
                              "tensor<?x?x64xf32>")}),
    [](const ::testing::TestParamInfo<CudaCase> &info) {
      return std::string(info.param.name);
    });

} // namespace
