//===- SafetensorsTest.cpp - Reading, writing, refusing .safetensors ------===//
//
// The malformed-file tests craft their bytes by hand: each corrupt header is
// a one-line string below, and each test checks that the refusal names the
// file, the tensor (where there is one) and the specific problem.
//
//===----------------------------------------------------------------------===//

#include "runtime/Safetensors.h"

#include "TestUtil.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <unistd.h>

using namespace tfc::rt;
using namespace tfc::rt::test;

namespace {

class SafetensorsTest : public ::testing::Test {
protected:
  TempDir tmp;

  /// Writes `bytes` to a file and opens it.
  Expected<SafetensorsFile> openBytes(const std::vector<uint8_t> &bytes,
                                      const std::string &name = "bad.st") {
    std::string path = tmp.path(name);
    writeBytes(path, bytes);
    return SafetensorsFile::open(path);
  }

  /// Opens a file with `header` and `dataBytes` zero bytes of data, expects
  /// a refusal, and returns its message.
  std::string refusal(const std::string &header, size_t dataBytes = 64) {
    Expected<SafetensorsFile> f = openBytes(makeSafetensors(header, dataBytes));
    EXPECT_FALSE(f.ok()) << "accepted header: " << header;
    // Every refusal starts with the file's path.
    EXPECT_EQ(f.message().rfind(tmp.path("bad.st") + ": ", 0), 0u)
        << f.message();
    return f.message();
  }
};

#define EXPECT_CONTAINS(haystack, needle)                                      \
  EXPECT_NE(std::string(haystack).find(needle), std::string::npos)             \
      << "message: " << (haystack) << "\nexpected to contain: " << (needle)

} // namespace

//===----------------------------------------------------------------------===//
// Round trip
//===----------------------------------------------------------------------===//

TEST_F(SafetensorsTest, WriterReaderRoundTrip) {
  std::map<std::string, Tensor> tensors;
  tensors["weight"] = *Tensor::fromF32({2, 3}, {1, 2, 3, 4, 5, 6.5f});
  tensors["ids"] = *Tensor::fromI32({3}, {7, -8, 9});
  tensors["positions"] = *Tensor::fromI64({2, 1}, {int64_t(1) << 40, -1});
  tensors["scalar"] = *Tensor::fromF32({}, {3.25f});
  tensors["empty"] = *Tensor::zeros(DType::F32, {0, 4});
  std::map<std::string, std::string> meta = {{"format", "pt"},
                                             {"note", "quote\" and é"}};
  std::string path = tmp.path("rt.safetensors");
  ASSERT_TRUE(writeSafetensors(path, tensors, meta).ok());
  EXPECT_FALSE(fileExists(path + ".tmp." + std::to_string(::getpid())));

  // Header length is a multiple of 8 and the padding is spaces.
  std::vector<uint8_t> bytes = readBytes(path);
  ASSERT_GE(bytes.size(), 8u);
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i)
    n = (n << 8) | bytes[i];
  EXPECT_EQ(n % 8, 0u);
  EXPECT_EQ(bytes[8], '{');
  EXPECT_EQ(std::string(bytes.begin() + 8, bytes.begin() + 8 + 16),
            "{\"__metadata__\":");

  Expected<SafetensorsFile> f = SafetensorsFile::open(path);
  ASSERT_TRUE(f.ok()) << f.message();
  EXPECT_EQ(f->names(), (std::vector<std::string>{"empty", "ids", "positions",
                                                  "scalar", "weight"}));
  EXPECT_EQ(f->metadata(), meta);

  Expected<Tensor> w = f->tensor("weight");
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(w->dtype(), DType::F32);
  EXPECT_EQ(w->shape(), (Shape{2, 3}));
  EXPECT_EQ(w->dataAs<float>()[5], 6.5f);
  // Read into a block of its own, which the file and `w` share.
  EXPECT_TRUE(w->ownsData());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(w->data()) % Tensor::kAlignment, 0u);
  EXPECT_EQ(f->tensor("weight")->data(), w->data());
  EXPECT_NE(f->tensor("ids")->data(), w->data());

  Expected<Tensor> ids = f->tensor("ids");
  ASSERT_TRUE(ids.ok());
  EXPECT_EQ(ids->dtype(), DType::I32);
  EXPECT_EQ(ids->dataAs<int32_t>()[1], -8);

  Expected<Tensor> pos = f->tensor("positions");
  ASSERT_TRUE(pos.ok());
  EXPECT_EQ(pos->dtype(), DType::I64);
  EXPECT_EQ(pos->shape(), (Shape{2, 1}));
  EXPECT_EQ(pos->dataAs<int64_t>()[0], int64_t(1) << 40);
  EXPECT_EQ(pos->dataAs<int64_t>()[1], -1);

  Expected<Tensor> sc = f->loadF32("scalar");
  ASSERT_TRUE(sc.ok());
  EXPECT_EQ(sc->rank(), 0u);
  EXPECT_EQ(sc->dataAs<float>()[0], 3.25f);

  Expected<Tensor> e = f->tensor("empty");
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->numElements(), 0);
  EXPECT_EQ(e->shape(), (Shape{0, 4}));
}

