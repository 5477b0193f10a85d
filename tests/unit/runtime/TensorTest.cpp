//===- TensorTest.cpp - Tensors, shapes, fp16/bf16 conversions ------------===//

#include "runtime/Tensor.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

using namespace tfc::rt;

static uint32_t bitsOf(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

static float fromBits(uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

//===----------------------------------------------------------------------===//
// f16 -> f32, against hand-derived bit patterns
//===----------------------------------------------------------------------===//

TEST(F16ToF32, HandDerivedPatterns) {
  EXPECT_EQ(f16ToF32(0x3C00), 1.0f);  // exp 15 (bias 15), mantissa 0
  EXPECT_EQ(f16ToF32(0xC000), -2.0f); // sign, exp 16
  EXPECT_EQ(f16ToF32(0x3800), 0.5f);
  EXPECT_EQ(f16ToF32(0x3E00), 1.5f);                  // mantissa 0x200 = .5
  EXPECT_EQ(f16ToF32(0x7BFF), 65504.0f);              // largest finite
  EXPECT_EQ(f16ToF32(0x0400), std::ldexp(1.0f, -14)); // smallest normal
  EXPECT_EQ(f16ToF32(0x0001), std::ldexp(1.0f, -24)); // smallest subnormal
  EXPECT_EQ(f16ToF32(0x03FF), 1023 * std::ldexp(1.0f, -24)); // largest subn.
  EXPECT_EQ(f16ToF32(0x8001), -std::ldexp(1.0f, -24));
  // 0x3555: exponent 13 (2^-2), mantissa 0x155: (1024 + 341) * 2^-12.
  EXPECT_EQ(f16ToF32(0x3555), 1365 * std::ldexp(1.0f, -12)); // ~0.33325
}

TEST(F16ToF32, ZerosInfinitiesNaNs) {
  EXPECT_EQ(bitsOf(f16ToF32(0x0000)), 0x00000000u);
  EXPECT_EQ(bitsOf(f16ToF32(0x8000)), 0x80000000u); // -0 keeps its sign
  EXPECT_EQ(f16ToF32(0x7C00), std::numeric_limits<float>::infinity());
  EXPECT_EQ(f16ToF32(0xFC00), -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(f16ToF32(0x7E00)));
  EXPECT_TRUE(std::isnan(f16ToF32(0x7C01))); // signalling payload survives
  EXPECT_TRUE(std::isnan(f16ToF32(0xFE00)));
  EXPECT_EQ(bitsOf(f16ToF32(0x7C01)), 0x7F802000u); // payload moved up by 13
}

TEST(F16ToF32, AllPatternsMonotonicAndExact) {
  // Positive finite halves are ordered by their bit patterns, and each is a
  // dyadic rational the float holds exactly: check both for all 31743.
  float prev = -1.0f;
  for (uint32_t h = 0; h <= 0x7BFF; ++h) {
    float f = f16ToF32(static_cast<uint16_t>(h));
    EXPECT_GT(f, prev) << std::hex << h;
    prev = f;
    uint32_t exp = h >> 10, mant = h & 0x3FF;
    double expected = exp == 0 ? std::ldexp(double(mant), -24)
                               : std::ldexp(double(1024 + mant), int(exp) - 25);
    ASSERT_EQ(double(f), expected) << std::hex << h;
    ASSERT_EQ(f16ToF32(static_cast<uint16_t>(h | 0x8000)), -f);
  }
}

//===----------------------------------------------------------------------===//
// bf16 -> f32
//===----------------------------------------------------------------------===//

TEST(BF16ToF32, HandDerivedPatterns) {
  EXPECT_EQ(bf16ToF32(0x3F80), 1.0f);
  EXPECT_EQ(bf16ToF32(0xC000), -2.0f);
  EXPECT_EQ(bf16ToF32(0x4049), fromBits(0x40490000u)); // 3.140625
  EXPECT_EQ(bf16ToF32(0x7F7F), fromBits(0x7F7F0000u)); // largest finite
  EXPECT_EQ(bf16ToF32(0x0001), fromBits(0x00010000u)); // subnormal
  EXPECT_EQ(bf16ToF32(0x7F80), std::numeric_limits<float>::infinity());
  EXPECT_EQ(bf16ToF32(0xFF80), -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(bf16ToF32(0x7FC0)));
  EXPECT_TRUE(std::isnan(bf16ToF32(0x7F81)));
  EXPECT_EQ(bitsOf(bf16ToF32(0x8000)), 0x80000000u);
}

//===----------------------------------------------------------------------===//
// f32 -> f16 / bf16, round to nearest even
//===----------------------------------------------------------------------===//

TEST(F32ToF16, HandDerivedPatterns) {
  EXPECT_EQ(f32ToF16(1.0f), 0x3C00);
  EXPECT_EQ(f32ToF16(-2.0f), 0xC000);
  EXPECT_EQ(f32ToF16(65504.0f), 0x7BFF);
  EXPECT_EQ(f32ToF16(std::ldexp(1.0f, -24)), 0x0001);
  EXPECT_EQ(f32ToF16(std::ldexp(1.0f, -14)), 0x0400);
  EXPECT_EQ(f32ToF16(0.0f), 0x0000);
  EXPECT_EQ(f32ToF16(-0.0f), 0x8000);
  EXPECT_EQ(f32ToF16(std::numeric_limits<float>::infinity()), 0x7C00);
  EXPECT_EQ(f32ToF16(-std::numeric_limits<float>::infinity()), 0xFC00);
}

TEST(F32ToF16, RoundsToNearestEven) {
  const float ulp1 = std::ldexp(1.0f, -10); // half spacing just above 1
  // Exactly halfway between 1 (even) and 1+ulp (odd): stays 1.
  EXPECT_EQ(f32ToF16(1.0f + ulp1 / 2), 0x3C00);
  // Halfway between 1+ulp (odd) and 1+2ulp (even): goes up.
  EXPECT_EQ(f32ToF16(1.0f + 1.5f * ulp1), 0x3C02);
  // Just above / below halfway.
  EXPECT_EQ(f32ToF16(std::nextafter(1.0f + ulp1 / 2, 2.0f)), 0x3C01);
  EXPECT_EQ(f32ToF16(std::nextafter(1.0f + 1.5f * ulp1, 0.0f)), 0x3C01);
  // Overflow boundary: 65520 is halfway between 65504 (odd 0x7BFF) and
  // 65536 (would be 0x7C00, even): ties to even means Inf.
  EXPECT_EQ(f32ToF16(65519.996f), 0x7BFF);
  EXPECT_EQ(f32ToF16(65520.0f), 0x7C00);
  EXPECT_EQ(f32ToF16(1e10f), 0x7C00);
  EXPECT_EQ(f32ToF16(-1e10f), 0xFC00);
  // Subnormal boundaries: 2^-25 is half the smallest subnormal -> ties to 0;
  // anything above rounds to 0x0001; 3 * 2^-25 ties to the even 0x0002.
  EXPECT_EQ(f32ToF16(std::ldexp(1.0f, -25)), 0x0000);
  EXPECT_EQ(f32ToF16(std::nextafter(std::ldexp(1.0f, -25), 1.0f)), 0x0001);
  EXPECT_EQ(f32ToF16(3 * std::ldexp(1.0f, -25)), 0x0002);
  EXPECT_EQ(f32ToF16(std::ldexp(1.0f, -26)), 0x0000);
  EXPECT_EQ(f32ToF16(-std::ldexp(1.0f, -26)), 0x8000);
  EXPECT_EQ(f32ToF16(std::numeric_limits<float>::denorm_min()), 0x0000);
  // 1023.5 units of 2^-24 ties to 1024 units: the smallest normal.
  EXPECT_EQ(f32ToF16(1023.5f * std::ldexp(1.0f, -24)), 0x0400);
}

TEST(F32ToF16, NaNStaysQuietNaN) {
  float qnan = std::numeric_limits<float>::quiet_NaN();
  uint16_t h = f32ToF16(qnan);
  EXPECT_EQ(h & 0x7C00, 0x7C00);
  EXPECT_NE(h & 0x03FF, 0);
  // A NaN whose payload is only in the low 13 bits must not become Inf.
  uint16_t low = f32ToF16(fromBits(0x7F800001u));
  EXPECT_TRUE(std::isnan(f16ToF32(low)));
  EXPECT_EQ(f32ToF16(fromBits(0xFFC00000u)) & 0x8000, 0x8000);
}

TEST(F32ToF16, RoundTripsEveryHalf) {
  for (uint32_t h = 0; h <= 0xFFFF; ++h) {
    float f = f16ToF32(static_cast<uint16_t>(h));
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(f16ToF32(f32ToF16(f))));
      continue;
    }
    ASSERT_EQ(f32ToF16(f), h) << std::hex << h;
  }
}

