//===- KvCache.cpp - Key/value caches grown in place ----------------------===//

#include "runtime/KvCache.h"

#include "runtime/Executor.h"

#include <cstring>
#include <limits>

namespace tfc::rt {

Status describeWindow(Tensor &base, const std::vector<int64_t> &offsets,
                      const Shape &shape, halide_buffer_t &buffer,
                      halide_dimension_t *dims) {
  const size_t rank = base.rank();
  if (offsets.size() != rank || shape.size() > rank)
    return Status::error("window of " + base.typeString() +
                         ": wrong number of offsets or dimensions");
  const size_t lead = rank - shape.size();
  std::vector<int64_t> strides(rank, 1);
  for (size_t d = rank; d-- > 1;)
    strides[d - 1] = strides[d] * base.dim(d);
  int64_t start = 0;
  for (size_t d = 0; d < rank; ++d) {
    int64_t extent = d < lead ? 1 : shape[d - lead];
    if (offsets[d] < 0 || extent < 0 || offsets[d] + extent > base.dim(d))
      return Status::error("window " + shapeToString(shape) + " at " +
                           shapeToString(offsets) + " is outside " +
                           base.typeString());
    start += offsets[d] * strides[d];
  }
  for (size_t i = 0; i < shape.size(); ++i) {
    size_t d = rank - 1 - i; // Halide dimension 0 is the last axis.
    if (base.dim(d) > std::numeric_limits<int32_t>::max() ||
        strides[d] > std::numeric_limits<int32_t>::max())
      return Status::error(base.typeString() +
                           " is too large for a Halide buffer");
    dims[i] = halide_dimension_t(0, static_cast<int32_t>(shape[d - lead]),
                                 static_cast<int32_t>(strides[d]));
  }
  buffer = halide_buffer_t();
  buffer.host = static_cast<uint8_t *>(base.data()) +
                static_cast<size_t>(start) * dtypeSize(base.dtype());
  buffer.type = halideTypeOf(base.dtype());
  buffer.dimensions = static_cast<int32_t>(shape.size());
  buffer.dim = dims;
  return Status::success();
}

Status copyBuffer(const halide_buffer_t &src, halide_buffer_t &dst) {
  const int rank = src.dimensions;
  if (rank != dst.dimensions || src.type != dst.type || !src.host ||
      !dst.host)
    return Status::error("copy between buffers of different types");
  for (int i = 0; i < rank; ++i)
    if (src.dim[i].extent != dst.dim[i].extent)
      return Status::error("copy between buffers of different extents");
  const size_t elem = src.type.bytes();
  for (int i = 0; i < rank; ++i)
    if (src.dim[i].extent == 0)
      return Status::success();
  // Rows of the innermost dimension; an odometer over the others.
  size_t row = rank > 0 ? static_cast<size_t>(src.dim[0].extent) : 1;
  if (rank > 0 && (src.dim[0].stride != 1 || dst.dim[0].stride != 1))
    return Status::error("copy of a buffer with a strided innermost axis");
  std::vector<int32_t> index(static_cast<size_t>(rank), 0);
  for (;;) {
    int64_t s = 0, d = 0;
    for (int i = 1; i < rank; ++i) {
      s += int64_t(index[i]) * src.dim[i].stride;
      d += int64_t(index[i]) * dst.dim[i].stride;
    }
    std::memcpy(dst.host + d * elem, src.host + s * elem, row * elem);
    int i = 1;
    for (; i < rank; ++i) {
      if (++index[i] < src.dim[i].extent)
        break;
      index[i] = 0;
    }
    if (i >= rank)
      return Status::success();
  }
}

Expected<KvCache> createKvCache(const PlanEntry &entry,
                                const std::vector<Tensor> &past,
                                int64_t capacity) {
  auto fail = [&](const std::string &msg) {
    return Status::error("entry '" + entry.name + "': KV cache: " + msg);
  };
  if (entry.caches.empty())
    return fail("the entry grows no cache in place");
  if (past.size() != entry.caches.size())
    return fail("expected " + std::to_string(entry.caches.size()) +
                " tensors, got " + std::to_string(past.size()));
  KvCache cache;
  cache.capacity = capacity;
  for (size_t c = 0; c < past.size(); ++c) {
    const PlanCache &info = entry.caches[c];
    const std::string &name =
        entry.inputNames[static_cast<size_t>(info.input)];
    const PlanValue &value =
        entry.values[static_cast<size_t>(entry.inputs[static_cast<size_t>(
            info.input)])];
    Tensor given = past[c];
    if (given.isNull() || given.dtype() != DType::F32 ||
        given.rank() != value.shape.size())
      return fail("'" + name + "' must be f32 of rank " +
                  std::to_string(value.shape.size()) + ", got " +
                  (given.isNull() ? "a null tensor" : given.typeString()));
    const size_t axis = static_cast<size_t>(info.axis);
    int64_t length = given.dim(axis);
    if (c > 0 && length != cache.length)
      return fail("'" + name + "' holds " + std::to_string(length) +
                  " positions, the others " + std::to_string(cache.length));
    if (length > capacity)
      return fail("'" + name + "' holds " + std::to_string(length) +
                  " positions, more than the capacity " +
                  std::to_string(capacity));
    cache.length = length;
    Shape shape = given.shape();
    shape[axis] = capacity;
    Expected<Tensor> buffer = Tensor::zeros(DType::F32, shape);
    if (!buffer)
      return fail(buffer.message());
    std::vector<halide_dimension_t> srcDims(given.rank()), dstDims(given.rank());
    halide_buffer_t src, dst;
    TFC_RT_RETURN_IF_ERROR(describeTensor(given, src, srcDims.data()));
    TFC_RT_RETURN_IF_ERROR(describeWindow(*buffer,
                                          std::vector<int64_t>(shape.size(), 0),
                                          given.shape(), dst, dstDims.data()));
    TFC_RT_RETURN_IF_ERROR(copyBuffer(src, dst));
    cache.buffers.push_back(buffer.take());
  }
  return cache;
}

} // namespace tfc::rt