TEST_F(SafetensorsTest, WriterIsByteIdenticalToReference) {
  // safetensors 0.8.0: save({"b": int64 [1,2,3], "a": float32 arange(6)
  // reshaped [2,3], "c": int32 [7..11]}, metadata={"format": "np"}).
  const char *hex =
      "c8000000000000007b225f5f6d657461646174615f5f223a7b22666f726d6174223a22"
      "6e70227d2c2262223a7b226474797065223a22493634222c227368617065223a5b335d"
      "2c22646174615f6f666673657473223a5b302c32345d7d2c2261223a7b226474797065"
      "223a22463332222c227368617065223a5b322c335d2c22646174615f6f666673657473"
      "223a5b32342c34385d7d2c2263223a7b226474797065223a22493332222c2273686170"
      "65223a5b355d2c22646174615f6f666673657473223a5b34382c36385d7d7d20200100"
      "00000000000002000000000000000300000000000000000000000000803f0000004000"
      "004040000080400000a0400700000008000000090000000a0000000b000000";
  std::vector<uint8_t> expected;
  for (size_t i = 0; hex[i]; i += 2)
    expected.push_back(
        static_cast<uint8_t>(std::stoi(std::string(hex + i, 2), nullptr, 16)));

  std::map<std::string, Tensor> tensors;
  tensors["b"] = *Tensor::fromI64({3}, {1, 2, 3});
  tensors["a"] = *Tensor::fromF32({2, 3}, {0, 1, 2, 3, 4, 5});
  tensors["c"] = *Tensor::fromI32({5}, {7, 8, 9, 10, 11});
  Expected<std::vector<uint8_t>> bytes =
      serializeSafetensors(tensors, {{"format", "np"}});
  ASSERT_TRUE(bytes.ok());
  EXPECT_EQ(*bytes, expected);

  std::string path = tmp.path("ref.safetensors");
  ASSERT_TRUE(writeSafetensors(path, tensors, {{"format", "np"}}).ok());
  EXPECT_EQ(readBytes(path), expected);
}

TEST_F(SafetensorsTest, ViewsOutliveTheFileObject) {
  std::string path = tmp.path("v.safetensors");
  ASSERT_TRUE(
      writeSafetensors(path, {{"x", *Tensor::fromF32({2}, {4, 5})}}).ok());
  Tensor view;
  {
    Expected<SafetensorsFile> f = SafetensorsFile::open(path);
    ASSERT_TRUE(f.ok());
    view = *f->loadF32("x");
  }
  EXPECT_EQ(view.dataAs<float>()[1], 5.0f);
}