/// An oracle that knows nothing about bit tricks: among all finite halves
/// (plus 65536 standing in for Inf, as IEEE's "unbounded exponent" rounding
/// does), pick the nearest to x, ties to the even bit pattern.
static uint16_t referenceF32ToF16(float x) {
  static std::vector<double> values = [] {
    std::vector<double> v;
    for (uint32_t h = 0; h <= 0x7BFF; ++h)
      v.push_back(double(f16ToF32(static_cast<uint16_t>(h))));
    v.push_back(65536.0); // index 0x7C00
    return v;
  }();
  uint16_t sign = std::signbit(x) ? 0x8000 : 0;
  double a = std::fabs(double(x));
  if (a >= 65536.0)
    return sign | 0x7C00;
  size_t hi =
      std::lower_bound(values.begin(), values.end(), a) - values.begin();
  if (values[hi] == a)
    return static_cast<uint16_t>(sign | hi);
  size_t lo = hi - 1;
  double dlo = a - values[lo], dhi = values[hi] - a;
  size_t pick = dlo < dhi ? lo : dhi < dlo ? hi : (lo % 2 == 0 ? lo : hi);
  return static_cast<uint16_t>(sign | pick);
}

TEST(F32ToF16, MatchesNearestEvenOracleOnManyFloats) {
  // Every float exponent that can reach a half (plus a margin on each side),
  // with random mantissas and the tie/near-tie mantissas spelled out.
  uint64_t state = 12345;
  auto next = [&] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<uint32_t>(state >> 33);
  };
  const uint32_t special[] = {0x000000, 0x000001, 0x000FFF, 0x001000,
                              0x001001, 0x002000, 0x003000, 0x7FE000,
                              0x7FF000, 0x7FFFFF, 0x400000, 0x3FFFFF};
  for (uint32_t exp = 100; exp <= 145; ++exp) {
    for (uint32_t m : special) {
      float f = fromBits((exp << 23) | m);
      ASSERT_EQ(f32ToF16(f), referenceF32ToF16(f)) << f;
      ASSERT_EQ(f32ToF16(-f), referenceF32ToF16(-f)) << -f;
    }
    for (int i = 0; i < 4000; ++i) {
      float f = fromBits((exp << 23) | (next() & 0x7FFFFF));
      ASSERT_EQ(f32ToF16(f), referenceF32ToF16(f)) << f;
    }
  }
}

