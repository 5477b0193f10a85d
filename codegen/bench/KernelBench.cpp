//===- KernelBench.cpp - Speed of single tfc kernels ----------------------===//
//
//   tfc-kernel-bench [matmul] [M K N] [--transpose-b] [--dynamic-m]
//   tfc-kernel-bench softmax|layer_norm|gelu|add|transpose [--iters N]
//   tfc-kernel-bench all
//
// JIT-compiles one op's kernel through KernelCache, runs it on random data
// and prints the best and median time. Matmul reports GFLOP/s (2*M*N*K; the
// default shape [128, 768] x [768, 3072] is GPT-2's MLP up-projection for 128
// tokens) and checks a few results against a double-precision dot product;
// the memory-bound kernels report GB/s of input plus output. --dynamic-m
// types A as tensor<?xK> so the guarded M-tail path is what runs.
// HL_NUM_THREADS sets the thread count (default: all cores).
//
//===----------------------------------------------------------------------===//

#include "codegen/KernelCache.h"

#include "ir/TfcDialect.h"
#include "ir/TfcOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

using namespace tfc::codegen;
using Buffer = Halide::Runtime::Buffer<float>;

namespace {

struct Timing {
  double best = 0, median = 0;
};

mlir::MLIRContext &context() {
  static mlir::MLIRContext ctx;
  static bool loaded = [] {
    ctx.loadDialect<mlir::tfc::TfcDialect, mlir::func::FuncDialect>();
    return true;
  }();
  (void)loaded;
  return ctx;
}

/// Halide buffer for an axis-ordered shape (Halide dim 0 = last axis).
Buffer makeBuffer(std::vector<int> shape, std::mt19937 &rng) {
  std::reverse(shape.begin(), shape.end());
  Buffer b(shape);
  std::uniform_real_distribution<float> dist(-1, 1);
  b.for_each_value([&](float &v) { v = dist(rng); });
  return b;
}

/// Compiles the first tfc op of `ir`, runs it `iters` times on `buffers`
/// (inputs then the output). Returns false after printing an error.
bool run(const std::string &ir, std::vector<Buffer> &buffers, int iters,
         Timing &timing, double &compileSeconds) {
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(ir, &context());
  if (!module) {
    std::fprintf(stderr, "cannot parse:\n%s", ir.c_str());
    return false;
  }
  mlir::Operation *op = nullptr;
  module->walk([&](mlir::Operation *o) {
    if (!op && o->getDialect() && o->getDialect()->getNamespace() == "tfc")
      op = o;
  });
  static KernelCache cache;
  auto t0 = std::chrono::steady_clock::now();
  llvm::Expected<const CompiledKernel &> kernel = cache.getOrCompile(op);
  if (!kernel) {
    std::fprintf(stderr, "%s\n", llvm::toString(kernel.takeError()).c_str());
    return false;
  }
  compileSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
          .count();
  std::vector<void *> args;
  for (Buffer &b : buffers)
    args.push_back(b.raw_buffer());
  std::vector<double> times;
  for (int i = 0; i < iters + 3; ++i) {
    auto start = std::chrono::steady_clock::now();
    int rc = kernel->fn(args.data());
    double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    if (rc != 0) {
      std::fprintf(stderr, "kernel failed: %s\n",
                   takeKernelRuntimeError().c_str());
      return false;
    }
    if (i >= 3) // warm-up: thread pool start, page faults
      times.push_back(s);
  }
  std::sort(times.begin(), times.end());
  timing.best = times.front();
  timing.median = times[times.size() / 2];
  return true;
}

std::string func(const std::string &args, const std::string &op,
                 const std::string &resultType) {
  return "func.func @f(" + args + ") -> " + resultType + " {\n  %r = " + op +
         "\n  return %r : " + resultType + "\n}\n";
}

int benchMatmul(int64_t M, int64_t K, int64_t N, bool transposeB, bool dynamicM,
                int iters) {
  std::string m = dynamicM ? "?" : std::to_string(M);
  std::string aType = "tensor<" + m + "x" + std::to_string(K) + "xf32>";
  std::string bType =
      transposeB
          ? "tensor<" + std::to_string(N) + "x" + std::to_string(K) + "xf32>"
          : "tensor<" + std::to_string(K) + "x" + std::to_string(N) + "xf32>";
  std::string rType = "tensor<" + m + "x" + std::to_string(N) + "xf32>";
  std::string ir =
      func("%a: " + aType + ", %b: " + bType,
           "tfc.matmul %a, %b " +
               std::string(transposeB ? "{transpose_b = true} " : "") + ": (" +
               aType + ", " + bType + ") -> " + rType,
           rType);
  std::mt19937 rng(1);
  std::vector<Buffer> buffers;
  buffers.push_back(makeBuffer({int(M), int(K)}, rng));
  buffers.push_back(transposeB ? makeBuffer({int(N), int(K)}, rng)
                               : makeBuffer({int(K), int(N)}, rng));
  buffers.push_back(makeBuffer({int(M), int(N)}, rng));
  Timing t;
  double compile = 0;
  if (!run(ir, buffers, iters, t, compile))
    return 1;

  // Spot-check a few results against a double-precision dot product.
  Buffer &a = buffers[0], &b = buffers[1], &out = buffers[2];
  double maxErr = 0;
  for (int s = 0; s < 16; ++s) {
    int64_t i = (s * 37) % M, j = (s * 101) % N;
    double ref = 0;
    for (int64_t k = 0; k < K; ++k)
      ref += double(a(k, i)) * (transposeB ? b(k, j) : b(j, k));
    maxErr = std::max(maxErr, std::abs(ref - out(j, i)));
  }
  double flops = 2.0 * M * N * K;
  std::printf("matmul [%lld,%lld]x%s[%lld,%lld]%s: compile %.2f s, best "
              "%.3f ms (%.1f GFLOP/s), median %.3f ms (%.1f GFLOP/s), max abs "
              "err %.2g\n",
              (long long)M, (long long)K, transposeB ? "T" : "",
              (long long)(transposeB ? N : K), (long long)(transposeB ? K : N),
              dynamicM ? " (M dynamic)" : "", compile, t.best * 1e3,
              flops / t.best * 1e-9, t.median * 1e3, flops / t.median * 1e-9,
              maxErr);
  return 0;
}

/// A memory-bound kernel: reports GB/s of everything read and written.
int benchMemory(const std::string &name, const std::string &ir,
                const std::vector<std::vector<int>> &shapes, int iters) {
  std::mt19937 rng(2);
  std::vector<Buffer> buffers;
  double bytes = 0;
  std::string desc;
  for (const auto &shape : shapes) {
    buffers.push_back(makeBuffer(shape, rng));
    bytes += 4.0 * buffers.back().number_of_elements();
  }
  for (int d : shapes.front())
    desc += (desc.empty() ? "" : ",") + std::to_string(d);
  Timing t;
  double compile = 0;
  if (!run(ir, buffers, iters, t, compile))
    return 1;
  std::printf("%s [%s]: compile %.2f s, best %.3f ms (%.1f GB/s), median "
              "%.3f ms (%.1f GB/s)\n",
              name.c_str(), desc.c_str(), compile, t.best * 1e3,
              bytes / t.best * 1e-9, t.median * 1e3, bytes / t.median * 1e-9);
  return 0;
}

int benchNamed(const std::string &name, int iters) {
  if (name == "softmax") {
    std::string t = "tensor<?x12x?x?xf32>";
    return benchMemory(
        name, func("%x: " + t, "tfc.softmax %x {axis = 3 : i64} : " + t, t),
        {{1, 12, 512, 512}, {1, 12, 512, 512}}, iters);
  }
  if (name == "layer_norm") {
    std::string t = "tensor<?x?x768xf32>";
    return benchMemory(
        name,
        func("%x: " + t + ", %g: tensor<768xf32>, %b: tensor<768xf32>",
             "tfc.layer_norm %x, %g, %b {epsilon = 1.0e-05 : f64} : (" + t +
                 ", tensor<768xf32>, tensor<768xf32>) -> " + t,
             t),
        {{1, 512, 768}, {768}, {768}, {1, 512, 768}}, iters);
  }
  if (name == "gelu") {
    std::string t = "tensor<?x?x3072xf32>";
    return benchMemory(
        name,
        func("%x: " + t, "tfc.gelu %x {approximate = \"tanh\"} : " + t, t),
        {{1, 512, 3072}, {1, 512, 3072}}, iters);
  }
  if (name == "add") {
    std::string t = "tensor<?x?x768xf32>";
    return benchMemory(
        name,
        func("%a: " + t + ", %b: tensor<768xf32>",
             "tfc.add %a, %b : (" + t + ", tensor<768xf32>) -> " + t, t),
        {{1, 512, 768}, {768}, {1, 512, 768}}, iters);
  }
  if (name == "transpose") {
    return benchMemory(
        name,
        func("%x: tensor<?x?x12x64xf32>",
             "tfc.transpose %x {perm = array<i64: 0, 2, 1, 3>} : "
             "tensor<?x?x12x64xf32> -> tensor<?x12x?x64xf32>",
             "tensor<?x12x?x64xf32>"),
        {{1, 512, 12, 64}, {1, 12, 512, 64}}, iters);
  }
  std::fprintf(stderr, "unknown kernel '%s'\n", name.c_str());
  return 1;
}

} // namespace

int main(int argc, char **argv) {
  int64_t M = 128, K = 768, N = 3072;
  bool transposeB = false, dynamicM = false;
  int iters = 50;
  std::string name = "matmul";
  std::vector<int64_t> dims;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--transpose-b"))
      transposeB = true;
    else if (!std::strcmp(argv[i], "--dynamic-m"))
      dynamicM = true;
    else if (!std::strcmp(argv[i], "--iters") && i + 1 < argc)
      iters = std::max(1, std::atoi(argv[++i]));
    else if (std::isalpha(static_cast<unsigned char>(argv[i][0])))
      name = argv[i];
    else
      dims.push_back(std::atoll(argv[i]));
  }
  if (dims.size() == 3) {
    M = dims[0];
    K = dims[1];
    N = dims[2];
  }
  if (name == "matmul")
    return benchMatmul(M, K, N, transposeB, dynamicM, iters);
  if (name == "all") {
    int rc = benchMatmul(M, K, N, false, false, iters);
    for (const char *n : {"softmax", "layer_norm", "gelu", "add", "transpose"})
      rc |= benchNamed(n, iters);
    return rc;
  }
  return benchNamed(name, iters);
}