// A checkpoint truncated or rewritten while tfc has it open (what
// safetensors.save_file to the same path does) must neither kill the
// process (SIGBUS, as it did with a mapped file) nor change the weights:
// the file is read whole when opened (docs/runtime.md, "Checkpoints").
TEST_F(SafetensorsTest, TruncatedWhileOpenKeepsTheWeightsRead) {
  std::string path = tmp.path("w.safetensors");
  std::vector<float> values(10000);
  for (size_t i = 0; i < values.size(); ++i)
    values[i] = static_cast<float>(i) * 0.5f;
  ASSERT_TRUE(writeSafetensors(
                  path, {{"w", *Tensor::fromF32({100, 100}, values)}})
                  .ok());
  Expected<SafetensorsFile> f = SafetensorsFile::open(path);
  ASSERT_TRUE(f.ok()) << f.message();
  Expected<Tensor> w = f->loadF32("w");
  ASSERT_TRUE(w.ok()) << w.message();
  ASSERT_EQ(::truncate(path.c_str(), 0), 0);
  ASSERT_TRUE(
      writeSafetensors(path, {{"w", *Tensor::fromF32({1}, {-1})}}).ok());
  // Both the view taken before and a tensor taken after see the old bytes.
  Expected<Tensor> again = f->loadF32("w");
  ASSERT_TRUE(again.ok()) << again.message();
  for (size_t i = 0; i < values.size(); ++i) {
    ASSERT_EQ(w->dataAs<float>()[i], values[i]) << i;
    ASSERT_EQ(again->dataAs<float>()[i], values[i]) << i;
  }
}

TEST_F(SafetensorsTest, RefusesDevices) {
  Expected<SafetensorsFile> f = SafetensorsFile::open("/dev/zero");
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.message(), "/dev/zero: is a character device, not a regular "
                         "file; tfc reads only regular files");
}

TEST_F(SafetensorsTest, LoadF32ConvertsHalfTypes) {
  Tensor h = *Tensor::zeros(DType::F16, {3});
  uint16_t hv[] = {0x3C00, 0xC000, 0x0001};
  std::memcpy(h.data(), hv, sizeof hv);
  Tensor b = *Tensor::zeros(DType::BF16, {2});
  uint16_t bv[] = {0x3F80, 0x4049};
  std::memcpy(b.data(), bv, sizeof bv);
  Tensor d = *Tensor::zeros(DType::F64, {1});
  d.dataAs<double>()[0] = 0.5;
  std::string path = tmp.path("h.safetensors");
  ASSERT_TRUE(
      writeSafetensors(
          path,
          {{"h", h}, {"b", b}, {"d", d}, {"i", *Tensor::fromI64({1}, {3})}})
          .ok());
  Expected<SafetensorsFile> f = SafetensorsFile::open(path);
  ASSERT_TRUE(f.ok()) << f.message();
  EXPECT_EQ(f->find("h")->dtype, DType::F16);
  EXPECT_EQ(f->find("b")->dtype, DType::BF16);

  Expected<Tensor> hf = f->loadF32("h");
  ASSERT_TRUE(hf.ok());
  EXPECT_EQ(hf->dtype(), DType::F32);
  EXPECT_EQ(hf->dataAs<float>()[0], 1.0f);
  EXPECT_EQ(hf->dataAs<float>()[1], -2.0f);
  EXPECT_EQ(hf->dataAs<float>()[2], std::ldexp(1.0f, -24));
  Expected<Tensor> bf = f->loadF32("b");
  ASSERT_TRUE(bf.ok());
  EXPECT_EQ(bf->dataAs<float>()[0], 1.0f);
  EXPECT_EQ(bf->dataAs<float>()[1], 3.140625f);
  EXPECT_EQ(f->loadF32("d")->dataAs<float>()[0], 0.5f);

  Expected<Tensor> i = f->loadF32("i");
  ASSERT_FALSE(i.ok());
  EXPECT_CONTAINS(i.message(), "tensor 'i' has dtype I64");
  Expected<Tensor> none = f->tensor("nope");
  ASSERT_FALSE(none.ok());
  EXPECT_CONTAINS(none.message(), "no tensor named 'nope'");
}