#ifdef __FLT16_MAX__
TEST(F32ToF16, MatchesCompilerFloat16) {
  // The compiler's _Float16 conversion (libgcc/compiler-rt, IEEE RNE) is a
  // second, independent reference.
  uint64_t state = 99;
  for (int i = 0; i < 200000; ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    float f = fromBits(static_cast<uint32_t>(state >> 32));
    if (std::isnan(f))
      continue;
    _Float16 h = static_cast<_Float16>(f);
    uint16_t bits;
    std::memcpy(&bits, &h, 2);
    ASSERT_EQ(f32ToF16(f), bits) << f;
  }
}
#endif

TEST(F32ToBf16, RoundsToNearestEven) {
  EXPECT_EQ(f32ToBf16(1.0f), 0x3F80);
  EXPECT_EQ(f32ToBf16(-2.0f), 0xC000);
  // 1 + 2^-8 is halfway between 1 (0x3F80, even) and 1+2^-7 (0x3F81).
  EXPECT_EQ(f32ToBf16(fromBits(0x3F808000u)), 0x3F80);
  // Halfway between 0x3F81 (odd) and 0x3F82: up.
  EXPECT_EQ(f32ToBf16(fromBits(0x3F818000u)), 0x3F82);
  EXPECT_EQ(f32ToBf16(fromBits(0x3F808001u)), 0x3F81);
  EXPECT_EQ(f32ToBf16(fromBits(0x3F807FFFu)), 0x3F80);
  // Truncation would give 0x4049 for pi (0x40490FDB); nearest is too.
  EXPECT_EQ(f32ToBf16(3.14159265f), 0x4049);
  // 0x3FFFFFFF rounds up across the exponent: 2.0.
  EXPECT_EQ(f32ToBf16(fromBits(0x3FFFFFFFu)), 0x4000);
  // Largest finite float rounds to Inf; subnormals are kept.
  EXPECT_EQ(f32ToBf16(std::numeric_limits<float>::max()), 0x7F80);
  EXPECT_EQ(f32ToBf16(fromBits(0x00010000u)), 0x0001);
  EXPECT_EQ(f32ToBf16(std::numeric_limits<float>::infinity()), 0x7F80);
  EXPECT_EQ(f32ToBf16(-0.0f), 0x8000);
}

