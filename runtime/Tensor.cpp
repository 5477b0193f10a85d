//===- Tensor.cpp - Dense tensors for the tfc runtime ---------------------===//

#include "runtime/Tensor.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <sstream>

#include <sys/mman.h>

namespace tfc::rt {

//===----------------------------------------------------------------------===//
// Element types
//===----------------------------------------------------------------------===//

size_t dtypeSize(DType dtype) {
  switch (dtype) {
  case DType::F64:
  case DType::I64:
    return 8;
  case DType::F32:
  case DType::I32:
    return 4;
  case DType::F16:
  case DType::BF16:
  case DType::I16:
    return 2;
  case DType::I8:
  case DType::U8:
  case DType::Bool:
    return 1;
  }
  return 1; // Unreachable for valid enumerators; keeps -Wreturn-type quiet.
}

const char *dtypeName(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return "f32";
  case DType::F16:
    return "f16";
  case DType::BF16:
    return "bf16";
  case DType::F64:
    return "f64";
  case DType::I64:
    return "i64";
  case DType::I32:
    return "i32";
  case DType::I16:
    return "i16";
  case DType::I8:
    return "i8";
  case DType::U8:
    return "u8";
  case DType::Bool:
    return "bool";
  }
  return "?";
}

bool isFloatingPoint(DType dtype) {
  return dtype == DType::F32 || dtype == DType::F16 || dtype == DType::BF16 ||
         dtype == DType::F64;
}

//===----------------------------------------------------------------------===//
// Shapes
//===----------------------------------------------------------------------===//

std::string shapeToString(const Shape &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      s += ", ";
    s += std::to_string(shape[i]);
  }
  s += "]";
  return s;
}

std::string typeToString(DType dtype, const Shape &shape) {
  return dtypeName(dtype) + shapeToString(shape);
}

Expected<int64_t> checkedNumElements(const Shape &shape) {
  for (int64_t d : shape)
    if (d < 0)
      return Status::error("invalid shape " + shapeToString(shape) +
                           ": negative dimension");
  // A zero dimension anywhere makes the tensor empty, even where the
  // product of the others would overflow.
  if (std::find(shape.begin(), shape.end(), 0) != shape.end())
    return int64_t(0);
  int64_t n = 1;
  for (int64_t d : shape) {
    if (n > std::numeric_limits<int64_t>::max() / d)
      return Status::error("invalid shape " + shapeToString(shape) +
                           ": element count overflows");
    n *= d;
  }
  return n;
}

Expected<size_t> checkedByteSize(DType dtype, const Shape &shape) {
  Expected<int64_t> n = checkedNumElements(shape);
  if (!n)
    return n.status();
  uint64_t elems = static_cast<uint64_t>(*n);
  uint64_t size = dtypeSize(dtype);
  if (elems > std::numeric_limits<size_t>::max() / size)
    return Status::error("invalid shape " + shapeToString(shape) +
                         ": byte size overflows");
  return static_cast<size_t>(elems * size);
}

//===----------------------------------------------------------------------===//
// fp16 / bf16 conversions
//===----------------------------------------------------------------------===//

// The conversions work on bit patterns (memcpy, never pointer casts, to stay
// within the aliasing rules) so that they are exact and independent of the
// host's FPU modes (no flush-to-zero surprises for subnormals).