TEST_F(SafetensorsTest, MisalignedDataIsCopied) {
  // A hand-made file whose header length leaves the data section at an
  // offset that is not a multiple of 4: a view would be misaligned for f32,
  // so the reader must copy.
  std::string header =
      R"({"x":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})";
  header += " "; // 8 + 55 bytes: the data starts at offset 63
  ASSERT_NE((8 + header.size()) % 4, 0u);
  std::vector<uint8_t> bytes = makeSafetensors(header, 0);
  float v = 1.5f;
  const auto *p = reinterpret_cast<const uint8_t *>(&v);
  bytes.insert(bytes.end(), p, p + 4);
  Expected<SafetensorsFile> f = openBytes(bytes, "odd.st");
  ASSERT_TRUE(f.ok()) << f.message();
  Expected<Tensor> t = f->loadF32("x");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->dataAs<float>()[0], 1.5f);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t->data()) % 4, 0u);
}

TEST_F(SafetensorsTest, AcceptsEmptyHeaderGapsAndTrailingBytes) {
  Expected<SafetensorsFile> empty = openBytes(makeSafetensors("{}", 0));
  ASSERT_TRUE(empty.ok()) << empty.message();
  EXPECT_EQ(empty->size(), 0u);
  // Gap [0, 8) and trailing bytes after the last tensor are tolerated.
  Expected<SafetensorsFile> gaps = openBytes(makeSafetensors(
      R"({"x":{"dtype":"U8","shape":[2],"data_offsets":[8,10]},)"
      R"("b":{"dtype":"BOOL","shape":[],"data_offsets":[10,11]}})",
      32));
  ASSERT_TRUE(gaps.ok()) << gaps.message();
  EXPECT_EQ(gaps->find("b")->dtype, DType::Bool);
  EXPECT_EQ(gaps->find("b")->shape, Shape{});
}

TEST_F(SafetensorsTest, FromBytesUsesDisplayName) {
  Expected<SafetensorsFile> f =
      SafetensorsFile::fromBytes({1, 2, 3}, "<embedded>");
  ASSERT_FALSE(f.ok());
  EXPECT_CONTAINS(f.message(), "<embedded>: file is too short");
}

//===----------------------------------------------------------------------===//
// Refusals: file level
//===----------------------------------------------------------------------===//

TEST_F(SafetensorsTest, RefusesMissingFileAndDirectory) {
  Expected<SafetensorsFile> f = SafetensorsFile::open(tmp.path("nope"));
  ASSERT_FALSE(f.ok());
  EXPECT_CONTAINS(f.message(), tmp.path("nope"));
  EXPECT_CONTAINS(f.message(), "No such file or directory");
  Expected<SafetensorsFile> d = SafetensorsFile::open(tmp.root());
  ASSERT_FALSE(d.ok());
  EXPECT_CONTAINS(d.message(), "is a directory");
}

TEST_F(SafetensorsTest, RefusesFileShorterThan8Bytes) {
  for (size_t n : {0, 1, 7}) {
    Expected<SafetensorsFile> f = openBytes(std::vector<uint8_t>(n, 0));
    ASSERT_FALSE(f.ok());
    EXPECT_CONTAINS(f.message(), tmp.path("bad.st") + ": file is too short");
    EXPECT_CONTAINS(f.message(), "(" + std::to_string(n) + " bytes");
  }
}

TEST_F(SafetensorsTest, RefusesHeaderLongerThanFile) {
  Expected<SafetensorsFile> f = openBytes(makeSafetensors("{}", 0, 1000));
  ASSERT_FALSE(f.ok());
  EXPECT_CONTAINS(f.message(), "header length 1000 exceeds the file size "
                               "(10 bytes)");
}

TEST_F(SafetensorsTest, RefusesAbsurdHeaderLength) {
  Expected<SafetensorsFile> f =
      openBytes(makeSafetensors("{}", 0, 200'000'000));
  ASSERT_FALSE(f.ok());
  EXPECT_CONTAINS(f.message(), "header length 200000000 is absurd");
  // 2^64-1 must not wrap around in the size arithmetic.
  std::vector<uint8_t> allOnes(16, 0xFF);
  Expected<SafetensorsFile> h = openBytes(allOnes);
  ASSERT_FALSE(h.ok());
  EXPECT_CONTAINS(h.message(), "is absurd");
}