TEST(F32ToBf16, NaNStaysNaN) {
  // 0x7F800001 truncates to 0x7F80 (Inf) and rounds to 0x7F80 as well: the
  // NaN path must catch it first.
  EXPECT_TRUE(std::isnan(bf16ToF32(f32ToBf16(fromBits(0x7F800001u)))));
  EXPECT_TRUE(std::isnan(bf16ToF32(f32ToBf16(fromBits(0x7FFFFFFFu)))));
  EXPECT_EQ(f32ToBf16(fromBits(0xFFC00000u)), 0xFFC0);
}

TEST(F32ToBf16, RoundTripsEveryBf16) {
  for (uint32_t h = 0; h <= 0xFFFF; ++h) {
    float f = bf16ToF32(static_cast<uint16_t>(h));
    if (std::isnan(f))
      continue;
    ASSERT_EQ(f32ToBf16(f), h) << std::hex << h;
  }
}

TEST(ConvertToF32, AllFloatTypesAndUnalignedSource) {
  // Source starts at an odd address: conversions must not assume alignment.
  std::vector<uint8_t> raw(1 + 3 * 8);
  uint16_t halves[] = {0x3C00, 0xC000, 0x0001};
  std::memcpy(raw.data() + 1, halves, sizeof halves);
  float out[3];
  ASSERT_TRUE(convertToF32(DType::F16, raw.data() + 1, out, 3).ok());
  EXPECT_EQ(out[0], 1.0f);
  EXPECT_EQ(out[1], -2.0f);
  EXPECT_EQ(out[2], std::ldexp(1.0f, -24));

  uint16_t bf[] = {0x3F80, 0xC000, 0x4049};
  std::memcpy(raw.data() + 1, bf, sizeof bf);
  ASSERT_TRUE(convertToF32(DType::BF16, raw.data() + 1, out, 3).ok());
  EXPECT_EQ(out[0], 1.0f);
  EXPECT_EQ(out[2], 3.140625f);

  double d[] = {0.25, -1e300, 3.0};
  std::memcpy(raw.data() + 1, d, sizeof d);
  ASSERT_TRUE(convertToF32(DType::F64, raw.data() + 1, out, 3).ok());
  EXPECT_EQ(out[0], 0.25f);
  EXPECT_EQ(out[1], -std::numeric_limits<float>::infinity());

  Status s = convertToF32(DType::I32, raw.data(), out, 1);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("i32"), std::string::npos);
}

//===----------------------------------------------------------------------===//
// Shapes and tensors
//===----------------------------------------------------------------------===//

TEST(Shape, ToString) {
  EXPECT_EQ(shapeToString({768, 2304}), "[768, 2304]");
  EXPECT_EQ(shapeToString({}), "[]");
  EXPECT_EQ(shapeToString({5}), "[5]");
  EXPECT_EQ(typeToString(DType::F32, {50257, 768}), "f32[50257, 768]");
  EXPECT_EQ(typeToString(DType::BF16, {}), "bf16[]");
}

TEST(Shape, CheckedNumElements) {
  EXPECT_EQ(*checkedNumElements({}), 1);
  EXPECT_EQ(*checkedNumElements({2, 3, 4}), 24);
  EXPECT_EQ(*checkedNumElements({0, -0}), 0);
  Expected<int64_t> neg = checkedNumElements({2, -1});
  ASSERT_FALSE(neg.ok());
  EXPECT_NE(neg.message().find("negative"), std::string::npos);
  Expected<int64_t> big =
      checkedNumElements({int64_t(1) << 32, int64_t(1) << 32});
  ASSERT_FALSE(big.ok());
  EXPECT_NE(big.message().find("overflow"), std::string::npos);
  // A zero dimension empties the tensor, even after dimensions whose
  // product overflows, but a later negative one is still an error.
  EXPECT_FALSE(checkedNumElements({0, -3}).ok());
  EXPECT_EQ(*checkedNumElements({int64_t(1) << 32, int64_t(1) << 32, 0}), 0);
  EXPECT_FALSE(checkedByteSize(DType::I64, {int64_t(1) << 62}).ok());
}

