//===- PanelBlocks.cpp - What extern products on panels share -------------===//
//
// See PanelBlocks.h.
//
//===----------------------------------------------------------------------===//

#include "codegen/PanelBlocks.h"

#include "codegen/KernelBuilder.h"

#include "llvm/ADT/SmallVector.h"

#include <algorithm>
#include <cstdlib>
#include <unordered_map>
#include <vector>

using namespace tfc::codegen;

namespace {
/// The first column of the block this thread most likely computes next (see
/// planPanelPrefetch). Calls for the other rows of a block do not move it.
int nextColumn(const void *panels, int col0, int width) {
  thread_local const void *lastPanels = nullptr;
  thread_local int lastCol = 0, stride = 0;
  if (panels != lastPanels) {
    lastPanels = panels;
    stride = width;
  } else if (col0 != lastCol) {
    stride = col0 > lastCol ? col0 - lastCol : width;
  }
  lastCol = col0;
  return col0 + stride;
}
} // namespace

void PanelPrefetch::spread(long steps) {
  lines = steps > 0 ? (end - next) / 64 / steps + 1 : 0;
  result.steps = std::max(steps, 1L);
}

namespace {
/// Whether the block `out` lies inside `buf` along dims `from` and up.
bool holds(const halide_buffer_t *buf, const halide_buffer_t *out, int from) {
  for (int d = from; d < out->dimensions; ++d)
    if (out->dim[d].min < buf->dim[d].min ||
        out->dim[d].min + out->dim[d].extent >
            buf->dim[d].min + buf->dim[d].extent)
      return false;
  return true;
}

/// The result's part of planPanelPrefetch (see there).
ResultPrefetch planResultPrefetch(const halide_buffer_t *out,
                                  const void *handle) {
  ResultPrefetch r;
  const auto *result = static_cast<const halide_buffer_t *>(handle);
  if (!result || !result->host || result->dimensions != out->dimensions ||
      result->type.code != halide_type_float || result->type.bits != 32 ||
      result->dim[0].stride != 1 || out->dim[0].extent <= 0 ||
      out->dim[1].extent <= 0 || batchEntries(out) != 1 ||
      !holds(result, out, 0))
    return r;
  long offset = 0; // elements from the host to the block's first
  for (int d = 0; d < out->dimensions; ++d)
    offset +=
        long(out->dim[d].min - result->dim[d].min) * result->dim[d].stride;
  auto start = reinterpret_cast<uintptr_t>(
      reinterpret_cast<const float *>(result->host) + offset);
  uintptr_t last = start + uintptr_t(out->dim[0].extent) * 4 - 1;
  r.row = reinterpret_cast<char *>(start / 64 * 64);
  r.rowBytes = long(result->dim[1].stride) * 4;
  r.rows = out->dim[1].extent;
  r.lineCount = static_cast<int>(last / 64 - start / 64 + 1);
  r.lines = r.rows * r.lineCount;
  return r;
}
} // namespace

namespace {
/// A span of panel bytes to prefetch.
struct PanelSpan {
  const char *first = nullptr;
  long bytes = 0;
};

/// A parallel loop of one product, as one thread sees it: the product's
/// panels and, where the row blocks are outermost (each row block is a loop
/// of its own), the loop's first row of A.
struct LoopKey {
  const void *panels = nullptr;
  long rowStart = 0;
  bool operator==(const LoopKey &other) const {
    return panels == other.panels && rowStart == other.rowStart;
  }
};
struct LoopKeyHash {
  size_t operator()(const LoopKey &key) const {
    return std::hash<const void *>()(key.panels) ^
           std::hash<long>()(key.rowStart) * 31;
  }
};

/// What a thread saw follow one of its loops the last time: the first column
/// of its last block in the loop, and the panels of its first block in the
/// loop after it.
struct FollowingLoop {
  int lastCol0 = -1;
  PanelSpan first;
};

/// Most loops a thread remembers (a model's products times their row
/// blocks); beyond, it forgets them all and learns again.
constexpr size_t kRememberedLoops = 4096;

/// The loops of extern products this thread ran, in order: which loop
/// followed which. Between two products a model runs other kernels, so a
/// thread's first block of a product would wait on its panels from DRAM;
/// from the second run of a model on (a benchmark, the steps of a
/// generation, a server's requests), its last block of the product before
/// prefetches them instead.
class LoopMemory {
public:
  /// Records a call of loop `key` on the block at column `col0` with the
  /// panels `own`; returns the panels of the block that followed this one
  /// the last time, where this was the thread's last block of its loop,
  /// else null.
  const PanelSpan *observe(const LoopKey &key, int col0, PanelSpan own) {
    if (!(key == current)) {
      if (current.panels) {
        if (following.size() >= kRememberedLoops)
          following.clear();
        following[current] = FollowingLoop{currentCol0, own};
      }
      current = key;
      auto it = following.find(key);
      // Elements of an unordered_map keep their address until erased.
      known = it != following.end() ? &it->second : nullptr;
    }
    currentCol0 = col0;
    return known && known->lastCol0 == col0 ? &known->first : nullptr;
  }

private:
  LoopKey current;
  int currentCol0 = -1;
  const FollowingLoop *known = nullptr; // the current loop's, if seen before
  std::unordered_map<LoopKey, FollowingLoop, LoopKeyHash> following;
};

/// A product's panels: `count` of `bytes` each from `base`, `columns` wide.
struct Panels {
  const char *base;
  long bytes;
  int count, columns;
  /// The panels under `width` columns from panel `first`; none past the
  /// last panel.
  PanelSpan from(int first, int width) const {
    int n = std::min((width + columns - 1) / columns, count - first);
    if (n <= 0)
      return {};
    return {base + first * bytes, n * bytes};
  }
};

/// A call's rows of A in linear order over (rows, batch...): [start, start
/// + rows) of `total`.
struct CallRows {
  long start = 0, rows = 1, total = 1;
  CallRows(const halide_buffer_t *a, const halide_buffer_t *out) {
    for (int d = 1; d < a->dimensions; ++d) {
      start += (out->dim[d].min - a->dim[d].min) * total;
      total *= a->dim[d].extent;
      rows *= out->dim[d].extent;
    }
  }
};
} // namespace