TEST_F(SafetensorsTest, RefusesInvalidJson) {
  std::string m = refusal("{\"x\": ");
  EXPECT_CONTAINS(m, "header is not valid JSON");
  EXPECT_CONTAINS(m, "parse error");
  EXPECT_CONTAINS(refusal("{} trailing"), "not valid JSON");
  EXPECT_CONTAINS(refusal(std::string("{\"\xff\":1}")), "not valid JSON");
  EXPECT_CONTAINS(refusal(""), "not valid JSON");
}

TEST_F(SafetensorsTest, RefusesNonObjectHeader) {
  EXPECT_CONTAINS(refusal("[1, 2]"), "header is not a JSON object (found a "
                                     "array)");
  EXPECT_CONTAINS(refusal("\"str\""), "not a JSON object");
  EXPECT_CONTAINS(refusal("null"), "not a JSON object");
}

TEST_F(SafetensorsTest, RefusesDeepNesting) {
  std::string deep =
      "{\"x\":" + std::string(10000, '[') + std::string(10000, ']') + "}";
  EXPECT_CONTAINS(refusal(deep), "nested deeper than");
}

TEST_F(SafetensorsTest, RefusesDuplicateKeys) {
  std::string t = R"({"dtype":"U8","shape":[1],"data_offsets":[0,1]})";
  EXPECT_CONTAINS(refusal("{\"a\":" + t + ",\"a\":" + t + "}"),
                  "duplicate key 'a'");
  EXPECT_CONTAINS(refusal(R"({"a":{"dtype":"U8","dtype":"F32","shape":[1],)"
                          R"("data_offsets":[0,1]}})"),
                  "duplicate key 'dtype' in the entry of tensor 'a'");
}

TEST_F(SafetensorsTest, ValidatesMetadata) {
  EXPECT_CONTAINS(refusal(R"({"__metadata__":[1]})"),
                  "'__metadata__' must be an object");
  EXPECT_CONTAINS(refusal(R"({"__metadata__":{"k":1}})"),
                  "'__metadata__' entry 'k' must be a string (found a number)");
  Expected<SafetensorsFile> f =
      openBytes(makeSafetensors(R"({"__metadata__":{"k":"v"}})", 0));
  ASSERT_TRUE(f.ok()) << f.message();
  EXPECT_EQ(f->metadata().at("k"), "v");
  EXPECT_EQ(f->size(), 0u);
}

//===----------------------------------------------------------------------===//
// Refusals: tensor level (each names the tensor)
//===----------------------------------------------------------------------===//

TEST_F(SafetensorsTest, RefusesUnknownAndUnsupportedDtypes) {
  EXPECT_CONTAINS(
      refusal(R"({"w.0":{"dtype":"F33","shape":[1],"data_offsets":[0,4]}})"),
      "tensor 'w.0': unknown dtype 'F33'");
  EXPECT_CONTAINS(
      refusal(R"({"w":{"dtype":"f32","shape":[1],"data_offsets":[0,4]}})"),
      "tensor 'w': unknown dtype 'f32'");
  EXPECT_CONTAINS(
      refusal(R"({"q":{"dtype":"F8_E4M3","shape":[1],"data_offsets":[0,1]}})"),
      "tensor 'q': unsupported dtype 'F8_E4M3'");
}

TEST_F(SafetensorsTest, RefusesMissingFields) {
  EXPECT_CONTAINS(refusal(R"({"t":{"shape":[1],"data_offsets":[0,4]}})"),
                  "tensor 't': missing field 'dtype'");
  EXPECT_CONTAINS(refusal(R"({"t":{"dtype":"F32","data_offsets":[0,4]}})"),
                  "tensor 't': missing field 'shape'");
  EXPECT_CONTAINS(refusal(R"({"t":{"dtype":"F32","shape":[1]}})"),
                  "tensor 't': missing field 'data_offsets'");
}

