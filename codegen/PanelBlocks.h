//===- PanelBlocks.h - What extern products on panels share -----*- C++ -*-===//
//
// The extern product stages on weight panels (AmxMatmul.h: bf16 on AMX
// tiles; PanelMatmul.h: fp32 on AVX-512) each compute one block of the
// result per call: a few panels' columns by up to ~128 rows of A, for every
// batch entry of the block. They share:
//  - the walk over the block's batch entries (forEachBatchEntry);
//  - the software prefetch of the panels of the block the calling thread
//    most likely computes next, spread over the call's steps of K: a
//    block's first row tile otherwise waits on its panels from DRAM, and
//    the hardware's prefetchers run only ~20 lines ahead of one stream.
//    At a thread's last block of a parallel loop, the block is its first
//    one of the loop that followed the last time (another product, or the
//    product's next row block), which each thread remembers per loop;
//    Halide 14's own prefetch directive emits prefetchnta, whose lines skip
//    L2 (the later row tiles then read the panel from DRAM again); these
//    are prefetcht1 (into L2);
//  - the prefetch, for writing (prefetchw), of the block's lines of the
//    kernel's result, spread over the call's steps too: the kernel's
//    epilogue then stores into lines it owns instead of waiting on a read
//    for ownership of each (the result, tens of MB for an LM head's logits,
//    is rarely in cache). Halide 14 has no such prefetch either.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_CODEGEN_PANELBLOCKS_H
#define TFC_CODEGEN_PANELBLOCKS_H

#include "HalideRuntime.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace tfc::codegen {

/// The block's lines of the kernel's result, `rows` rows of `lineCount`
/// cache lines from `row`, `rowBytes` apart, fetched for writing: `lines`
/// of them over `steps` calls of step(), evenly.
struct ResultPrefetch {
  char *row = nullptr;
  long rowBytes = 0, rows = 0;
  int lineCount = 0, line = 0;
  long lines = 0, steps = 1, credit = 0;
  void step() {
    for (credit += lines; credit >= steps && rows > 0; credit -= steps) {
      // prefetchw where the caller's target has PRFCHW.
      __builtin_prefetch(row + long(line) * 64, 1, 3);
      if (++line == lineCount) {
        line = 0;
        row += rowBytes;
        --rows;
      }
    }
  }
};

/// The panels of a later block, fetched into L2 `lines` cache lines per
/// step() from `next` up to `end`, and this block's lines of the result
/// (ResultPrefetch).
struct PanelPrefetch {
  const char *next = nullptr, *end = nullptr;
  long lines = 0;
  ResultPrefetch result;
  void step() {
#if defined(__x86_64__)
    for (long i = 0; i < lines && next < end; ++i, next += 64)
      _mm_prefetch(next, _MM_HINT_T1);
#endif
    result.step();
  }
  /// Sets `lines` (and the result's pace) so that `steps` calls of step()
  /// fetch all of both.
  void spread(long steps);
};

/// The prefetch of one extern call computing the block `out` of a product
/// of `a` ([batch..., M, K]; Halide dims K, M, batch...) with `panelCount`
/// panels of `panelBytes` each at `panels`: this call's share (its rows
/// among all of A's) of the panels under the block the thread most likely
/// computes next. As far past this block as this block is past the thread's
/// previous one of the same product (runtime/ThreadPool.h gives each thread
/// a contiguous chunk of the blocks: the next one), else right after it;
/// but where this block was the thread's last of its parallel loop the
/// last time the loop ran, the thread's first block of the loop that
/// followed it then (a thread's loops: a product's, or with `rowsOuter`
/// each of its row blocks'; the calling thread's memory of them). And
/// `out`'s lines in `result` (the kernel's f32 result, whose coordinates the
/// block shares; a handle to its halide_buffer_t), where the block is one batch
/// entry inside it with dense rows; none where `result` is null. With
/// `rowsOuter` (the kernel's row blocks are outermost, so the calls of one
/// column block are not consecutive: MatmulKernel.cpp, rowsOuterBlocks) the
/// call's share is all of the next block's panels. Not yet spread
/// (PanelPrefetch::spread).
PanelPrefetch planPanelPrefetch(const halide_buffer_t *a,
                                const halide_buffer_t *out, const void *panels,
                                long panelBytes, int panelCount,
                                int panelColumns, const void *result,
                                bool rowsOuter);

