//===- PoolingTest.cpp - Mean pooling and L2 normalization ----------------===//
//
// Values worked out by hand: the mean over the masked tokens, a row with no
// real token (zeros, as sentence-transformers' clamp of the count gives), and
// division by the L2 norm.
//
//===----------------------------------------------------------------------===//

#include "runtime/Pooling.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace tfc::rt;

namespace {

Tensor boolMask(Shape shape, const std::vector<uint8_t> &values) {
  Tensor mask = Tensor::zeros(DType::Bool, std::move(shape)).take();
  std::copy(values.begin(), values.end(), static_cast<uint8_t *>(mask.data()));
  return mask;
}

} // namespace

TEST(PoolingTest, MeanOverRealTokensOnly) {
  // [2, 3, 2]: row 0 keeps tokens 0 and 1, row 1 keeps none.
  Tensor states = Tensor::fromF32({2, 3, 2}, {1, 2, 3, 6, 100, 100, //
                                              5, 5, 7, 7, 9, 9})
                      .take();
  Tensor mask = boolMask({2, 3}, {1, 1, 0, 0, 0, 0});
  Expected<Tensor> pooled = meanPool(states, mask);
  ASSERT_TRUE(pooled.ok()) << pooled.message();
  ASSERT_EQ(pooled->shape(), (Shape{2, 2}));
  const float *p = pooled->dataAs<float>();
  EXPECT_FLOAT_EQ(p[0], 2.0f); // (1 + 3) / 2
  EXPECT_FLOAT_EQ(p[1], 4.0f); // (2 + 6) / 2
  EXPECT_FLOAT_EQ(p[2], 0.0f);
  EXPECT_FLOAT_EQ(p[3], 0.0f);

  // An i64 mask means the same.
  Tensor mask64 = Tensor::fromI64({2, 3}, {1, 1, 0, 0, 0, 0}).take();
  Expected<Tensor> again = meanPool(states, mask64);
  ASSERT_TRUE(again.ok());
  EXPECT_FLOAT_EQ(again->dataAs<float>()[1], 4.0f);
}

TEST(PoolingTest, L2NormalizeDividesByTheNorm) {
  Tensor rows = Tensor::fromF32({2, 2}, {3, 4, 0, 0}).take();
  ASSERT_TRUE(l2Normalize(rows).ok());
  const float *r = rows.dataAs<float>();
  EXPECT_FLOAT_EQ(r[0], 0.6f);
  EXPECT_FLOAT_EQ(r[1], 0.8f);
  EXPECT_FLOAT_EQ(r[2], 0.0f); // a zero row stays zero (norm clamped)
  EXPECT_FLOAT_EQ(r[3], 0.0f);
  float a[] = {1, 0}, b[] = {1, 1};
  EXPECT_NEAR(cosineSimilarity(a, b, 2), 1 / std::sqrt(2.0), 1e-12);
}

TEST(PoolingTest, ShapesAndTypesAreChecked) {
  Tensor states = Tensor::zeros(DType::F32, {2, 3, 4}).take();
  EXPECT_EQ(meanPool(states, boolMask({2, 2}, {1, 1, 1, 1})).message(),
            "mean pooling needs a [2, 3] integer or bool mask, got bool[2, 2]");
  Tensor floatMask = Tensor::zeros(DType::F32, {2, 3}).take();
  EXPECT_FALSE(meanPool(states, floatMask).ok());
  Tensor flat = Tensor::zeros(DType::F32, {2, 4}).take();
  EXPECT_EQ(meanPool(flat, boolMask({2, 3}, {1, 1, 1, 1, 1, 1})).message(),
            "mean pooling needs f32[batch, seq, d] states, got f32[2, 4]");
  EXPECT_FALSE(l2Normalize(states).ok());
}