PanelPrefetch tfc::codegen::planPanelPrefetch(
    const halide_buffer_t *a, const halide_buffer_t *out, const void *panels,
    long panelBytes, int panelCount, int panelColumns, const void *result,
    bool rowsOuter) {
  thread_local LoopMemory memory;
  int col0 = out->dim[0].min, width = out->dim[0].extent;
  CallRows call(a, out);
  // Where the rows are outermost, each row block is a loop of its own, and
  // its calls take all of the next block's panels.
  LoopKey key{panels, rowsOuter ? call.start : 0};
  if (rowsOuter) {
    call.start = 0;
    call.rows = call.total;
  }
  Panels all{static_cast<const char *>(panels), panelBytes, panelCount,
             panelColumns};
  PanelSpan own = all.from(col0 / panelColumns, width);
  // The guess within the product keeps its own state: it is taken always.
  int guess = nextColumn(panels, col0, width);
  PanelSpan next = all.from((guess + panelColumns - 1) / panelColumns, width);
  if (const PanelSpan *following = memory.observe(key, col0, own))
    next = *following;
  PanelPrefetch pf;
  pf.result = planResultPrefetch(out, result);
  if (next.bytes <= 0 || call.rows <= 0 || call.total <= 0)
    return pf;
  // This call's rows among all rows of A (the calls of the block's other
  // rows take the rest).
  pf.next = next.first + next.bytes * call.start / call.total / 64 * 64;
  pf.end = next.first + next.bytes * (call.start + call.rows) / call.total;
  return pf;
}

void tfc::codegen::forEachBatchEntry(const halide_buffer_t *a,
                                     const halide_buffer_t *out,
                                     llvm::function_ref<void(long, long)> fn) {
  // The batch coordinates of the block, outermost last (odometer order).
  int dims = out->dimensions;
  llvm::SmallVector<int, 8> at(dims, 0);
  for (;;) {
    long aOff = (out->dim[1].min - a->dim[1].min) * long(a->dim[1].stride);
    long cOff = 0;
    for (int d = 2; d < dims; ++d) {
      aOff +=
          (out->dim[d].min + at[d] - a->dim[d].min) * long(a->dim[d].stride);
      cOff += at[d] * long(out->dim[d].stride);
    }
    fn(aOff, cOff);
    int d = 2;
    for (; d < dims; ++d) {
      if (++at[d] < out->dim[d].extent)
        break;
      at[d] = 0;
    }
    if (d >= dims)
      return;
  }
}

void tfc::codegen::answerBlockQuery(halide_buffer_t *a, halide_buffer_t *b,
                                    int32_t k, const halide_buffer_t *out,
                                    const std::vector<int32_t> &bExtents) {
  if (a->is_bounds_query()) {
    a->dim[0].min = 0;
    a->dim[0].extent = k;
    for (int d = 1; d < a->dimensions && d < out->dimensions; ++d) {
      a->dim[d].min = out->dim[d].min;
      a->dim[d].extent = out->dim[d].extent;
    }
  }
  if (b->is_bounds_query() && b->dimensions == int(bExtents.size()))
    for (int d = 0; d < b->dimensions; ++d) {
      b->dim[d].min = 0;
      b->dim[d].extent = bExtents[d];
    }
}

long tfc::codegen::batchEntries(const halide_buffer_t *out) {
  long entries = 1;
  for (int d = 2; d < out->dimensions; ++d)
    entries *= out->dim[d].extent;
  return entries;
}

std::string tfc::codegen::checkBlockRows(const halide_buffer_t *a, int32_t k,
                                         const halide_buffer_t *out) {
  if (a->dimensions != out->dimensions || a->dimensions < 2)
    return "the activations and the result differ in rank";
  if (a->dim[0].stride != 1 || out->dim[0].stride != 1 || a->dim[0].extent != k)
    return "the rows of the activations or of the result are not dense";
  if (!holds(a, out, 1))
    return "the block reads rows outside the activations";
  return "";
}

bool tfc::codegen::avx512fStageAllowed(const char *name) {
#if defined(__x86_64__)
  __builtin_cpu_init();
  return notSwitchedOff(name) && __builtin_cpu_supports("avx512f") != 0;
#else
  return false;
#endif
}

bool tfc::codegen::notSwitchedOff(const char *name) {
  const char *value = std::getenv(name);
  return !value || std::string(value) != "1";
}

StageCall tfc::codegen::beginStageCall(
    const char *symbol, std::initializer_list<const halide_buffer_t *> buffers,
    llvm::function_ref<void()> answerQuery,
    llvm::function_ref<std::string()> check, bool hostCan,
    const char *hostCannot) {
  for (const halide_buffer_t *buf : buffers)
    if (buf->is_bounds_query()) {
      answerQuery();
      return StageCall::Answered;
    }
  std::string problem = check();
  if (problem.empty() && !hostCan)
    problem = hostCannot;
  if (problem.empty())
    return StageCall::Compute;
  recordKernelRuntimeError((std::string(symbol) + ": " + problem).c_str());
  return StageCall::Refused;
}