/// Calls `fn(aOffset, outOffset)` for each batch entry of the block `out`
/// (dims N, M, batch...), in elements from `a`'s host to the entry's first
/// row of the block (A's dims K, M, batch..., as above) and from `out`'s
/// host to the entry's first element.
void forEachBatchEntry(const halide_buffer_t *a, const halide_buffer_t *out,
                       llvm::function_ref<void(long, long)> fn);

/// One batch entry of a block: rows [0, rows) of A (`lda` elements apart),
/// the result's columns [col0, col0 + cols), into `c` (the result's element
/// (row 0, col0); rows `ldc` apart).
template <typename T> struct Block2D {
  const T *a;
  long lda;
  int rows;
  int col0, cols;
  float *c;
  long ldc;
};

/// forEachBatchEntry's entries as Block2D, A's elements of type T.
template <typename T>
void forEachBlock2D(const halide_buffer_t *a, const halide_buffer_t *out,
                    llvm::function_ref<void(const Block2D<T> &)> fn) {
  forEachBatchEntry(a, out, [&](long aOff, long cOff) {
    fn(Block2D<T>{reinterpret_cast<const T *>(a->host) + aOff, a->dim[1].stride,
                  out->dim[1].extent, out->dim[0].min, out->dim[0].extent,
                  reinterpret_cast<float *>(out->host) + cOff,
                  out->dim[1].stride});
  });
}

/// A's rows [r, blk.rows) of `blk`, fewer than `tileRows`, copied into
/// `pad` (tileRows x K, rows K apart) and padded with zero rows.
template <typename T>
const T *padRows(const Block2D<T> &blk, int r, int tileRows, int k,
                 std::vector<T> &pad) {
  pad.assign(size_t(tileRows) * k, T(0));
  for (int i = 0; r + i < blk.rows; ++i)
    std::copy(blk.a + (r + i) * blk.lda, blk.a + (r + i) * blk.lda + k,
              pad.begin() + size_t(i) * k);
  return pad.data();
}

/// Halide's bounds query of a stage's call: for `a` (dims K, M, batch...),
/// all of K for the rows and batch entries of the block `out` (dims N, M,
/// batch...); for `b`, all of it: `bExtents` (Halide's order, mins 0).
void answerBlockQuery(halide_buffer_t *a, halide_buffer_t *b, int32_t k,
                      const halide_buffer_t *out,
                      const std::vector<int32_t> &bExtents);

/// The batch entries of the block `out`: the product of its extents past N
/// and M.
long batchEntries(const halide_buffer_t *out);

/// Why the block `out` cannot be computed from the rows of `a` (the two of
/// one rank, dense rows of K, the block's rows and batch entries within
/// A's), or "".
std::string checkBlockRows(const halide_buffer_t *a, int32_t k,
                           const halide_buffer_t *out);

/// How an extern stage's call begins (beginStageCall).
enum class StageCall { Answered, Refused, Compute };

/// The start of a call of the extern stage `symbol` on `buffers` (its
/// inputs and result): a bounds query is answered by `answerQuery`
/// (Answered); otherwise, where `check` gives a reason (the buffers), or
/// `hostCan` is false (`hostCannot` says why), the reason is reported
/// through the kernel's error (recordKernelRuntimeError) prefixed with
/// `symbol` (Refused); else Compute.
StageCall beginStageCall(const char *symbol,
                         std::initializer_list<const halide_buffer_t *> buffers,
                         llvm::function_ref<void()> answerQuery,
                         llvm::function_ref<std::string()> check, bool hostCan,
                         const char *hostCannot);

/// False where the environment variable `name` is "1" (the TFC_HOST_NO_*
/// switches).
bool notSwitchedOff(const char *name);

/// Whether this process may run an AVX-512F extern stage that the switch
/// `name` turns off: an x86-64 CPU with AVX-512F, and notSwitchedOff(name).
bool avx512fStageAllowed(const char *name);

} // namespace tfc::codegen

#endif // TFC_CODEGEN_PANELBLOCKS_H
