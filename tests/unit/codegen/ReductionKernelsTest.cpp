//===- ReductionKernelsTest.cpp - Reductions, softmax and norms -----------===//

#include "CodegenTestUtil.h"

#include <cmath>
#include <limits>

using namespace tfc::test;

namespace {

/// Reduces `x` along `axis` with `combine`, starting from `init`, for the
/// result index `i` (which has the axis if keepdim).
double reduceRef(const Tensor &x, int axis, bool keepdim, const Index &i,
                 double init, double (*combine)(double, double)) {
  Index xi;
  for (int d = 0, v = 0; d < static_cast<int>(x.shape.size()); ++d) {
    if (d == axis) {
      xi.push_back(0);
      if (keepdim)
        ++v;
    } else {
      xi.push_back(i[v++]);
    }
  }
  double acc = init;
  for (int64_t r = 0; r < x.shape[axis]; ++r) {
    xi[axis] = r;
    acc = combine(acc, x.get(xi));
  }
  return acc;
}

double plus(double a, double b) { return a + b; }
double maxOf(double a, double b) { return std::max(a, b); }

struct ReduceCase {
  const char *op;
  const char *inType;
  const char *outType;
  Shape inShape, outShape;
  int axis;
  bool keepdim;
  DT dtype;
};

void PrintTo(const ReduceCase &c, std::ostream *os) {
  *os << c.op << " " << c.inType << " axis " << c.axis;
}

class ReduceTest : public ::testing::TestWithParam<ReduceCase> {};

TEST_P(ReduceTest, MatchesReference) {
  const ReduceCase &c = GetParam();
  std::string attrs = "{axis = " + std::to_string(c.axis) + " : i64" +
                      (c.keepdim ? ", keepdim = true" : "") + "}";
  std::string ir = singleOpFunc(std::string("%x: ") + c.inType,
                                std::string("tfc.") + c.op + " %x " + attrs +
                                    " : " + c.inType + " -> " + c.outType,
                                c.outType);
  Tensor x = Tensor(c.dtype, c.inShape).random(-10, 10, 31);
  Tensor out = runOp(ir, {x}, c.dtype, c.outShape);
  std::string op = c.op;
  expectClose(
      out,
      [&](const Index &i) {
        if (op == "reduce_max")
          return reduceRef(x, c.axis, c.keepdim, i,
                           -std::numeric_limits<double>::infinity(), maxOf);
        double sum = reduceRef(x, c.axis, c.keepdim, i, 0, plus);
        return op == "reduce_mean" ? sum / x.shape[c.axis] : sum;
      },
      1e-5, 1e-5);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ReduceTest,
    ::testing::Values(
        // Innermost axis (vectorized by lanes), dynamic rows and length.
        ReduceCase{"reduce_sum",
                   "tensor<?x?xf32>",
                   "tensor<?xf32>",
                   {5, 77},
                   {5},
                   1,
                   false,
                   DT::F32},
        ReduceCase{"reduce_mean",
                   "tensor<?x?x40xf32>",
                   "tensor<?x?x1xf32>",
                   {2, 3, 40},
                   {2, 3, 1},
                   2,
                   true,
                   DT::F32},
        ReduceCase{"reduce_max",
                   "tensor<?x35xf32>",
                   "tensor<?xf32>",
                   {6, 35},
                   {6},
                   1,
                   false,
                   DT::F32},
        // Outer axes (vectorized along the kept innermost axis).
        ReduceCase{"reduce_sum",
                   "tensor<?x?x20xf32>",
                   "tensor<?x20xf32>",
                   {2, 9, 20},
                   {2, 20},
                   1,
                   false,
                   DT::F32},
        ReduceCase{"reduce_mean",
                   "tensor<?x?x20xf32>",
                   "tensor<?x1x20xf32>",
                   {2, 9, 20},
                   {2, 1, 20},
                   1,
                   true,
                   DT::F32},
        ReduceCase{"reduce_max",
                   "tensor<?x3xf32>",
                   "tensor<3xf32>",
                   {11, 3},
                   {3},
                   0,
                   false,
                   DT::F32},
        // Whole vector to a scalar.
        ReduceCase{"reduce_sum",
                   "tensor<?xf32>",
                   "tensor<f32>",
                   {100},
                   {},
                   0,
                   false,
                   DT::F32},
        // Integers accumulate in their type.
        ReduceCase{"reduce_sum",
                   "tensor<?x?xi32>",
                   "tensor<?xi32>",
                   {4, 50},
                   {4},
                   1,
                   false,
                   DT::I32},
        ReduceCase{"reduce_max",
                   "tensor<?x?xi64>",
                   "tensor<?xi64>",
                   {4, 50},
                   {50},
                   0,
                   false,
                   DT::I64}),
    [](const ::testing::TestParamInfo<ReduceCase> &info) {
      return std::string(info.param.op) + "_" + std::to_string(info.index);
    });

/// Softmax of `x` along `axis` in double.
double softmaxRef(const Tensor &x, int axis, const Index &i) {
  Index j = i;
  double mx = -std::numeric_limits<double>::infinity();
  for (int64_t r = 0; r < x.shape[axis]; ++r) {
    j[axis] = r;
    mx = std::max(mx, x.get(j));
  }
  double sum = 0;
  for (int64_t r = 0; r < x.shape[axis]; ++r) {
    j[axis] = r;
    sum += std::exp(x.get(j) - mx);
  }
  return std::exp(x.get(i) - mx) / sum;
}

TEST(SoftmaxTest, LastAxisWithMaskedEntries) {
  std::string t = "tensor<?x2x?x?xf32>";
  std::string ir =
      singleOpFunc("%x: " + t, "tfc.softmax %x {axis = 3 : i64} : " + t, t);
  Tensor x = Tensor(DT::F32, {2, 2, 5, 37}).random(-30, 30, 3);
  // A causal-style mask: -1e9 above the diagonal, and one row fully masked
  // (which gives the uniform distribution, as PyTorch).
  forEachIndex(x.shape, [&](const Index &i) {
    if (i[3] > i[2] + 30)
      x.set(i, -1e9);
    if (i[0] == 1 && i[1] == 1 && i[2] == 4)
      x.set(i, -1e9);
  });
  Tensor out = runOp(ir, {x}, DT::F32, x.shape);
  expectClose(out, [&](const Index &i) { return softmaxRef(x, 3, i); });
  EXPECT_NEAR(out.get({1, 1, 4, 0}), 1.0 / 37, 1e-7);
}

TEST(SoftmaxTest, MinusInfinityMasksGiveZero) {
  // Additive -inf masks (Halide compiles with no-infinity fast math, so
  // this checks that exp(-inf - max) still comes out as 0).
  std::string t = "tensor<?x?xf32>";
  std::string ir =
      singleOpFunc("%x: " + t, "tfc.softmax %x {axis = 1 : i64} : " + t, t);
  Tensor x = Tensor(DT::F32, {4, 40}).random(-5, 5, 8);
  forEachIndex(x.shape, [&](const Index &i) {
    if (i[1] > i[0] * 10 + 3)
      x.set(i, -std::numeric_limits<double>::infinity());
  });
  Tensor out = runOp(ir, {x}, DT::F32, x.shape);
  expectClose(out, [&](const Index &i) { return softmaxRef(x, 1, i); });
  EXPECT_EQ(out.get({0, 39}), 0.0);
}

TEST(SoftmaxTest, LargeLogitsDoNotOverflow) {
  // Without the max subtraction exp(100) overflows f32.
  std::string t = "tensor<?x16xf32>";
  std::string ir =
      singleOpFunc("%x: " + t, "tfc.softmax %x {axis = 1 : i64} : " + t, t);
  Tensor x = Tensor(DT::F32, {3, 16}).random(90, 100, 4);
  Tensor out = runOp(ir, {x}, DT::F32, x.shape);
  expectClose(out, [&](const Index &i) { return softmaxRef(x, 1, i); });
}

TEST(SoftmaxTest, MiddleAxis) {
  std::string t = "tensor<?x?x24xf32>";
  std::string ir =
      singleOpFunc("%x: " + t, "tfc.softmax %x {axis = 1 : i64} : " + t, t);
  Tensor x = Tensor(DT::F32, {3, 7, 24}).random(-5, 5, 5);
  Tensor out = runOp(ir, {x}, DT::F32, x.shape);
  expectClose(out, [&](const Index &i) { return softmaxRef(x, 1, i); });
}

TEST(SoftmaxTest, FirstAxisOfMatrixAndVector) {
  std::string t = "tensor<?x5xf32>";
  Tensor x = Tensor(DT::F32, {9, 5}).random(-5, 5, 6);
  Tensor out = runOp(
      singleOpFunc("%x: " + t, "tfc.softmax %x {axis = 0 : i64} : " + t, t),
      {x}, DT::F32, x.shape);
  expectClose(out, [&](const Index &i) { return softmaxRef(x, 0, i); });

  std::string v = "tensor<?xf32>";
  Tensor y = Tensor(DT::F32, {50}).random(-5, 5, 7);
  Tensor outV = runOp(
      singleOpFunc("%x: " + v, "tfc.softmax %x {axis = 0 : i64} : " + v, v),
      {y}, DT::F32, y.shape);
  expectClose(outV, [&](const Index &i) { return softmaxRef(y, 0, i); });
}

double layerNormRef(const Tensor &x, const Tensor &g, const Tensor *b,
                    double eps, const Index &i, bool rms) {
  int last = static_cast<int>(x.shape.size()) - 1;
  int64_t n = x.shape[last];
  Index j = i;
  double sum = 0, sumsq = 0;
  for (int64_t r = 0; r < n; ++r) {
    j[last] = r;
    sum += x.get(j);
    sumsq += x.get(j) * x.get(j);
  }
  double v = x.get(i);
  if (rms)
    return v / std::sqrt(sumsq / n + eps) * g.get({i[last]});
  double mean = sum / n;
  double var = 0;
  for (int64_t r = 0; r < n; ++r) {
    j[last] = r;
    var += (x.get(j) - mean) * (x.get(j) - mean);
  }
  var /= n; // biased, as PyTorch
  return (v - mean) / std::sqrt(var + eps) * g.get({i[last]}) +
         b->get({i[last]});
}

TEST(NormTest, LayerNormWithDynamicRows) {
  std::string ir = singleOpFunc(
      "%x: tensor<?x?x48xf32>, %g: tensor<48xf32>, %b: tensor<48xf32>",
      "tfc.layer_norm %x, %g, %b {epsilon = 1.0e-05 : f64} : "
      "(tensor<?x?x48xf32>, tensor<48xf32>, tensor<48xf32>) -> "
      "tensor<?x?x48xf32>",
      "tensor<?x?x48xf32>");
  Tensor x = Tensor(DT::F32, {2, 7, 48}).random(-3, 5, 41);
  Tensor g = Tensor(DT::F32, {48}).random(0.5, 1.5, 42);
  Tensor b = Tensor(DT::F32, {48}).random(-1, 1, 43);
  Tensor out = runOp(ir, {x, g, b}, DT::F32, x.shape);
  expectClose(
      out,
      [&](const Index &i) { return layerNormRef(x, g, &b, 1e-5, i, false); },
      1e-4, 1e-5);
}

TEST(NormTest, LayerNormEpsilonIsApplied) {
  // Rows of tiny variance: the result depends on epsilon strongly.
  std::string ir = singleOpFunc(
      "%x: tensor<?x20xf32>, %g: tensor<20xf32>, %b: tensor<20xf32>",
      "tfc.layer_norm %x, %g, %b {epsilon = 5.0e-01 : f64} : "
      "(tensor<?x20xf32>, tensor<20xf32>, tensor<20xf32>) -> "
      "tensor<?x20xf32>",
      "tensor<?x20xf32>");
  Tensor x = Tensor(DT::F32, {3, 20}).random(-0.1, 0.1, 44);
  Tensor g = Tensor(DT::F32, {20}).fill([](const Index &) { return 1.0; });
  Tensor b = Tensor(DT::F32, {20});
  Tensor out = runOp(ir, {x, g, b}, DT::F32, x.shape);
  expectClose(
      out,
      [&](const Index &i) { return layerNormRef(x, g, &b, 0.5, i, false); },
      1e-4, 1e-6);
  // With eps = 0.5 the outputs stay far below the unit variance they would
  // have without it.
  EXPECT_LT(std::abs(out.get({0, 0})), 0.2);
}

TEST(NormTest, LayerNormOfShortRowsAndLargeMean) {
  // Rows shorter than a vector; a large common offset tests the two-pass
  // variance.
  std::string ir = singleOpFunc(
      "%x: tensor<?x6xf32>, %g: tensor<6xf32>, %b: tensor<6xf32>",
      "tfc.layer_norm %x, %g, %b {epsilon = 1.0e-05 : f64} : "
      "(tensor<?x6xf32>, tensor<6xf32>, tensor<6xf32>) -> tensor<?x6xf32>",
      "tensor<?x6xf32>");
  Tensor x = Tensor(DT::F32, {5, 6}).random(999, 1001, 45);
  Tensor g = Tensor(DT::F32, {6}).random(0.5, 1.5, 46);
  Tensor b = Tensor(DT::F32, {6}).random(-1, 1, 47);
  Tensor out = runOp(ir, {x, g, b}, DT::F32, x.shape);
  expectClose(
      out,
      [&](const Index &i) { return layerNormRef(x, g, &b, 1e-5, i, false); },
      1e-3, 1e-3);
}

TEST(NormTest, RmsNorm) {
  std::string ir =
      singleOpFunc("%x: tensor<?x?x40xf32>, %g: tensor<40xf32>",
                   "tfc.rms_norm %x, %g {epsilon = 1.0e-06 : f64} : "
                   "(tensor<?x?x40xf32>, tensor<40xf32>) -> tensor<?x?x40xf32>",
                   "tensor<?x?x40xf32>");
  Tensor x = Tensor(DT::F32, {2, 3, 40}).random(-2, 2, 48);
  Tensor g = Tensor(DT::F32, {40}).random(0.5, 1.5, 49);
  Tensor out = runOp(ir, {x, g}, DT::F32, x.shape);
  expectClose(
      out,
      [&](const Index &i) {
        return layerNormRef(x, g, nullptr, 1e-6, i, true);
      },
      1e-5, 1e-6);
}

TEST(NormTest, LayerNormOfVector) {
  std::string ir = singleOpFunc(
      "%x: tensor<?xf32>, %g: tensor<?xf32>, %b: tensor<?xf32>",
      "tfc.layer_norm %x, %g, %b {epsilon = 1.0e-05 : f64} : "
      "(tensor<?xf32>, tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>",
      "tensor<?xf32>");
  Tensor x = Tensor(DT::F32, {33}).random(-2, 2, 50);
  Tensor g = Tensor(DT::F32, {33}).random(0.5, 1.5, 51);
  Tensor b = Tensor(DT::F32, {33}).random(-1, 1, 52);
  Tensor out = runOp(ir, {x, g, b}, DT::F32, x.shape);
  expectClose(
      out,
      [&](const Index &i) { return layerNormRef(x, g, &b, 1e-5, i, false); },
      1e-4, 1e-5);
}

} // namespace