static float bitsToFloat(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

static uint32_t floatToBits(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  return bits;
}

float f16ToF32(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1Fu;
  uint32_t mant = h & 0x3FFu;
  if (exp == 0x1F) // Inf (mant == 0) or NaN (payload moves up unchanged).
    return bitsToFloat(sign | 0x7F800000u | (mant << 13));
  if (exp == 0) {
    if (mant == 0)
      return bitsToFloat(sign); // +-0
    // Subnormal: value = mant * 2^-24. Normalize so the leading 1 becomes the
    // implicit bit of a (normal) float.
    int shift = 0;
    while ((mant & 0x400u) == 0) {
      mant <<= 1;
      ++shift;
    }
    mant &= 0x3FFu;
    uint32_t exp32 = static_cast<uint32_t>(127 - 15 + 1 - shift);
    return bitsToFloat(sign | (exp32 << 23) | (mant << 13));
  }
  // Normal: rebias the exponent from 15 to 127.
  return bitsToFloat(sign | ((exp + 127 - 15) << 23) | (mant << 13));
}

float bf16ToF32(uint16_t bits) {
  return bitsToFloat(static_cast<uint32_t>(bits) << 16);
}

uint16_t f32ToF16(float value) {
  uint32_t bits = floatToBits(value);
  uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  uint32_t exp = (bits >> 23) & 0xFFu;
  uint32_t mant = bits & 0x7FFFFFu;

  if (exp == 0xFF) {
    if (mant == 0)
      return sign | 0x7C00u; // Inf
    // NaN: keep the top payload bits and force the quiet bit so that a
    // payload living only in the dropped low bits cannot turn into Inf.
    return static_cast<uint16_t>(sign | 0x7E00u | (mant >> 13));
  }

  int e = static_cast<int>(exp) - 127; // Unbiased; f32 subnormals give -127.
  if (e > 15)
    return sign | 0x7C00u; // >= 65536: overflows to Inf under any rounding.

  if (e >= -14) {
    // Normal half candidate. Drop 13 mantissa bits with round-to-nearest-even;
    // a carry out of the mantissa correctly bumps the exponent (and turns
    // 65520.. into Inf, 0x7C00).
    uint32_t half = (static_cast<uint32_t>(e + 15) << 10) | (mant >> 13);
    uint32_t rest = mant & 0x1FFFu;
    if (rest > 0x1000u || (rest == 0x1000u && (half & 1u)))
      ++half;
    return static_cast<uint16_t>(sign | half);
  }

  // Below the smallest normal half (2^-14): a subnormal half counts units of
  // 2^-24. With the implicit bit, value = m * 2^(e-23), i.e. m * 2^(e+1) units;
  // shift right by -(e+1) bits (14..24) with round-to-nearest-even. Anything
  // below 2^-25 rounds to zero; exactly 2^-25 ties to the even 0.
  if (e < -25)
    return sign;
  uint32_t m = mant | 0x800000u;
  int shift = -(e + 1);
  uint32_t half = m >> shift;
  uint32_t rest = m & ((1u << shift) - 1u);
  uint32_t halfway = 1u << (shift - 1);
  if (rest > halfway || (rest == halfway && (half & 1u)))
    ++half; // May carry into 0x400, the smallest normal: still correct.
  return static_cast<uint16_t>(sign | half);
}

uint16_t f32ToBf16(float value) {
  uint32_t bits = floatToBits(value);
  if ((bits & 0x7F800000u) == 0x7F800000u && (bits & 0x7FFFFFu) != 0)
    return static_cast<uint16_t>((bits >> 16) | 0x0040u); // Quiet NaN.
  // Round to nearest even: add 0x7FFF plus the lowest kept bit, then
  // truncate. Overflow of the largest finite values correctly yields Inf.
  bits += 0x7FFFu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>(bits >> 16);
}

Status convertToF32(DType srcType, const void *src, float *dst, size_t count) {
  const auto *bytes = static_cast<const unsigned char *>(src);
  switch (srcType) {
  case DType::F32:
    std::memcpy(dst, src, count * sizeof(float));
    return Status::success();
  case DType::F16:
    for (size_t i = 0; i < count; ++i) {
      uint16_t h;
      std::memcpy(&h, bytes + 2 * i, 2);
      dst[i] = f16ToF32(h);
    }
    return Status::success();
  case DType::BF16:
    for (size_t i = 0; i < count; ++i) {
      uint16_t h;
      std::memcpy(&h, bytes + 2 * i, 2);
      dst[i] = bf16ToF32(h);
    }
    return Status::success();
  case DType::F64:
    for (size_t i = 0; i < count; ++i) {
      double d;
      std::memcpy(&d, bytes + 8 * i, 8);
      dst[i] = static_cast<float>(d);
    }
    return Status::success();
  default:
    return Status::error(std::string("cannot convert ") + dtypeName(srcType) +
                         " to f32");
  }
}

//===----------------------------------------------------------------------===//
// Tensor
//===----------------------------------------------------------------------===//

size_t blockBytes(size_t bytes) {
  if (bytes < kHugeBlock)
    return bytes;
  size_t rounded = (bytes + kHugeBlock - 1) / kHugeBlock * kHugeBlock;
  return rounded < bytes ? 0 : rounded;
}

void *allocateBlock(size_t bytes) {
  if (bytes < kHugeBlock)
    return std::aligned_alloc(Tensor::kAlignment, bytes);
  // Whole 2 MiB pages, aligned to them, and asked for as transparent huge
  // pages before the first touch: a decode step streams ~0.5 GB of weights
  // (and the KV cache), which in 4 KiB pages is a TLB miss (a page walk,
  // nested under a hypervisor) every 4 KiB.
  size_t rounded = blockBytes(bytes);
  if (rounded == 0)
    return nullptr;
  void *p = std::aligned_alloc(kHugeBlock, rounded);
#ifdef MADV_HUGEPAGE
  if (p)
    ::madvise(p, rounded, MADV_HUGEPAGE); // advice only: failure is harmless
#endif
  return p;
}

Expected<size_t> Tensor::alignedBytesFor(DType dtype, const Shape &shape) {
  Expected<size_t> bytes = checkedByteSize(dtype, shape);
  if (!bytes)
    return bytes.status();
  size_t rounded = *bytes == 0 ? kAlignment : alignUp(*bytes);
  if (rounded == 0 || blockBytes(rounded) == 0) // Wrapped around.
    return Status::error("cannot allocate " + typeToString(dtype, shape) +
                         ": too large");
  return rounded;
}

Expected<size_t> Tensor::storageBytesFor(DType dtype, const Shape &shape) {
  Expected<size_t> rounded = alignedBytesFor(dtype, shape);
  if (!rounded)
    return rounded;
  return blockBytes(*rounded);
}

Expected<Tensor> Tensor::allocate(DType dtype, Shape shape) {
  Expected<size_t> rounded = alignedBytesFor(dtype, shape);
  if (!rounded)
    return rounded.status();
  size_t size = *checkedByteSize(dtype, shape);
  void *p = allocateBlock(*rounded);
  if (!p)
    return Status::error("out of memory allocating " + std::to_string(size) +
                         " bytes for " + typeToString(dtype, shape));

  Tensor t;
  t.type = dtype;
  t.count = static_cast<int64_t>(size / dtypeSize(dtype));
  t.dims = std::move(shape);
  t.keepAlive = std::shared_ptr<const void>(
      p, [](const void *q) { std::free(const_cast<void *>(q)); });
  t.base = p;
  t.capacity = blockBytes(*rounded);
  t.owned = true;
  return t;
}

Expected<Tensor> Tensor::zeros(DType dtype, Shape shape) {
  Expected<Tensor> t = allocate(dtype, std::move(shape));
  if (t) // The block's 64-byte-aligned part that the tensor uses.
    std::memset(t->base, 0, alignUp(t->byteSize()));
  return t;
}

Expected<Tensor> Tensor::reuse(Tensor &&old, DType dtype, Shape shape) {
  Expected<size_t> bytes = checkedByteSize(dtype, shape);
  if (!bytes)
    return bytes.status();
  if (!old.owned || old.storageShared() || *bytes > old.capacity)
    return Status::error("cannot reuse the storage of " + old.typeString() +
                         " for " + typeToString(dtype, shape));
  Tensor t = std::move(old);
  t.type = dtype;
  t.count = *checkedNumElements(shape);
  t.dims = std::move(shape);
  return t;
}

Expected<Tensor> Tensor::borrow(DType dtype, Shape shape, void *data,
                                std::shared_ptr<const void> owner) {
  Expected<int64_t> n = checkedNumElements(shape);
  if (!n)
    return n.status();
  if (!data)
    return Status::error("cannot borrow a null buffer for " +
                         typeToString(dtype, shape));
  Tensor t;
  t.type = dtype;
  t.count = *n;
  t.dims = std::move(shape);
  t.keepAlive = std::move(owner);
  t.base = data;
  t.capacity = t.byteSize();
  t.owned = false;
  return t;
}

template <typename T>
static Expected<Tensor> fromValues(DType dtype, Shape shape,
                                   const std::vector<T> &values) {
  Expected<Tensor> t = Tensor::zeros(dtype, std::move(shape));
  if (!t)
    return t;
  if (static_cast<uint64_t>(t->numElements()) != values.size())
    return Status::error("shape " + shapeToString(t->shape()) + " holds " +
                         std::to_string(t->numElements()) + " elements, got " +
                         std::to_string(values.size()) + " values");
  if (!values.empty())
    std::memcpy(t->data(), values.data(), values.size() * sizeof(T));
  return t;
}

Expected<Tensor> Tensor::fromF32(Shape shape,
                                 const std::vector<float> &values) {
  return fromValues(DType::F32, std::move(shape), values);
}

Expected<Tensor> Tensor::fromI32(Shape shape,
                                 const std::vector<int32_t> &values) {
  return fromValues(DType::I32, std::move(shape), values);
}

Expected<Tensor> Tensor::fromI64(Shape shape,
                                 const std::vector<int64_t> &values) {
  return fromValues(DType::I64, std::move(shape), values);
}

Expected<Tensor> Tensor::clone() const {
  if (isNull())
    return Status::error("cannot clone a null tensor");
  Expected<Tensor> copy = zeros(type, dims);
  if (!copy)
    return copy;
  std::memcpy(copy->data(), base, byteSize());
  return copy;
}

Expected<Tensor> Tensor::toF32() const {
  if (isNull())
    return Status::error("cannot convert a null tensor");
  if (type == DType::F32)
    return *this;
  if (!isFloatingPoint(type))
    return Status::error(std::string("cannot convert ") + typeString() +
                         " to f32");
  Expected<Tensor> out = zeros(DType::F32, dims);
  if (!out)
    return out;
  TFC_RT_RETURN_IF_ERROR(convertToF32(type, base, out->dataAs<float>(),
                                      static_cast<size_t>(count)));
  return out;
}

/// Element `i` of `data` (of type `dtype`) as text.
static void printElement(std::ostream &os, DType dtype, const void *data,
                         size_t i) {
  const auto *bytes = static_cast<const unsigned char *>(data) +
                      i * dtypeSize(dtype);
  float value;
  if (convertToF32(dtype, bytes, &value, 1).ok()) {
    os << value;
    return;
  }
  switch (dtype) {
  case DType::I64: {
    int64_t v;
    std::memcpy(&v, bytes, sizeof v);
    os << v;
    return;
  }
  case DType::I32: {
    int32_t v;
    std::memcpy(&v, bytes, sizeof v);
    os << v;
    return;
  }
  case DType::I16: {
    int16_t v;
    std::memcpy(&v, bytes, sizeof v);
    os << v;
    return;
  }
  case DType::I8:
    os << static_cast<int>(static_cast<int8_t>(*bytes));
    return;
  default: // u8, bool
    os << static_cast<int>(*bytes);
    return;
  }
}

std::string Tensor::firstValues(size_t count) const {
  std::ostringstream os;
  os.precision(6);
  size_t n = std::min<size_t>(count, static_cast<size_t>(numElements()));
  for (size_t i = 0; i < n; ++i) {
    if (i)
      os << ", ";
    printElement(os, dtype(), data(), i);
  }
  if (static_cast<int64_t>(n) < numElements())
    os << ", ...";
  return os.str();
}

} // namespace tfc::rt
