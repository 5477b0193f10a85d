//===- KvCache.h - Key/value caches grown in place --------------*- C++ -*-===//
//
// A decoder entry whose outputs alias its inputs (PlanEntry::caches: the IR
// returned tfc.kv_stack of an argument, see passes/KvCache.cpp) grows its
// key/value caches in place. A KvCache holds them: one buffer per cache,
// allocated once with room for `capacity` positions on the cache's axis
// ([layers, batch, heads, capacity, head_dim] for GPT-2), of which the first
// `length` are filled. Executor::run(entry, inputs, cache) reads `past_X` as
// the prefix [0, length) of its buffer (a strided view, not a copy), writes
// each layer's new keys/values after it, lets attention read [0, length +
// new) of the same buffer, and advances `length`.
//
// Callers that pass plain `past_X` tensors (Executor::run without a cache)
// still work: the executor copies them once into a cache of exactly the
// grown length, which is then the contiguous `present_X` it returns.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_RUNTIME_KVCACHE_H
#define TFC_RUNTIME_KVCACHE_H

#include "runtime/Plan.h"
#include "runtime/Status.h"
#include "runtime/Tensor.h"

#include "HalideRuntime.h"

#include <vector>

namespace tfc::rt {

struct KvCache {
  /// One per PlanEntry::caches entry, contiguous, shaped like the entry
  /// input with `capacity` positions on the cache's axis.
  std::vector<Tensor> buffers;
  /// Filled positions.
  int64_t length = 0;
  /// Room for positions on every buffer's axis.
  int64_t capacity = 0;
};

/// A cache for `entry` with room for `capacity` positions, holding copies of
/// `past[c]` for each PlanEntry::caches[c] (f32, shaped like the entry's
/// input, all with the same number of positions, at most `capacity`).
/// Fails for an entry without caches, a wrong count, shape or dtype, or a
/// capacity that is too small.
Expected<KvCache> createKvCache(const PlanEntry &entry,
                                const std::vector<Tensor> &past,
                                int64_t capacity);

/// Describes the window of contiguous `base` that starts at `offsets` (one
/// per axis of `base`) and has `shape`: the last shape.size() axes of
/// `base`, with base's strides (leading axes are fixed by their offsets).
/// `dims` must hold shape.size() entries. Host memory only.
Status describeWindow(Tensor &base, const std::vector<int64_t> &offsets,
                      const Shape &shape, halide_buffer_t &buffer,
                      halide_dimension_t *dims);

/// Copies host buffer `src` into host buffer `dst` of the same type and
/// extents; both may be strided (innermost stride 1).
Status copyBuffer(const halide_buffer_t &src, halide_buffer_t &dst);

} // namespace tfc::rt

#endif // TFC_RUNTIME_KVCACHE_H
