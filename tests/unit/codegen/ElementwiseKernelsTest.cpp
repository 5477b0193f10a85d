//===- ElementwiseKernelsTest.cpp - Pointwise kernels against references --===//

#include "CodegenTestUtil.h"

#include <cmath>
#include <limits>

using namespace tfc::test;

namespace {

double geluErf(double x) {
  return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
}
double geluTanh(double x) {
  return 0.5 * x *
         (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
}
double sigmoid(double x) { return 1 / (1 + std::exp(-x)); }

struct UnaryCase {
  const char *op;
  const char *attrs;
  double (*ref)(double);
  double lo, hi;
};

void PrintTo(const UnaryCase &c, std::ostream *os) {
  *os << c.op << " on [" << c.lo << ", " << c.hi << "]";
}

class UnaryTest : public ::testing::TestWithParam<UnaryCase> {};

TEST_P(UnaryTest, MatchesReferenceWithDynamicRows) {
  const UnaryCase &c = GetParam();
  std::string type = "tensor<?x37xf32>";
  std::string ir = singleOpFunc(
      "%x: " + type,
      std::string("tfc.") + c.op + " %x " + c.attrs + ": " + type, type);
  Tensor x = Tensor(DT::F32, {3, 37}).random(c.lo, c.hi, 7);
  Tensor out = runOp(ir, {x}, DT::F32, {3, 37});
  expectClose(out, [&](const Index &i) { return c.ref(x.get(i)); });
}

INSTANTIATE_TEST_SUITE_P(
    Ops, UnaryTest,
    ::testing::Values(
        UnaryCase{"neg", "", [](double x) { return -x; }, -10, 10},
        UnaryCase{"exp", "", [](double x) { return std::exp(x); }, -20, 20},
        UnaryCase{"log", "", [](double x) { return std::log(x); }, 1e-3, 1e3},
        UnaryCase{"sqrt", "", [](double x) { return std::sqrt(x); }, 0, 100},
        UnaryCase{"rsqrt", "", [](double x) { return 1 / std::sqrt(x); }, 1e-3,
                  100},
        UnaryCase{"tanh", "", [](double x) { return std::tanh(x); }, -12, 12},
        UnaryCase{"tanh", "", [](double x) { return std::tanh(x); }, -0.4, 0.4},
        UnaryCase{"erf", "", [](double x) { return std::erf(x); }, -5, 5},
        UnaryCase{"erf", "", [](double x) { return std::erf(x); }, -0.01, 0.01},
        UnaryCase{"relu", "", [](double x) { return std::max(x, 0.0); }, -5, 5},
        UnaryCase{"sigmoid", "", sigmoid, -30, 30},
        UnaryCase{"silu", "", [](double x) { return x * sigmoid(x); }, -30, 30},
        UnaryCase{"sin", "", [](double x) { return std::sin(x); }, -10, 10},
        UnaryCase{"cos", "", [](double x) { return std::cos(x); }, -10, 10},
        UnaryCase{"gelu", "", geluErf, -8, 8},
        UnaryCase{"gelu", "{approximate = \"none\"} ", geluErf, -3, 3},
        UnaryCase{"gelu", "{approximate = \"tanh\"} ", geluTanh, -8, 8}),
    [](const ::testing::TestParamInfo<UnaryCase> &info) {
      return std::string(info.param.op) + "_" + std::to_string(info.index);
    });

//===----------------------------------------------------------------------===//
// Binary ops with numpy broadcasting
//===----------------------------------------------------------------------===//

struct BinaryCase {
  const char *op;
  double (*ref)(double, double);
  double bLo, bHi;
};

void PrintTo(const BinaryCase &c, std::ostream *os) { *os << c.op; }

class BinaryF32Test : public ::testing::TestWithParam<BinaryCase> {};

// [?, 1, 5] op [4, 1] -> [?, 4, 5]: both operands broadcast, one has a
// missing leading dim, the batch is dynamic.
TEST_P(BinaryF32Test, Broadcasts) {
  const BinaryCase &c = GetParam();
  std::string ir =
      singleOpFunc("%a: tensor<?x1x5xf32>, %b: tensor<4x1xf32>",
                   std::string("tfc.") + c.op +
                       " %a, %b : (tensor<?x1x5xf32>, tensor<4x1xf32>) -> "
                       "tensor<?x4x5xf32>",
                   "tensor<?x4x5xf32>");
  Tensor a = Tensor(DT::F32, {2, 1, 5}).random(0.1, 3, 1);
  Tensor b = Tensor(DT::F32, {4, 1}).random(c.bLo, c.bHi, 2);
  Tensor out = runOp(ir, {a, b}, DT::F32, {2, 4, 5});
  expectClose(out, [&](const Index &i) {
    return c.ref(a.get({i[0], 0, i[2]}), b.get({i[1], 0}));
  });
}

INSTANTIATE_TEST_SUITE_P(
    Ops, BinaryF32Test,
    ::testing::Values(
        BinaryCase{"add", [](double a, double b) { return a + b; }, -3, 3},
        BinaryCase{"sub", [](double a, double b) { return a - b; }, -3, 3},
        BinaryCase{"mul", [](double a, double b) { return a * b; }, -3, 3},
        BinaryCase{"div", [](double a, double b) { return a / b; }, 0.5, 3},
        BinaryCase{"pow", [](double a, double b) { return std::pow(a, b); }, -2,
                   3},
        BinaryCase{"maximum", [](double a, double b) { return std::max(a, b); },
                   0, 3},
        BinaryCase{"minimum", [](double a, double b) { return std::min(a, b); },
                   0, 3}),
    [](const ::testing::TestParamInfo<BinaryCase> &info) {
      return std::string(info.param.op);
    });

TEST(ElementwiseTest, PowOfNegativeBaseWithIntegerExponent) {
  std::string t = "tensor<6xf32>";
  std::string ir =
      singleOpFunc("%a: " + t + ", %b: " + t,
                   "tfc.pow %a, %b : (" + t + ", " + t + ") -> " + t, t);
  Tensor a =
      Tensor(DT::F32, {6}).fill([](const Index &i) { return -1.5 - i[0]; });
  Tensor b = Tensor(DT::F32, {6}).fill([](const Index &i) {
    return double(i[0] % 3);
  });
  Tensor out = runOp(ir, {a, b}, DT::F32, {6});
  expectClose(out,
              [&](const Index &i) { return std::pow(a.get(i), b.get(i)); });
}

TEST(ElementwiseTest, ScalarOperandBroadcastsEverywhere) {
  std::string ir = singleOpFunc(
      "%a: tensor<?x?xf32>, %s: tensor<f32>",
      "tfc.mul %a, %s : (tensor<?x?xf32>, tensor<f32>) -> tensor<?x?xf32>",
      "tensor<?x?xf32>");
  Tensor a = Tensor(DT::F32, {5, 21}).random(-1, 1, 3);
  Tensor s(DT::F32, {});
  s.set({}, 0.125);
  Tensor out = runOp(ir, {a, s}, DT::F32, {5, 21});
  expectClose(out, [&](const Index &i) { return a.get(i) * 0.125; });
}

TEST(ElementwiseTest, DynamicDimMeetsStaticOne) {
  // [?, 1] + [1, ?] -> [?, ?]: an outer sum.
  std::string ir = singleOpFunc(
      "%a: tensor<?x1xf32>, %b: tensor<1x?xf32>",
      "tfc.add %a, %b : (tensor<?x1xf32>, tensor<1x?xf32>) -> tensor<?x?xf32>",
      "tensor<?x?xf32>");
  Tensor a = Tensor(DT::F32, {7, 1}).random(-1, 1, 4);
  Tensor b = Tensor(DT::F32, {1, 19}).random(-1, 1, 5);
  Tensor out = runOp(ir, {a, b}, DT::F32, {7, 19});
  expectClose(out, [&](const Index &i) {
    return a.get({i[0], 0}) + b.get({0, i[1]});
  });
}

//===----------------------------------------------------------------------===//
// Integer arithmetic
//===----------------------------------------------------------------------===//

struct IntCase {
  const char *op;
  const char *type; // i32 or i64
  int64_t (*ref)(int64_t, int64_t);
};

void PrintTo(const IntCase &c, std::ostream *os) {
  *os << c.op << " " << c.type;
}

class IntBinaryTest : public ::testing::TestWithParam<IntCase> {};

TEST_P(IntBinaryTest, MatchesReference) {
  const IntCase &c = GetParam();
  std::string t = std::string("tensor<?x9x") + c.type + ">";
  std::string ir = singleOpFunc("%a: " + t + ", %b: " + t,
                                std::string("tfc.") + c.op + " %a, %b : (" + t +
                                    ", " + t + ") -> " + t,
                                t);
  DT dt = std::string(c.type) == "i32" ? DT::I32 : DT::I64;
  Tensor a = Tensor(dt, {4, 9}).random(-50, 50, 11);
  // Non-zero divisors of both signs.
  Tensor b = Tensor(dt, {4, 9}).fill([](const Index &i) {
    int64_t v = (i[0] * 9 + i[1]) % 7 + 1;
    return double((i[1] % 2) ? -v : v);
  });
  Tensor out = runOp(ir, {a, b}, dt, {4, 9});
  expectClose(
      out,
      [&](const Index &i) {
        return double(c.ref(int64_t(a.get(i)), int64_t(b.get(i))));
      },
      0, 0);
}

INSTANTIATE_TEST_SUITE_P(
    Ops, IntBinaryTest,
    ::testing::Values(
        IntCase{"add", "i32", [](int64_t a, int64_t b) { return a + b; }},
        IntCase{"sub", "i32", [](int64_t a, int64_t b) { return a - b; }},
        IntCase{"mul", "i32", [](int64_t a, int64_t b) { return a * b; }},
        // C division: truncates toward zero (-7 / 2 == -3).
        IntCase{"div", "i32", [](int64_t a, int64_t b) { return a / b; }},
        IntCase{"maximum", "i32",
                [](int64_t a, int64_t b) { return std::max(a, b); }},
        IntCase{"minimum", "i32",
                [](int64_t a, int64_t b) { return std::min(a, b); }},
        IntCase{"add", "i64", [](int64_t a, int64_t b) { return a + b; }},
        IntCase{"div", "i64", [](int64_t a, int64_t b) { return a / b; }}),
    [](const ::testing::TestParamInfo<IntCase> &info) {
      return std::string(info.param.op) + "_" + info.param.type;
    });

TEST(ElementwiseTest, IntegerNeg) {
  std::string t = "tensor<?xi64>";
  Tensor a = Tensor(DT::I64, {33}).random(-1000, 1000, 3);
  Tensor out = runOp(singleOpFunc("%a: " + t, "tfc.neg %a : " + t, t), {a},
                     DT::I64, {33});
  expectClose(
      out, [&](const Index &i) { return -a.get(i); }, 0, 0);
}

//===----------------------------------------------------------------------===//
// Booleans: logic, comparisons, where, casts
//===----------------------------------------------------------------------===//

TEST(ElementwiseTest, LogicOpsOnBytes) {
  std::string t = "tensor<?x17xi1>";
  Tensor a = Tensor(DT::Bool, {3, 17}).random(0, 1, 1);
  Tensor b = Tensor(DT::Bool, {3, 17}).random(0, 1, 2);
  // Any non-zero byte is true: put a 7 in.
  a.buffer.as<uint8_t>()(0, 0) = 7;
  auto binary = [&](const char *op) {
    return singleOpFunc("%a: " + t + ", %b: " + t,
                        std::string("tfc.") + op + " %a, %b : (" + t + ", " +
                            t + ") -> " + t,
                        t);
  };
  Tensor andOut = runOp(binary("and"), {a, b}, DT::Bool, {3, 17});
  expectClose(
      andOut,
      [&](const Index &i) { return double(a.get(i) != 0 && b.get(i) != 0); }, 0,
      0);
  Tensor orOut = runOp(binary("or"), {a, b}, DT::Bool, {3, 17});
  expectClose(
      orOut,
      [&](const Index &i) { return double(a.get(i) != 0 || b.get(i) != 0); }, 0,
      0);
  Tensor notOut = runOp(singleOpFunc("%a: " + t, "tfc.not %a : " + t, t), {a},
                        DT::Bool, {3, 17});
  expectClose(
      notOut, [&](const Index &i) { return double(a.get(i) == 0); }, 0, 0);
}

struct CmpCase {
  const char *pred;
  bool (*ref)(double, double);
};

void PrintTo(const CmpCase &c, std::ostream *os) { *os << c.pred; }

class CmpTest : public ::testing::TestWithParam<CmpCase> {};

TEST_P(CmpTest, FloatsWithBroadcastAndNaN) {
  const CmpCase &c = GetParam();
  std::string ir = singleOpFunc(
      "%a: tensor<?x8xf32>, %b: tensor<8xf32>",
      std::string("tfc.cmp ") + c.pred +
          ", %a, %b : (tensor<?x8xf32>, tensor<8xf32>) -> tensor<?x8xi1>",
      "tensor<?x8xi1>");
  // Small integers so that equality happens.
  Tensor a = Tensor(DT::F32, {5, 8}).fill([](const Index &i) {
    return double((i[0] * 3 + i[1]) % 4);
  });
  a.set({0, 0}, std::numeric_limits<double>::quiet_NaN());
  Tensor b = Tensor(DT::F32, {8}).fill([](const Index &i) {
    return double(i[0] % 4);
  });
  Tensor out = runOp(ir, {a, b}, DT::Bool, {5, 8});
  expectClose(
      out,
      [&](const Index &i) { return double(c.ref(a.get(i), b.get({i[1]}))); }, 0,
      0);
}

TEST_P(CmpTest, Integers) {
  const CmpCase &c = GetParam();
  std::string ir = singleOpFunc(
      "%a: tensor<?x?xi32>, %b: tensor<i32>",
      std::string("tfc.cmp ") + c.pred +
          ", %a, %b : (tensor<?x?xi32>, tensor<i32>) -> tensor<?x?xi1>",
      "tensor<?x?xi1>");
  Tensor a = Tensor(DT::I32, {3, 11}).random(-3, 3, 9);
  Tensor b(DT::I32, {});
  b.set({}, 0);
  Tensor out = runOp(ir, {a, b}, DT::Bool, {3, 11});
  expectClose(
      out, [&](const Index &i) { return double(c.ref(a.get(i), 0)); }, 0, 0);
}

INSTANTIATE_TEST_SUITE_P(
    Predicates, CmpTest,
    ::testing::Values(CmpCase{"eq", [](double a, double b) { return a == b; }},
                      // Unordered: NaN != x is true.
                      CmpCase{"ne", [](double a, double b) { return a != b; }},
                      CmpCase{"lt", [](double a, double b) { return a < b; }},
                      CmpCase{"le", [](double a, double b) { return a <= b; }},
                      CmpCase{"gt", [](double a, double b) { return a > b; }},
                      CmpCase{"ge", [](double a, double b) { return a >= b; }}),
    [](const ::testing::TestParamInfo<CmpCase> &info) {
      return std::string(info.param.pred);
    });

TEST(ElementwiseTest, CmpOfBooleans) {
  std::string t = "tensor<?xi1>";
  std::string ir =
      singleOpFunc("%a: " + t + ", %b: " + t,
                   "tfc.cmp eq, %a, %b : (" + t + ", " + t + ") -> " + t, t);
  Tensor a = Tensor(DT::Bool, {20}).random(0, 1, 4);
  Tensor b = Tensor(DT::Bool, {20}).random(0, 1, 5);
  a.buffer.as<uint8_t>()(3) = 9; // also true
  Tensor out = runOp(ir, {a, b}, DT::Bool, {20});
  expectClose(
      out,
      [&](const Index &i) {
        return double((a.get(i) != 0) == (b.get(i) != 0));
      },
      0, 0);
}

TEST(ElementwiseTest, WhereBroadcastsAllThree) {
  // Masked fill: cond [?, 1, 6] (per key), scores [?, 3, 6], fill scalar.
  std::string ir = singleOpFunc(
      "%c: tensor<?x1x6xi1>, %t: tensor<?x3x6xf32>, %f: tensor<f32>",
      "tfc.where %c, %t, %f : (tensor<?x1x6xi1>, tensor<?x3x6xf32>, "
      "tensor<f32>) -> tensor<?x3x6xf32>",
      "tensor<?x3x6xf32>");
  Tensor c = Tensor(DT::Bool, {2, 1, 6}).random(0, 1, 8);
  Tensor t = Tensor(DT::F32, {2, 3, 6}).random(-1, 1, 9);
  Tensor f(DT::F32, {});
  f.set({}, -1e9);
  Tensor out = runOp(ir, {c, t, f}, DT::F32, {2, 3, 6});
  expectClose(
      out,
      [&](const Index &i) {
        return c.get({i[0], 0, i[2]}) != 0 ? t.get(i) : -1e9;
      },
      0, 0);
}

TEST(ElementwiseTest, WhereOnIntegers) {
  std::string ir = singleOpFunc(
      "%c: tensor<?xi1>, %t: tensor<?xi64>, %f: tensor<?xi64>",
      "tfc.where %c, %t, %f : (tensor<?xi1>, tensor<?xi64>, tensor<?xi64>) "
      "-> tensor<?xi64>",
      "tensor<?xi64>");
  Tensor c = Tensor(DT::Bool, {40}).random(0, 1, 8);
  Tensor t = Tensor(DT::I64, {40}).random(-100, 100, 9);
  Tensor f = Tensor(DT::I64, {40}).random(-100, 100, 10);
  Tensor out = runOp(ir, {c, t, f}, DT::I64, {40});
  expectClose(
      out, [&](const Index &i) { return c.get(i) != 0 ? t.get(i) : f.get(i); },
      0, 0);
}

struct CastCase {
  const char *from, *to;
  DT fromDT, toDT;
  double lo, hi;
  double (*ref)(double);
};

void PrintTo(const CastCase &c, std::ostream *os) {
  *os << c.from << " to " << c.to;
}

class CastTest : public ::testing::TestWithParam<CastCase> {};

TEST_P(CastTest, Converts) {
  const CastCase &c = GetParam();
  std::string from = std::string("tensor<?x5x") + c.from + ">";
  std::string to = std::string("tensor<?x5x") + c.to + ">";
  std::string ir =
      singleOpFunc("%x: " + from, "tfc.cast %x : " + from + " to " + to, to);
  Tensor x = Tensor(c.fromDT, {6, 5}).random(c.lo, c.hi, 12);
  if (c.fromDT == DT::F32) {
    x.set({0, 0}, 0.0);
    x.set({0, 1}, -0.0);
  }
  Tensor out = runOp(ir, {x}, c.toDT, {6, 5});
  expectClose(
      out, [&](const Index &i) { return c.ref(x.get(i)); }, 0, 0);
}

INSTANTIATE_TEST_SUITE_P(
    Types, CastTest,
    ::testing::Values(
        // Floats to integers truncate toward zero.
        CastCase{"f32", "i32", DT::F32, DT::I32, -100, 100,
                 [](double v) { return std::trunc(double(float(v))); }},
        CastCase{"f32", "i64", DT::F32, DT::I64, -100, 100,
                 [](double v) { return std::trunc(double(float(v))); }},
        CastCase{"i32", "f32", DT::I32, DT::F32, -1000, 1000,
                 [](double v) { return v; }},
        CastCase{"i64", "i32", DT::I64, DT::I32, -1000, 1000,
                 [](double v) { return v; }},
        CastCase{"i32", "i64", DT::I32, DT::I64, -1000, 1000,
                 [](double v) { return v; }},
        CastCase{"i1", "f32", DT::Bool, DT::F32, 0, 1,
                 [](double v) { return double(v != 0); }},
        CastCase{"i1", "i32", DT::Bool, DT::I32, 0, 1,
                 [](double v) { return double(v != 0); }},
        CastCase{"f32", "i1", DT::F32, DT::Bool, -2, 2,
                 [](double v) { return double(v != 0); }},
        CastCase{"i32", "i1", DT::I32, DT::Bool, -2, 2,
                 [](double v) { return double(v != 0); }}),
    [](const ::testing::TestParamInfo<CastCase> &info) {
      return std::string(info.param.from) + "_to_" + info.param.to;
    });

TEST(ElementwiseTest, CastOfNaNToBoolIsTrue) {
  std::string ir = singleOpFunc("%x: tensor<3xf32>",
                                "tfc.cast %x : tensor<3xf32> to tensor<3xi1>",
                                "tensor<3xi1>");
  Tensor x(DT::F32, {3});
  x.set({0}, std::numeric_limits<double>::quiet_NaN());
  x.set({1}, 0);
  x.set({2}, 1e-30);
  Tensor out = runOp(ir, {x}, DT::Bool, {3});
  EXPECT_EQ(out.get({0}), 1);
  EXPECT_EQ(out.get({1}), 0);
  EXPECT_EQ(out.get({2}), 1);
}

TEST(ElementwiseTest, BoolResultsAreZeroOrOne) {
  std::string ir = singleOpFunc(
      "%a: tensor<?xf32>, %b: tensor<?xf32>",
      "tfc.cmp lt, %a, %b : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xi1>",
      "tensor<?xi1>");
  Tensor a = Tensor(DT::F32, {100}).random(-1, 1, 1);
  Tensor b = Tensor(DT::F32, {100}).random(-1, 1, 2);
  Tensor out = runOp(ir, {a, b}, DT::Bool, {100});
  for (int i = 0; i < 100; ++i) {
    uint8_t v = out.buffer.as<uint8_t>()(i);
    EXPECT_TRUE(v == 0 || v == 1) << int(v);
  }
}

} // namespace