TEST(Tensor, DTypeSizesAndNames) {
  EXPECT_EQ(dtypeSize(DType::F32), 4u);
  EXPECT_EQ(dtypeSize(DType::F16), 2u);
  EXPECT_EQ(dtypeSize(DType::BF16), 2u);
  EXPECT_EQ(dtypeSize(DType::I64), 8u);
  EXPECT_EQ(dtypeSize(DType::I32), 4u);
  EXPECT_EQ(dtypeSize(DType::U8), 1u);
  EXPECT_EQ(dtypeSize(DType::Bool), 1u);
  EXPECT_STREQ(dtypeName(DType::BF16), "bf16");
  EXPECT_STREQ(dtypeName(DType::Bool), "bool");
}

TEST(Tensor, ZerosAreAlignedAndZero) {
  Expected<Tensor> t = Tensor::zeros(DType::F32, {3, 5});
  ASSERT_TRUE(t.ok()) << t.message();
  EXPECT_FALSE(t->isNull());
  EXPECT_TRUE(t->ownsData());
  EXPECT_EQ(t->numElements(), 15);
  EXPECT_EQ(t->byteSize(), 60u);
  EXPECT_EQ(t->rank(), 2u);
  EXPECT_EQ(t->typeString(), "f32[3, 5]");
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t->data()) % Tensor::kAlignment, 0u);
  const float *p = t->dataAs<float>();
  EXPECT_TRUE(std::all_of(p, p + 15, [](float v) { return v == 0.0f; }));

  Expected<Tensor> empty = Tensor::zeros(DType::I64, {0, 7});
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->numElements(), 0);
  EXPECT_NE(empty->data(), nullptr);

  Expected<Tensor> scalar = Tensor::zeros(DType::F32, {});
  ASSERT_TRUE(scalar.ok());
  EXPECT_EQ(scalar->numElements(), 1);
}

TEST(Tensor, AllocateAndReuseStorage) {
  Expected<Tensor> t = Tensor::allocate(DType::F32, {3, 5});
  ASSERT_TRUE(t.ok()) << t.message();
  EXPECT_TRUE(t->ownsData());
  EXPECT_EQ(t->storageBytes(), 64u); // 60 bytes, rounded to the alignment
  EXPECT_EQ(*Tensor::storageBytesFor(DType::F32, {3, 5}), 64u);
  // Huge blocks are whole 2 MiB pages.
  EXPECT_EQ(*Tensor::storageBytesFor(DType::F32, {768, 769}), 4u << 20);
  EXPECT_EQ(*Tensor::storageBytesFor(DType::F32, {0}), 64u);
  // Before the huge-page rounding: the aligned block the executor's pool
  // allocates.
  EXPECT_EQ(*Tensor::alignedBytesFor(DType::F32, {768, 769}), 2362368u);
  EXPECT_EQ(*Tensor::alignedBytesFor(DType::F32, {0}), 64u);
  EXPECT_EQ(*Tensor::alignedBytesFor(DType::I8, {65}), 128u);
  EXPECT_EQ(Tensor::alignUp(64), 64u);
  EXPECT_EQ(Tensor::alignUp(SIZE_MAX - 10), 0u); // overflows

  const void *block = t->data();
  Tensor copy = *t;
  EXPECT_TRUE(t->storageShared());
  // A shared block cannot be reused, and the tensor stays as it was.
  EXPECT_FALSE(Tensor::reuse(std::move(*t), DType::I8, {64}).ok());
  EXPECT_EQ(t->typeString(), "f32[3, 5]");
  copy = Tensor();
  EXPECT_FALSE(t->storageShared());
  EXPECT_FALSE(Tensor::reuse(std::move(*t), DType::I8, {65}).ok()); // too big
  Expected<Tensor> bf = Tensor::reuse(std::move(*t), DType::BF16, {2, 16});
  ASSERT_TRUE(bf.ok()) << bf.message();
  EXPECT_EQ(bf->data(), block);
  EXPECT_EQ(bf->typeString(), "bf16[2, 16]");
  EXPECT_EQ(bf->numElements(), 32);
  EXPECT_EQ(bf->storageBytes(), 64u);
  // A borrowed view's storage is the caller's: never reused.
  float values[4] = {};
  Tensor view = *Tensor::borrow(DType::F32, {4}, values, nullptr);
  EXPECT_FALSE(Tensor::reuse(std::move(view), DType::F32, {4}).ok());
}

