//===- FusedKernelsTest.cpp - Fused-op kernels against naive references ---===//
//
// tfc.linear (bias, every activation, both weight layouts, tails, dynamic
// dims), tfc.add_layer_norm (both results or the output alone, broadcasting,
// dynamic dims) and tfc.fused_attention (no mask, padding and full masks,
// additive bias, causal with Sq == Sk and Sk > Sq, fully masked rows,
// several key chunks of the online softmax, one query row (the decode
// variant), dynamic and static dims, D != Dv) against
// references computed in double from the ops' definitions (docs/ir.md).
//
//===----------------------------------------------------------------------===//

#include "CodegenTestUtil.h"

#include "codegen/KernelBuilder.h"

#include <algorithm>
#include <cmath>

using namespace tfc::test;

namespace {

std::string tensorType(const std::vector<std::string> &dims,
                       const std::string &element = "f32") {
  std::string t = "tensor<";
  for (const std::string &d : dims)
    t += d + "x";
  return t + element + ">";
}

/// Runs the (possibly multi-result) op of `ir` on `inputs` into `outputs`,
/// with the kernels of `with` (default: the host's, extern stages included).
bool runKernel(const std::string &ir, std::vector<Tensor> &inputs,
               std::vector<Tensor> &outputs,
               tfc::codegen::KernelCache *with = nullptr) {
  ParsedOp parsed = parseOp(ir);
  if (!parsed.op)
    return false;
  llvm::Expected<const tfc::codegen::CompiledKernel &> kernel =
      (with ? *with : cache()).getOrCompile(parsed.op);
  if (!kernel) {
    ADD_FAILURE() << llvm::toString(kernel.takeError()) << "\nIR:\n" << ir;
    return false;
  }
  std::vector<void *> args;
  for (Tensor &t : inputs)
    args.push_back(t.raw());
  for (Tensor &t : outputs)
    args.push_back(t.raw());
  int rc = kernel->fn(args.data());
  // TFC_DUMP_STMT=1 prints the lowered statement of a kernel that fails.
  if (rc != 0 && getenv("TFC_DUMP_STMT")) {
    auto stmt = tfc::codegen::loweredStmt(kernel->kernel, kernel->kernel.target);
    if (stmt) llvm::errs() << *stmt; else llvm::consumeError(stmt.takeError());
  }
  if (rc != 0) {
    ADD_FAILURE() << "kernel returned " << rc << ": "
                  << tfc::codegen::takeKernelRuntimeError() << "\nIR:\n"
                  << ir;
    return false;
  }
  return true;
}

//===----------------------------------------------------------------------===//
// tfc.linear
//===----------------------------------------------------------------------===//

double activate(const std::string &act, double x) {
  if (act == "relu")
    return std::max(x, 0.0);
  if (act == "gelu")
    return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
  if (act == "gelu_tanh")
    return 0.5 * x *
           (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
  if (act == "silu")
    return x / (1 + std::exp(-x));
  return x;
}

struct LinearCase {
  const char *name;
  std::vector<std::string> x, r; // IR dims
  Shape xShape;
  int64_t n;
  bool transposeB, bias;
  const char *activation;
};

void PrintTo(const LinearCase &c, std::ostream *os) { *os << c.name; }

class LinearTest : public ::testing::TestWithParam<LinearCase> {};

TEST_P(LinearTest, MatchesMatmulBiasActivation) {
  const LinearCase &c = GetParam();
  int64_t K = c.xShape.back(), N = c.n;
  std::string xt = tensorType(c.x);
  std::string wt = c.transposeB
                       ? tensorType({std::to_string(N), std::to_string(K)})
                       : tensorType({std::to_string(K), std::to_string(N)});
  std::string bt = tensorType({std::to_string(N)});
  std::string rt = tensorType(c.r);
  std::string attrs = "{activation = \"" + std::string(c.activation) + "\"" +
                      (c.transposeB ? ", transpose_b = true" : "") + "}";
  std::string ir = singleOpFunc(
      "%x: " + xt + ", %w: " + wt + (c.bias ? ", %b: " + bt : ""),
      "tfc.linear %x, %w" + std::string(c.bias ? ", %b " : " ") + attrs +
          " : (" + xt + ", " + wt + (c.bias ? ", " + bt : "") + ") -> " + rt,
      rt);
  Tensor x = Tensor(DT::F32, c.xShape).random(-1, 1, 31);
  Tensor w = Tensor(DT::F32, c.transposeB ? Shape{N, K} : Shape{K, N})
                 .random(-1, 1, 32);
  Tensor b = Tensor(DT::F32, {N}).random(-1, 1, 33);
  Shape rShape = c.xShape;
  rShape.back() = N;
  std::vector<Tensor> inputs = {x, w};
  if (c.bias)
    inputs.push_back(b);
  std::vector<Tensor> outputs = {Tensor(DT::F32, rShape)};
  ASSERT_TRUE(runKernel(ir, inputs, outputs));
  expectClose(
      outputs[0],
      [&](const Index &i) {
        Index xi = i;
        double sum = c.bias ? b.get({i.back()}) : 0.0;
        for (int64_t k = 0; k < K; ++k) {
          xi.back() = k;
          sum += x.get(xi) *
                 (c.transposeB ? w.get({i.back(), k}) : w.get({k, i.back()}));
        }
        return activate(c.activation, sum);
      },
      1e-4, 1e-4);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, LinearTest,
    ::testing::Values(
        LinearCase{"GeluBertFFN", {"?", "?", "64"}, {"?", "?", "96"},
                   {2, 19, 64}, 96, true, true, "gelu"},
        LinearCase{"NoneStatic", {"3", "16", "32"}, {"3", "16", "48"},
                   {3, 16, 32}, 48, true, true, "none"},
        LinearCase{"ReluKN", {"?", "40"}, {"?", "50"}, {13, 40}, 50, false,
                   true, "relu"},
        LinearCase{"GeluTanhConv1D", {"1", "?", "24"}, {"1", "?", "100"},
                   {1, 7, 24}, 100, false, true, "gelu_tanh"},
        LinearCase{"SiluNoBias", {"?", "?", "16"}, {"?", "?", "20"},
                   {2, 3, 16}, 20, true, false, "silu"},
        LinearCase{"OneRow", {"?", "?", "48"}, {"?", "?", "144"}, {1, 1, 48},
                   144, true, true, "gelu"},
        // The swapped variant ([N, K], >= 32 rows) with a long epilogue.
        LinearCase{"GeluSwapped", {"?", "?", "48"}, {"?", "?", "100"},
                   {2, 33, 48}, 100, true, true, "gelu"},
        // The GEMV variant on [K, N] (8 rows) and the tiles at 9 rows.
        LinearCase{"GemvGeluTanhKN", {"?", "?", "64"}, {"?", "?", "200"},
                   {2, 4, 64}, 200, false, true, "gelu_tanh"},
        LinearCase{"NineRowsGeluTanhKN", {"?", "?", "64"}, {"?", "?", "200"},
                   {3, 3, 64}, 200, false, true, "gelu_tanh"}),
    [](const ::testing::TestParamInfo<LinearCase> &info) {
      return std::string(info.param.name);
    });

//===----------------------------------------------------------------------===//
// tfc.add_layer_norm
//===----------------------------------------------------------------------===//

TEST(AddLayerNormTest, BothResultsDynamicDims) {
  const int64_t B = 3, S = 5, C = 40;
  std::string t = tensorType({"?", "?", std::to_string(C)});
  std::string g = tensorType({std::to_string(C)});
  std::string ir = "func.func @f(%a: " + t + ", %b: " + t + ", %g: " + g +
                   ", %be: " + g + ") -> (" + t + ", " + t +
                   ") {\n  %y, %s = tfc.add_layer_norm %a, %b, %g, %be "
                   "{epsilon = 1.0e-05 : f64, with_sum} : (" +
                   t + ", " + t + ", " + g + ", " + g + ") -> (" + t + ", " +
                   t + ")\n  return %y, %s : " + t + ", " + t + "\n}\n";
  Tensor a = Tensor(DT::F32, {B, S, C}).random(-2, 3, 41);
  Tensor b = Tensor(DT::F32, {B, S, C}).random(-1, 1, 42);
  Tensor gamma = Tensor(DT::F32, {C}).random(0.5, 1.5, 43);
  Tensor beta = Tensor(DT::F32, {C}).random(-0.5, 0.5, 44);
  std::vector<Tensor> inputs = {a, b, gamma, beta};
  std::vector<Tensor> outputs = {Tensor(DT::F32, {B, S, C}),
                                 Tensor(DT::F32, {B, S, C})};
  ASSERT_TRUE(runKernel(ir, inputs, outputs));
  auto row = [&](const Index &i) {
    std::vector<double> x(C);
    Index j = i;
    for (int64_t c = 0; c < C; ++c) {
      j.back() = c;
      x[c] = a.get(j) + b.get(j);
    }
    return x;
  };
  expectClose(
      outputs[0],
      [&](const Index &i) {
        std::vector<double> x = row(i);
        double mean = 0, var = 0;
        for (double v : x)
          mean += v / C;
        for (double v : x)
          var += (v - mean) * (v - mean) / C;
        return (x[i.back()] - mean) / std::sqrt(var + 1e-5) *
                   gamma.get({i.back()}) +
               beta.get({i.back()});
      },
      1e-4, 1e-5);
  // The sum is the f32 sum, exactly.
  expectClose(
      outputs[1],
      [&](const Index &i) {
        return static_cast<double>(static_cast<float>(a.get(i)) +
                                   static_cast<float>(b.get(i)));
      },
      0, 0);
}

TEST(AddLayerNormTest, OutputOnlyBroadcastOperandAndLongRows) {
  // Post-LN (no with_sum): the kernel has one output. b is a [C] vector
  // added to every row; rows of 768 (BERT's width).
  const int64_t R = 7, C = 768;
  std::string t = tensorType({"?", std::to_string(C)});
  std::string v = tensorType({std::to_string(C)});
  std::string ir = "func.func @f(%a: " + t + ", %b: " + v + ", %g: " + v +
                   ", %be: " + v + ") -> " + t +
                   " {\n  %y = tfc.add_layer_norm %a, %b, %g, %be "
                   "{epsilon = 1.0e-12 : f64} : (" +
                   t + ", " + v + ", " + v + ", " + v + ") -> " + t +
                   "\n  return %y : " + t + "\n}\n";
  Tensor a = Tensor(DT::F32, {R, C}).random(-1, 1, 51);
  Tensor b = Tensor(DT::F32, {C}).random(-1, 1, 52);
  Tensor gamma = Tensor(DT::F32, {C}).random(0.5, 1.5, 53);
  Tensor beta = Tensor(DT::F32, {C}).random(-0.5, 0.5, 54);
  std::vector<Tensor> inputs = {a, b, gamma, beta};
  std::vector<Tensor> outputs = {Tensor(DT::F32, {R, C})};
  ASSERT_TRUE(runKernel(ir, inputs, outputs));
  expectClose(
      outputs[0],
      [&](const Index &i) {
        double mean = 0, var = 0;
        for (int64_t c = 0; c < C; ++c)
          mean += (a.get({i[0], c}) + b.get({c})) / C;
        for (int64_t c = 0; c < C; ++c) {
          double d = a.get({i[0], c}) + b.get({c}) - mean;
          var += d * d / C;
        }
        double x = a.get(i) + b.get({i[1]});
        return (x - mean) / std::sqrt(var + 1e-12) * gamma.get({i[1]}) +
               beta.get({i[1]});
      },
      1e-4, 1e-5);
}

//===----------------------------------------------------------------------===//
// tfc.fused_attention
//===----------------------------------------------------------------------===//

struct AttentionCase {
  const char *name;
  int64_t B, H, Sq, Sk, D, Dv;
  bool dynamic;    // batch and sequence dims `?` in the IR
  bool causal;
  Shape keepShape; // empty: no keep operand
  Shape biasShape; // empty: no bias operand
  double fill = -1e9;
};

void PrintTo(const AttentionCase &c, std::ostream *os) { *os << c.name; }

class AttentionTest : public ::testing::TestWithParam<AttentionCase> {};

/// Reads a [.., Sq, Sk]-broadcast operand at (b, h, i, j), numpy rules.
double broadcastGet(const Tensor &t, const Index &full) {
  Index idx(t.shape.size());
  int offset = static_cast<int>(full.size() - t.shape.size());
  for (size_t a = 0; a < t.shape.size(); ++a)
    idx[a] = t.shape[a] == 1 ? 0 : full[a + offset];
  return t.get(idx);
}

TEST_P(AttentionTest, MatchesSoftmaxOfMaskedScores) {
  const AttentionCase &c = GetParam();
  auto dim = [&](int64_t v, bool dyn) {
    return dyn ? std::string("?") : std::to_string(v);
  };
  std::string qt = tensorType({dim(c.B, c.dynamic), std::to_string(c.H),
                               dim(c.Sq, c.dynamic), std::to_string(c.D)});
  std::string kt = tensorType({dim(c.B, c.dynamic), std::to_string(c.H),
                               dim(c.Sk, c.dynamic), std::to_string(c.D)});
  std::string vt = tensorType({dim(c.B, c.dynamic), std::to_string(c.H),
                               dim(c.Sk, c.dynamic), std::to_string(c.Dv)});
  std::string rt = tensorType({dim(c.B, c.dynamic), std::to_string(c.H),
                               dim(c.Sq, c.dynamic), std::to_string(c.Dv)});
  // Mask shapes: a size that equals B, Sq or Sk is dynamic with the rest.
  auto maskType = [&](const Shape &shape, const std::string &element) {
    std::vector<std::string> dims;
    int offset = 4 - static_cast<int>(shape.size());
    for (size_t a = 0; a < shape.size(); ++a) {
      int full = static_cast<int>(a) + offset;
      bool dyn = c.dynamic && shape[a] != 1 && full != 1;
      dims.push_back(dim(shape[a], dyn));
    }
    return tensorType(dims, element);
  };
  std::string args = "%q: " + qt + ", %k: " + kt + ", %v: " + vt;
  std::string operands = "%q, %k, %v";
  std::string types = qt + ", " + kt + ", " + vt;
  if (!c.keepShape.empty()) {
    std::string mt = maskType(c.keepShape, "i1");
    args += ", %m: " + mt;
    operands += " keep(%m)";
    types += ", " + mt;
  }
  if (!c.biasShape.empty()) {
    std::string bt = maskType(c.biasShape, "f32");
    args += ", %bias: " + bt;
    operands += " bias(%bias)";
    types += ", " + bt;
  }
  double scale = 1.0 / std::sqrt(static_cast<double>(c.D));
  char attrs[160];
  std::snprintf(attrs, sizeof(attrs), "{scale = %.17e : f64%s, fill = %.17e : f64}",
                scale, c.causal ? ", causal = true" : "", c.fill);
  std::string ir = singleOpFunc(args,
                                "tfc.fused_attention " + operands + " " +
                                    attrs + " : (" + types + ") -> " + rt,
                                rt);

  Tensor q = Tensor(DT::F32, {c.B, c.H, c.Sq, c.D}).random(-2, 2, 61);
  Tensor k = Tensor(DT::F32, {c.B, c.H, c.Sk, c.D}).random(-2, 2, 62);
  Tensor v = Tensor(DT::F32, {c.B, c.H, c.Sk, c.Dv}).random(-1, 1, 63);
  std::vector<Tensor> inputs = {q, k, v};
  Tensor keep, bias;
  if (!c.keepShape.empty()) {
    keep = Tensor(DT::Bool, c.keepShape).random(0, 1, 64);
    if (std::string(c.name).find("FullyMasked") != std::string::npos)
      for (int64_t j = 0; j < c.Sk; ++j) // query row 1 (or 0) sees no key
        keep.set({0, 0, std::min<int64_t>(1, c.Sq - 1), j}, 0);
    inputs.push_back(keep);
  }
  if (!c.biasShape.empty()) {
    bias = Tensor(DT::F32, c.biasShape).random(-3, 1, 65);
    inputs.push_back(bias);
  }
  // The host's kernel (on AVX-512F the extern stage of AttentionStage.h
  // where more than one query row), then the Halide kernel that AOT
  // libraries and emitted sources use.
  std::vector<Tensor> outputs = {Tensor(DT::F32, {c.B, c.H, c.Sq, c.Dv})};
  ASSERT_TRUE(runKernel(ir, inputs, outputs));
  std::vector<Tensor> halideOutputs = {Tensor(DT::F32, {c.B, c.H, c.Sq, c.Dv})};
  ASSERT_TRUE(runKernel(ir, inputs, halideOutputs, &noExternCache()));

  // Reference: one softmax row at a time, cached per (b, h, i).
  std::map<Index, std::vector<double>> rows;
  auto weights = [&](int64_t b, int64_t h, int64_t i) {
    Index key = {b, h, i};
    auto it = rows.find(key);
    if (it != rows.end())
      return it->second;
    std::vector<double> s(c.Sk);
    for (int64_t j = 0; j < c.Sk; ++j) {
      double dot = 0;
      for (int64_t d = 0; d < c.D; ++d)
        dot += q.get({b, h, i, d}) * k.get({b, h, j, d});
      double score = dot * scale;
      if (!c.biasShape.empty())
        score += broadcastGet(bias, {b, h, i, j});
      bool allowed = true;
      if (!c.keepShape.empty())
        allowed = broadcastGet(keep, {b, h, i, j}) != 0;
      if (c.causal)
        allowed = allowed && j <= i + (c.Sk - c.Sq);
      s[j] = allowed ? score : c.fill;
    }
    double mx = *std::max_element(s.begin(), s.end()), sum = 0;
    for (double &x : s) {
      x = std::exp(x - mx);
      sum += x;
    }
    for (double &x : s)
      x /= sum;
    rows[key] = s;
    return s;
  };
  auto expected = [&](const Index &idx) {
    std::vector<double> p = weights(idx[0], idx[1], idx[2]);
    double out = 0;
    for (int64_t j = 0; j < c.Sk; ++j)
      out += p[j] * v.get({idx[0], idx[1], j, idx[3]});
    return out;
  };
  expectClose(outputs[0], expected, 1e-4, 2e-5);
  expectClose(halideOutputs[0], expected, 1e-4, 2e-5);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, AttentionTest,
    // One case per line or two, as a table.
    // clang-format off
    ::testing::Values(
        // BERT-like: padding mask [B, 1, 1, Sk], one chunk.
        AttentionCase{"PaddingMask", 2, 3, 37, 37, 64, 64, true, false,
                      {2, 1, 1, 37}, {}},
        AttentionCase{"NoMaskStatic", 1, 2, 16, 16, 64, 64, false, false, {},
                      {}},
        // GPT-2 prefill: causal, Sq == Sk.
        AttentionCase{"CausalPrefill", 1, 2, 45, 45, 64, 64, true, true, {},
                      {}},
        // Cached decode: the queries are the last Sq of Sk positions.
        AttentionCase{"CausalDecode", 2, 2, 3, 20, 32, 32, true, true, {},
                      {}},
        AttentionCase{"CausalOneQuery", 1, 4, 1, 9, 16, 16, true, true, {},
                      {}},
        // Several chunks of the online softmax (Sk > 256), not a multiple.
        AttentionCase{"LongKeysCausal", 1, 1, 300, 600, 64, 64, true, true,
                      {}, {}},
        AttentionCase{"LongKeysMasked", 1, 2, 5, 700, 32, 48, true, false,
                      {1, 1, 5, 700}, {}},
        // A [Sq, Sk] keep matrix plus causal; random keep leaves some rows
        // fully masked (uniform weights, as the unfused graph).
        AttentionCase{"KeepMatrixCausal", 2, 2, 12, 12, 16, 16, true, true,
                      {12, 12}, {}},
        AttentionCase{"FullyMaskedRows", 1, 1, 6, 6, 8, 8, false, false,
                      {1, 1, 6, 6}, {}, -1e4},
        // A padding mask under the causal one (a padded GPT-2 batch): the
        // stage's masks in registers, cut on the diagonal tiles.
        AttentionCase{"PaddingMaskCausal", 2, 2, 45, 45, 64, 64, true, true,
                      {2, 1, 1, 45}, {}},
        // Additive bias (BERT's extended attention mask) and both.
        AttentionCase{"AdditiveBias", 2, 2, 10, 14, 24, 40, true, false, {},
                      {2, 1, 1, 14}},
        AttentionCase{"BiasAndKeep", 1, 3, 9, 9, 64, 64, true, true,
                      {1, 1, 1, 9}, {1, 3, 9, 9}},
        // More queries than keys under the causal mask: the first rows see
        // no key (uniform weights over all of them: no keys skipped).
        AttentionCase{"CausalMoreQueriesThanKeys", 1, 2, 10, 6, 16, 16, true,
                      true, {}, {}},
        // Value channels past the P V tile's 64 (a tile of 64, then one
        // masked vector of 16).
        AttentionCase{"WideValues", 1, 2, 9, 33, 32, 80, true, true, {}, {}},
        // Small head dims (not a multiple of the vector width).
        AttentionCase{"TinyHeads", 3, 2, 7, 11, 4, 5, false, false,
                      {3, 1, 1, 11}, {}},
        // One query row (a decode step): with Sq static (1) the one-row
        // kernel, dot products along D and one softmax over all keys
        // (FusedKernels.cpp; the planner compiles it from a copy of the op
        // with Sq = 1); with Sq dynamic the general kernel computes the row.
        AttentionCase{"DecodeLongCache", 2, 3, 1, 1001, 64, 64, true, true,
                      {}, {}},
        AttentionCase{"DecodeOddDv", 1, 2, 1, 19, 16, 20, false, true, {},
                      {}},
        AttentionCase{"DecodeKeepAndBias", 2, 2, 1, 37, 32, 48, true, false,
                      {2, 1, 1, 37}, {2, 2, 1, 37}},
        AttentionCase{"DecodeFullyMasked", 1, 1, 1, 6, 16, 16, false, false,
                      {1, 1, 1, 6}, {}, -1e4},
        // ... and with a head dim that is not a multiple of 16: the general
        // kernel.
        AttentionCase{"DecodeTinyHeads", 2, 2, 1, 11, 4, 5, true, true, {},
                      {}}),
    // clang-format on
    [](const ::testing::TestParamInfo<AttentionCase> &info) {
      return std::string(info.param.name);
    });

} // namespace

namespace {

//===----------------------------------------------------------------------===//
// CUDA schedules lower (no GPU needed; see CudaCompileTest.cpp)
//===----------------------------------------------------------------------===//

TEST(FusedKernelsCudaTest, SchedulesLowerToPTX) {
  const std::string t = "tensor<?x?x64xf32>";
  const std::string q = "tensor<?x4x?x16xf32>";
  const std::string m = "tensor<?x1x1x?xi1>";
  std::vector<std::string> irs = {
      singleOpFunc("%x: " + t + ", %w: tensor<32x64xf32>, %b: tensor<32xf32>",
                   "tfc.linear %x, %w, %b {activation = \"gelu\", "
                   "transpose_b = true} : (" +
                       t +
                       ", tensor<32x64xf32>, tensor<32xf32>) -> "
                       "tensor<?x?x32xf32>",
                   "tensor<?x?x32xf32>"),
      "func.func @f(%a: " + t + ", %b: " + t +
          ", %g: tensor<64xf32>, %be: tensor<64xf32>) -> (" + t + ", " + t +
          ") {\n  %y, %s = tfc.add_layer_norm %a, %b, %g, %be {epsilon = "
          "1.0e-05 : f64, with_sum} : (" +
          t + ", " + t + ", tensor<64xf32>, tensor<64xf32>) -> (" + t + ", " +
          t + ")\n  return %y, %s : " + t + ", " + t + "\n}\n",
      singleOpFunc("%a: " + t + ", %b: " + t +
                       ", %g: tensor<64xf32>, %be: tensor<64xf32>",
                   "tfc.add_layer_norm %a, %b, %g, %be {epsilon = 1.0e-05 : "
                   "f64} : (" +
                       t + ", " + t + ", tensor<64xf32>, tensor<64xf32>) -> " +
                       t,
                   t),
      singleOpFunc("%q: " + q + ", %k: " + q + ", %v: " + q + ", %m: " + m,
                   "tfc.fused_attention %q, %k, %v keep(%m) {scale = 0.25 : "
                   "f64, causal = true} : (" +
                       q + ", " + q + ", " + q + ", " + m + ") -> " + q,
                   q)};
  for (const std::string &ir : irs) {
    ParsedOp parsed = parseOp(ir);
    ASSERT_NE(parsed.op, nullptr);
    Halide::Target cuda = tfc::codegen::cudaTarget();
    auto kernel = tfc::codegen::buildKernel(parsed.op, cuda);
    ASSERT_TRUE(static_cast<bool>(kernel))
        << llvm::toString(kernel.takeError());
    auto stmt = tfc::codegen::loweredStmt(*kernel, cuda);
    ASSERT_TRUE(static_cast<bool>(stmt)) << llvm::toString(stmt.takeError());
    EXPECT_NE(stmt->find("halide_cuda_run"), std::string::npos);
  }
}

} // namespace

namespace {

// The tiled transpose schedule (DataMovementKernels.cpp) that the weight
// prologue runs on [out, in] weights: static axes >= 16, tails by shifting.
TEST(TiledTransposeTest, WeightShapes) {
  for (Shape shape : {Shape{40, 24}, Shape{16, 16}, Shape{3, 37, 50}}) {
    int rank = static_cast<int>(shape.size());
    Shape rShape = shape;
    std::swap(rShape[rank - 1], rShape[rank - 2]);
    auto type = [](const Shape &s) {
      std::string t = "tensor<";
      for (int64_t d : s)
        t += std::to_string(d) + "x";
      return t + "f32>";
    };
    std::string perm = rank == 2 ? "1, 0" : "0, 2, 1";
    std::string ir = singleOpFunc(
        "%x: " + type(shape),
        "tfc.transpose %x {perm = array<i64: " + perm + ">} : " + type(shape) +
            " -> " + type(rShape),
        type(rShape));
    Tensor x = Tensor(DT::F32, shape).random(-1, 1, 71);
    Tensor out = runOp(ir, {x}, DT::F32, rShape);
    expectClose(
        out,
        [&](const Index &i) {
          Index src = i;
          std::swap(src[rank - 1], src[rank - 2]);
          return x.get(src);
        },
        0, 0);
  }
}

} // namespace