TEST_F(SafetensorsTest, RefusesIllTypedFields) {
  EXPECT_CONTAINS(refusal(R"({"t":[1,2]})"),
                  "tensor 't': entry must be an object (found a array)");
  EXPECT_CONTAINS(
      refusal(R"({"t":{"dtype":32,"shape":[1],"data_offsets":[0,4]}})"),
      "tensor 't': field 'dtype' must be a string (found a number)");
  EXPECT_CONTAINS(
      refusal(R"({"t":{"dtype":"F32","shape":"2x2","data_offsets":[0,4]}})"),
      "tensor 't': field 'shape' must be an array (found a string)");
  EXPECT_CONTAINS(
      refusal(R"({"t":{"dtype":"F32","shape":[2.0],"data_offsets":[0,8]}})"),
      "field 'shape' must hold non-negative integers (found non-integer");
  EXPECT_CONTAINS(
      refusal(R"({"t":{"dtype":"F32","shape":["2"],"data_offsets":[0,8]}})"),
      "(found a JSON string)");
  EXPECT_CONTAINS(
      refusal(R"({"t":{"dtype":"F32","shape":[1],"data_offsets":[0]}})"),
      "tensor 't': field 'data_offsets' must be an array [begin, end]");
  EXPECT_CONTAINS(
      refusal(R"({"t":{"dtype":"F32","shape":[1],"data_offsets":{"a":1}}})"),
      "field 'data_offsets' must be an array [begin, end]");
  EXPECT_CONTAINS(
      refusal(R"({"t":{"dtype":"F32","shape":[1],"data_offsets":["0",4]}})"),
      "tensor 't': field 'data_offsets' must hold non-negative integers");
}

TEST_F(SafetensorsTest, RefusesNegativeShape) {
  EXPECT_CONTAINS(
      refusal(R"({"t":{"dtype":"F32","shape":[-1,4],"data_offsets":[0,4]}})"),
      "tensor 't': field 'shape' must hold non-negative integers (found "
      "negative number -1)");
}

TEST_F(SafetensorsTest, RefusesOverflowingShape) {
  // 2^32 * 2^32 * 2 elements overflows u64; so does a product that only
  // overflows once multiplied by the element size.
  EXPECT_CONTAINS(
      refusal(R"({"t":{"dtype":"F32","shape":[4294967296,4294967296,2],)"
              R"("data_offsets":[0,4]}})"),
      "tensor 't': shape [4294967296, 4294967296, 2] overflows");
  EXPECT_CONTAINS(
      refusal(R"({"t":{"dtype":"F32","shape":[4611686018427387904],)"
              R"("data_offsets":[0,4]}})"),
      "overflows the element count");
  EXPECT_CONTAINS(
      refusal(R"({"t":{"dtype":"F32","shape":[18446744073709551615],)"
              R"("data_offsets":[0,4]}})"),
      "dimension 18446744073709551615 is too large");
  // Numbers beyond u64 parse as floats.
  EXPECT_CONTAINS(
      refusal(R"({"t":{"dtype":"F32","shape":[99999999999999999999999],)"
              R"("data_offsets":[0,4]}})"),
      "non-integer");
  // A zero dimension makes an otherwise huge shape empty: accepted.
  Expected<SafetensorsFile> f = openBytes(makeSafetensors(
      R"({"t":{"dtype":"F32","shape":[4294967296,4294967296,0],)"
      R"("data_offsets":[0,0]}})",
      0));
  EXPECT_TRUE(f.ok()) << f.message();
}

TEST_F(SafetensorsTest, RefusesOffsetsOutOfRange) {
  EXPECT_CONTAINS(
      refusal(R"({"t":{"dtype":"F32","shape":[4],"data_offsets":[64,80]}})",
              64),
      "tensor 't': data_offsets [64, 80] lie outside the data section (64 "
      "bytes)");
  EXPECT_CONTAINS(
      refusal(
          R"({"t":{"dtype":"U8","shape":[1],)"
          R"("data_offsets":[18446744073709551615,18446744073709551615]}})"),
      "lie outside the data section");
}