TEST(Tensor, RefusesBadShapesAndHugeAllocations) {
  EXPECT_FALSE(Tensor::zeros(DType::F32, {-1}).ok());
  Expected<Tensor> huge = Tensor::zeros(DType::F32, {int64_t(1) << 61});
  ASSERT_FALSE(huge.ok());
  // Either the byte size overflows or the allocation fails; both are values.
  EXPECT_FALSE(huge.message().empty());
  Expected<Tensor> tooBig = Tensor::zeros(DType::U8, {int64_t(1) << 60});
  EXPECT_FALSE(tooBig.ok());
}

TEST(Tensor, CopiesShareStorageCloneDoesNot) {
  Expected<Tensor> t = Tensor::fromF32({2}, {1.0f, 2.0f});
  ASSERT_TRUE(t.ok());
  Tensor alias = *t;
  alias.dataAs<float>()[0] = 9.0f;
  EXPECT_EQ(t->dataAs<float>()[0], 9.0f);
  Expected<Tensor> deep = t->clone();
  ASSERT_TRUE(deep.ok());
  deep->dataAs<float>()[1] = 5.0f;
  EXPECT_EQ(t->dataAs<float>()[1], 2.0f);
}

TEST(Tensor, FirstValuesPrintsEachType) {
  Expected<Tensor> f = Tensor::fromF32({4}, {0.5f, -1.0f, 2.25f, 1e-7f});
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->firstValues(3), "0.5, -1, 2.25, ...");
  EXPECT_EQ(f->firstValues(4), "0.5, -1, 2.25, 1e-07");
  Expected<Tensor> i = Tensor::fromI64({2}, {-7, int64_t(1) << 40});
  ASSERT_TRUE(i.ok());
  EXPECT_EQ(i->firstValues(8), "-7, 1099511627776");
  // bf16 and int8 elements are values, not bytes.
  Expected<Tensor> b = Tensor::zeros(DType::BF16, {2});
  ASSERT_TRUE(b.ok());
  b->dataAs<uint16_t>()[0] = f32ToBf16(-1.5f);
  b->dataAs<uint16_t>()[1] = f32ToBf16(3.0f);
  EXPECT_EQ(b->firstValues(2), "-1.5, 3");
  Expected<Tensor> c = Tensor::zeros(DType::I8, {1});
  ASSERT_TRUE(c.ok());
  c->dataAs<int8_t>()[0] = -3;
  EXPECT_EQ(c->firstValues(1), "-3");
}

TEST(Tensor, FromValuesChecksCount) {
  EXPECT_TRUE(Tensor::fromI32({2, 2}, {1, 2, 3, 4}).ok());
  Expected<Tensor> bad = Tensor::fromI64({3}, {1, 2});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("holds 3 elements, got 2"), std::string::npos);
}

TEST(Tensor, BorrowKeepsOwnerAlive) {
  auto owner = std::make_shared<std::vector<float>>(4, 3.0f);
  std::weak_ptr<std::vector<float>> watch = owner;
  Expected<Tensor> view =
      Tensor::borrow(DType::F32, {2, 2}, owner->data(), owner);
  ASSERT_TRUE(view.ok());
  owner.reset();
  EXPECT_FALSE(watch.expired());
  EXPECT_FALSE(view->ownsData());
  EXPECT_EQ(view->dataAs<float>()[3], 3.0f);
  *view = Tensor();
  EXPECT_TRUE(watch.expired());
  EXPECT_FALSE(Tensor::borrow(DType::F32, {1}, nullptr, nullptr).ok());
}

TEST(Tensor, ToF32) {
  Expected<Tensor> h = Tensor::zeros(DType::F16, {2});
  ASSERT_TRUE(h.ok());
  h->dataAs<uint16_t>()[0] = 0x3C00;
  h->dataAs<uint16_t>()[1] = 0xC000;
  Expected<Tensor> f = h->toF32();
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->dtype(), DType::F32);
  EXPECT_EQ(f->dataAs<float>()[0], 1.0f);
  EXPECT_EQ(f->dataAs<float>()[1], -2.0f);

  Expected<Tensor> same = f->toF32();
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(same->data(), f->data()); // no copy

  Expected<Tensor> ints = Tensor::fromI32({1}, {1});
  Expected<Tensor> bad = ints->toF32();
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("i32[1]"), std::string::npos);
  EXPECT_FALSE(Tensor().toF32().ok());
}
