//===- Tensor.h - Dense tensors for the tfc runtime -------------*- C++ -*-===//
//
// A Tensor is a dtype, a shape and a contiguous row-major buffer. It is the
// currency between the weight loader, the generated pipelines (which wrap the
// buffer in a halide_buffer_t) and the output writers.
//
// Storage is shared and reference-counted: copying a Tensor is cheap and
// aliases the same bytes (as torch.Tensor does). A Tensor either owns its
// bytes (64-byte aligned heap memory, so AVX-512 loads in generated code never
// straddle a cache line) or borrows them from something else, typically a
// memory-mapped checkpoint; a borrowing Tensor keeps that owner alive through
// the shared pointer, so a view can never outlive the mapping it points into.
//
// fp16/bf16 are storage types only (docs/design.md#kernels): generated code
// computes in fp32, so this file also carries the exact conversions between
// them.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_RUNTIME_TENSOR_H
#define TFC_RUNTIME_TENSOR_H

#include "runtime/Status.h"

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tfc::rt {

//===----------------------------------------------------------------------===//
// Element types
//===----------------------------------------------------------------------===//

/// Element types the runtime can hold. The set is what checkpoints and
/// generated code actually use; safetensors' exotic types (fp8, u16..u64) are
/// refused by the reader with a message that names them.
enum class DType : uint8_t {
  F32,
  F16,
  BF16,
  F64,
  I64,
  I32,
  I16,
  I8,
  U8,
  Bool, ///< One byte per element, 0 or 1 (numpy and safetensors agree).
};

/// Bytes per element.
size_t dtypeSize(DType dtype);

/// Lower-case name as used in tfc diagnostics and the .tfm language: "f32",
/// "f16", "bf16", "f64", "i64", "i32", "i16", "i8", "u8", "bool".
const char *dtypeName(DType dtype);

/// True for F32, F16, BF16, F64: the types convertToF32 accepts.
bool isFloatingPoint(DType dtype);

//===----------------------------------------------------------------------===//
// Shapes
//===----------------------------------------------------------------------===//

/// Row-major dimensions, outermost first. A rank-0 shape is a scalar (one
/// element). Dimensions are int64_t to match safetensors, numpy and Halide
/// extents; a valid shape has no negative dimension.
using Shape = std::vector<int64_t>;

/// "[768, 2304]"; "[]" for a scalar.
std::string shapeToString(const Shape &shape);

/// "f32[768, 2304]": the form used in binding diagnostics.
std::string typeToString(DType dtype, const Shape &shape);

/// The number of elements, or an error for a negative dimension or a product
/// that does not fit in int64_t. Shapes come from untrusted files, so the
/// multiplication must be checked before it is used to size anything.
Expected<int64_t> checkedNumElements(const Shape &shape);

/// numElements * dtypeSize, checked for overflow as above.
Expected<size_t> checkedByteSize(DType dtype, const Shape &shape);

//===----------------------------------------------------------------------===//
// fp16 / bf16 conversions
//===----------------------------------------------------------------------===//

/// IEEE 754 binary16 bits to float. Exact (every half is a float): handles
/// signed zeros, subnormals (0x0001 = 2^-24), infinities, and NaNs (payload
/// kept, so a NaN stays a NaN).
float f16ToF32(uint16_t bits);

/// bfloat16 bits to float. Exact: bf16 is the upper half of an fp32.
float bf16ToF32(uint16_t bits);

/// float to binary16 bits, rounding to nearest, ties to even. Values at or
/// above 65520 in magnitude become infinity; values too small for the smallest
/// subnormal round to (signed) zero; NaN stays a quiet NaN.
uint16_t f32ToF16(float value);

/// float to bfloat16 bits, rounding to nearest, ties to even (not the
/// truncation some libraries use); NaN stays a quiet NaN.
uint16_t f32ToBf16(float value);

/// Converts `count` elements of floating-point type `src` to floats. `src`
/// may be unaligned (checkpoint data in a mapping need not be), so elements
/// are read with memcpy. Returns an error for non-floating-point types.
Status convertToF32(DType srcType, const void *src, float *dst, size_t count);

/// Blocks of at least this many bytes are allocated as whole transparent
/// huge pages (see allocateBlock).
constexpr size_t kHugeBlock = size_t(2) << 20;

/// Uninitialized storage for tensors, freed with std::free: aligned to
/// Tensor::kAlignment (64 bytes); blocks of kHugeBlock bytes or more are
/// rounded up to whole 2 MiB pages, aligned to them and advised as huge
/// pages (madvise MADV_HUGEPAGE, where the system has it), so that
/// streaming them (weights, KV caches) costs no TLB miss per 4 KiB.
/// `bytes` must be a multiple of Tensor::kAlignment. Null when out of memory.
void *allocateBlock(size_t bytes);

/// The bytes allocateBlock(bytes) reserves: `bytes`, or whole 2 MiB pages
/// for a huge block (0 when rounding up overflows).
size_t blockBytes(size_t bytes);

//===----------------------------------------------------------------------===//
// Tensor
//===----------------------------------------------------------------------===//

class Tensor {
public:
  /// Alignment of owned buffers, in bytes.
  static constexpr size_t kAlignment = 64;

  /// `bytes` rounded up to a multiple of kAlignment; 0 when that overflows.
  static constexpr size_t alignUp(size_t bytes) {
    return bytes > SIZE_MAX - (kAlignment - 1)
               ? 0
               : (bytes + kAlignment - 1) / kAlignment * kAlignment;
  }

  /// The aligned block that holds a tensor of `dtype` and `shape` (what
  /// allocate() and the executor's pool ask for): its byte size rounded up
  /// to kAlignment (std::aligned_alloc needs a multiple of it), and one
  /// whole unit for an empty tensor, so that data() is never null. An error
  /// for an invalid shape or one too large to allocate.
  static Expected<size_t> alignedBytesFor(DType dtype, const Shape &shape);

  /// A null tensor: no dtype meaning, no storage. isNull() is true. Useful as
  /// a placeholder; every factory below returns a non-null tensor.
  Tensor() = default;

  /// A new owned, zero-filled tensor. Fails for an invalid shape or when
  /// memory cannot be allocated (reported, not thrown).
  static Expected<Tensor> zeros(DType dtype, Shape shape);

  /// A new owned tensor whose bytes are not initialized: for storage that
  /// is about to be overwritten whole (a file read into it, a kernel's
  /// output). Fails like zeros().
  static Expected<Tensor> allocate(DType dtype, Shape shape);

  /// The storageBytes() of allocate(dtype, shape)'s result.
  static Expected<size_t> storageBytesFor(DType dtype, const Shape &shape);

  /// A tensor of `dtype` and `shape` in the storage of `old`, whose bytes
  /// it keeps (uninitialized in effect): reuses a block instead of paging
  /// in a fresh one. `old` must own its storage alone (!storageShared())
  /// and its block must hold the new size; otherwise an error, and `old` is
  /// left as it was.
  static Expected<Tensor> reuse(Tensor &&old, DType dtype, Shape shape);

  /// A tensor that borrows `data` (which must hold checkedByteSize bytes).
  /// `owner` is kept alive as long as any copy of the tensor exists; pass the
  /// object that owns the memory (e.g. a mapped file), or nullptr when the
  /// caller guarantees the lifetime.
  static Expected<Tensor> borrow(DType dtype, Shape shape, void *data,
                                 std::shared_ptr<const void> owner);

  /// A new owned f32 tensor holding `values`; fails when the shape's element
  /// count differs from values.size(). Handy for tests and small inputs.
  static Expected<Tensor> fromF32(Shape shape,
                                  const std::vector<float> &values);
  static Expected<Tensor> fromI32(Shape shape,
                                  const std::vector<int32_t> &values);
  static Expected<Tensor> fromI64(Shape shape,
                                  const std::vector<int64_t> &values);

  bool isNull() const { return !base; }
  DType dtype() const { return type; }
  const Shape &shape() const { return dims; }
  size_t rank() const { return dims.size(); }
  int64_t dim(size_t i) const {
    assert(i < dims.size() && "dim index out of range");
    return dims[i];
  }
  int64_t numElements() const { return count; }
  size_t byteSize() const {
    return static_cast<size_t>(count) * dtypeSize(type);
  }

  /// "f32[2, 3]".
  std::string typeString() const { return typeToString(type, dims); }
  /// The first `count` values as text, "0.5, -1, 2, ..." (6 significant
  /// digits; "..." when there are more), as `tfc run` prints them.
  std::string firstValues(size_t count) const;

  /// False for a tensor made by borrow() (e.g. a view into a checkpoint).
  bool ownsData() const { return owned; }
  /// Bytes of the storage behind data(): the whole block of an owned
  /// tensor (blockBytes; at least byteSize()), byteSize() for a borrowed one.
  size_t storageBytes() const { return capacity; }
  /// Whether another Tensor (a copy, or a view's other users) shares this
  /// one's storage, so that freeing or reusing it would affect them.
  bool storageShared() const { return keepAlive.use_count() > 1; }

  const void *data() const { return base; }
  /// Writable access. For a view into a checkpoint mapping this writes the
  /// private (copy-on-write) mapping, never the file, but is seen by every
  /// other view of the same tensor: treat weights as read-only.
  void *data() { return base; }

  /// Typed access. T must have the dtype's element size; the buffer must be
  /// suitably aligned for T (always true for owned tensors and for views
  /// handed out by SafetensorsFile).
  template <typename T> const T *dataAs() const {
    assert(sizeof(T) == dtypeSize(type) && "element size mismatch");
    return static_cast<const T *>(base);
  }
  template <typename T> T *dataAs() {
    assert(sizeof(T) == dtypeSize(type) && "element size mismatch");
    return static_cast<T *>(base);
  }

  /// A deep copy into a new owned tensor.
  Expected<Tensor> clone() const;

  /// This tensor as f32: itself (shared, no copy) when already f32, else a
  /// converted owned copy. Fails for non-floating-point dtypes.
  Expected<Tensor> toF32() const;

private:
  DType type = DType::F32;
  Shape dims;
  int64_t count = 0;
  /// Keeps the bytes alive: the aligned heap block, or the borrowed owner.
  std::shared_ptr<const void> keepAlive;
  void *base = nullptr;
  /// storageBytes().
  size_t capacity = 0;
  bool owned = false;
};

} // namespace tfc::rt

#endif // TFC_RUNTIME_TENSOR_H