TEST_F(SafetensorsTest, RefusesBeginAfterEnd) {
  EXPECT_CONTAINS(
      refusal(R"({"t":{"dtype":"F32","shape":[1],"data_offsets":[8,4]}})"),
      "tensor 't': data_offsets [8, 4] have begin > end");
}

TEST_F(SafetensorsTest, RefusesByteSizeMismatch) {
  EXPECT_CONTAINS(
      refusal(R"({"t":{"dtype":"F32","shape":[2,2],"data_offsets":[0,12]}})"),
      "tensor 't': data_offsets [0, 12] span 12 bytes, but f32[2, 2] needs "
      "16");
  EXPECT_CONTAINS(
      refusal(R"({"t":{"dtype":"BF16","shape":[3],"data_offsets":[0,12]}})"),
      "span 12 bytes, but bf16[3] needs 6");
}

TEST_F(SafetensorsTest, RefusesOverlappingTensors) {
  EXPECT_CONTAINS(
      refusal(R"({"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]},)"
              R"("b":{"dtype":"F32","shape":[4],"data_offsets":[8,24]}})"),
      "tensors 'a' [0, 16) and 'b' [8, 24) overlap");
  // Same range twice (aliases) is an overlap too.
  EXPECT_CONTAINS(
      refusal(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
              R"("b":{"dtype":"I32","shape":[2],"data_offsets":[0,8]}})"),
      "overlap");
  // Touching ranges and empty tensors inside others are fine.
  Expected<SafetensorsFile> f = openBytes(makeSafetensors(
      R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
      R"("b":{"dtype":"F32","shape":[2],"data_offsets":[8,16]},)"
      R"("e":{"dtype":"F32","shape":[0],"data_offsets":[4,4]}})",
      16));
  EXPECT_TRUE(f.ok()) << f.message();
}

TEST_F(SafetensorsTest, TruncatedRealFileIsRefused) {
  std::map<std::string, Tensor> tensors = {
      {"w", *Tensor::fromF32({4}, {1, 2, 3, 4})}};
  Expected<std::vector<uint8_t>> bytes = serializeSafetensors(tensors);
  ASSERT_TRUE(bytes.ok());
  std::vector<uint8_t> cut(bytes->begin(), bytes->end() - 1);
  Expected<SafetensorsFile> f = openBytes(cut);
  ASSERT_FALSE(f.ok());
  EXPECT_CONTAINS(f.message(), "tensor 'w': data_offsets [0, 16] lie outside "
                               "the data section (15 bytes)");
  std::vector<uint8_t> headerCut(bytes->begin(), bytes->begin() + 20);
  Expected<SafetensorsFile> g = openBytes(headerCut);
  ASSERT_FALSE(g.ok());
  EXPECT_CONTAINS(g.message(), "exceeds the file size");
}

//===----------------------------------------------------------------------===//
// Writer refusals
//===----------------------------------------------------------------------===//

TEST_F(SafetensorsTest, WriterRefusesBadInput) {
  Tensor t = *Tensor::fromF32({1}, {1});
  Status s = writeSafetensors(tmp.path("x.st"), {{"__metadata__", t}});
  ASSERT_FALSE(s.ok());
  EXPECT_CONTAINS(s.message(), "reserved");
  EXPECT_FALSE(writeSafetensors(tmp.path("x.st"), {{"", t}}).ok());
  EXPECT_FALSE(writeSafetensors(tmp.path("x.st"), {{"n", Tensor()}}).ok());
  Status utf = writeSafetensors(tmp.path("x.st"), {{"bad\xff", t}});
  ASSERT_FALSE(utf.ok());
  EXPECT_CONTAINS(utf.message(), "not valid UTF-8");
  EXPECT_FALSE(fileExists(tmp.path("x.st")));

  Status dir = writeSafetensors(tmp.path("no/such/dir.st"), {{"t", t}});
  ASSERT_FALSE(dir.ok());
  EXPECT_CONTAINS(dir.message(), "no/such/dir.st");
  EXPECT_CONTAINS(dir.message(), "No such file or directory");
}
