//===- NpyTest.cpp - .npy v1.0 writer -------------------------------------===//
//
// Expected headers were produced by numpy 2.4 (`numpy.save`) and are checked
// byte for byte, padding included.
//
//===----------------------------------------------------------------------===//

#include "runtime/Npy.h"

#include "TestUtil.h"

#include <gtest/gtest.h>

#include <cstring>

using namespace tfc::rt;
using namespace tfc::rt::test;

/// numpy.save's header for `dict`: magic, version 1.0, u16 length, the dict
/// padded with spaces and a newline to `total` bytes.
static std::string numpyHeader(const std::string &dict, size_t total) {
  std::string h = "\x93NUMPY";
  h += '\x01';
  h += '\x00';
  size_t len = total - 10;
  h += static_cast<char>(len & 0xFF);
  h += static_cast<char>(len >> 8);
  h += dict;
  h.append(total - h.size() - 1, ' ');
  h += '\n';
  return h;
}

static std::string prefixOf(const std::vector<uint8_t> &bytes, size_t n) {
  return std::string(bytes.begin(), bytes.begin() + static_cast<long>(n));
}

TEST(Npy, F32MatrixMatchesNumpy) {
  Tensor t = *Tensor::fromF32({2, 3}, {0, 1, 2, 3, 4, 5});
  Expected<std::vector<uint8_t>> b = serializeNpy(t);
  ASSERT_TRUE(b.ok()) << b.message();
  ASSERT_EQ(b->size(), 128u + 24u); // numpy: 152 bytes
  EXPECT_EQ(prefixOf(*b, 128),
            numpyHeader("{'descr': '<f4', 'fortran_order': False, 'shape': "
                        "(2, 3), }",
                        128));
  float last;
  std::memcpy(&last, b->data() + 128 + 20, 4);
  EXPECT_EQ(last, 5.0f);
}

TEST(Npy, I64VectorUsesOneElementTuple) {
  Tensor t = *Tensor::fromI64({4}, {1, 2, 3, 4});
  Expected<std::vector<uint8_t>> b = serializeNpy(t);
  ASSERT_TRUE(b.ok());
  ASSERT_EQ(b->size(), 160u);
  EXPECT_EQ(prefixOf(*b, 128),
            numpyHeader("{'descr': '<i8', 'fortran_order': False, 'shape': "
                        "(4,), }",
                        128));
  int64_t v;
  std::memcpy(&v, b->data() + 128 + 24, 8);
  EXPECT_EQ(v, 4);
}

TEST(Npy, ScalarAndI32) {
  Expected<std::vector<uint8_t>> s = serializeNpy(*Tensor::fromF32({}, {3.5f}));
  ASSERT_TRUE(s.ok());
  ASSERT_EQ(s->size(), 132u);
  EXPECT_EQ(prefixOf(*s, 128),
            numpyHeader("{'descr': '<f4', 'fortran_order': False, 'shape': "
                        "(), }",
                        128));
  Expected<std::vector<uint8_t>> i =
      serializeNpy(*Tensor::zeros(DType::I32, {1, 2, 3}));
  ASSERT_TRUE(i.ok());
  ASSERT_EQ(i->size(), 152u);
  EXPECT_EQ(prefixOf(*i, 128),
            numpyHeader("{'descr': '<i4', 'fortran_order': False, 'shape': "
                        "(1, 2, 3), }",
                        128));
}

TEST(Npy, HeaderAlwaysPadsTo64) {
  // A long shape pushes the header past 128 bytes.
  Shape shape(20, 1);
  Expected<std::vector<uint8_t>> b =
      serializeNpy(*Tensor::zeros(DType::F32, shape));
  ASSERT_TRUE(b.ok());
  size_t hlen = (*b)[8] | ((*b)[9] << 8);
  EXPECT_EQ((10 + hlen) % 64, 0u);
  EXPECT_EQ((*b)[10 + hlen - 1], '\n');
  EXPECT_EQ(b->size(), 10 + hlen + 4);
}

TEST(Npy, RefusesBf16AndNull) {
  Expected<std::vector<uint8_t>> b =
      serializeNpy(*Tensor::zeros(DType::BF16, {2}));
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.message().find("NumPy has no bf16 type"), std::string::npos);
  EXPECT_FALSE(serializeNpy(Tensor()).ok());
}

TEST(Npy, WriteNpyWritesTheSameBytes) {
  TempDir tmp;
  Tensor t = *Tensor::fromI32({3}, {1, -2, 3});
  std::string path = tmp.path("out.npy");
  ASSERT_TRUE(writeNpy(path, t).ok());
  EXPECT_EQ(readBytes(path), *serializeNpy(t));
  Status bad = writeNpy(tmp.path("x.npy"), *Tensor::zeros(DType::BF16, {1}));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find(tmp.path("x.npy")), std::string::npos);
  EXPECT_FALSE(fileExists(tmp.path("x.npy")));
}
