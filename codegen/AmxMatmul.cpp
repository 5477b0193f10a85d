//===- AmxMatmul.cpp - bf16 products on AMX tiles -------------------------===//
//
// The extern stage of AmxMatmul.h. One call computes a block of the result
// (the columns of a few panels by up to ~128 rows, as the kernel's schedule
// asks) from A already rounded to bf16 (the kernel rounds it once per call,
// not once per block):
//  1. the block's rows are taken 32 at a time (two row tiles); a last,
//     shorter group is copied into a thread-local buffer padded with zero
//     rows;
//  2. the block's columns are cut into tiles of 16 (a panel holds 3), taken
//     two at a time: per pair, four accumulator tiles (2 row tiles x 2
//     column tiles) run over all of K, 32 at a time, with two A and two B
//     tiles loaded per step (one tile load per product; the 2 x 3 layout
//     on one panel needed 7 loads per 6 products and read each B tile 5/3
//     times). A pair may span two panels. A panel's rows of 48 x 2 bf16 are
//     192 bytes apart, so each 16-column third is a B tile as laid out;
//  3. the accumulators are stored into the result, or through a small
//     buffer where the block is cut by the result's edge;
//  4. meanwhile, a few cache lines per step of K, the panels of the block
//     this thread most likely computes next are prefetched into L2 (a
//     block's first 32 rows otherwise wait on its panels from DRAM). The
//     thread guesses that block from its last two (1 thread: the next
//     one; 2 threads taking turns: every other one).
//
//===----------------------------------------------------------------------===//

#include "codegen/AmxMatmul.h"

#include "codegen/KernelBuilder.h"
#include "ir/TfcOps.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

using namespace tfc::codegen;

namespace {
constexpr int kPanel = static_cast<int>(mlir::tfc::kPanelColumns);
constexpr int kTileRows = 16;  // rows of a tile
constexpr int kTileCols = 16;  // f32 columns of an accumulator (and B) tile
constexpr int kTileK = 32;     // bf16 values of K per tile row
constexpr int kBlockRows = 32; // two row tiles
constexpr int kBlockCols = 32; // two column tiles

bool reportError(const std::string &msg) {
  recordKernelRuntimeError(msg.c_str());
  return false;
}

#if defined(__x86_64__)
constexpr long kArchReqXcompPerm = 0x1023;
constexpr long kXfeatureXtiledata = 18;

bool cpuHasAmx() {
  unsigned eax, ebx, ecx, edx;
  if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx))
    return false;
  bool bf16 = edx & (1u << 22), tile = edx & (1u << 24);
  return bf16 && tile;
}

/// The tile configuration: palette 1, tiles 0-7 of 16 rows x 64 bytes.
struct alignas(64) TileConfig {
  uint8_t palette = 1;
  uint8_t startRow = 0;
  uint8_t reserved[14] = {};
  uint16_t bytesPerRow[16] = {};
  uint8_t rows[16] = {};
  TileConfig() {
    for (int t = 0; t < 8; ++t) {
      bytesPerRow[t] = 64;
      rows[t] = kTileRows;
    }
  }
};

#define TFC_AMX_TARGET                                                         \
  __attribute__((target("amx-tile,amx-bf16,avx512f,avx512bf16")))

/// One column tile's B: its panel row 0 (`kPanel` x 2 bf16 per row of
/// pairs), offset to the tile's 16 columns.
const uint16_t *tileB(const uint16_t *panels, long panelSize, int col) {
  return panels + (col / kPanel) * panelSize + (col % kPanel) * 2;
}

/// The panels a later block will read, fetched into L2 a few cache lines
/// per step of K while this block computes: `lines` lines per step from
/// `next` up to `end`.
struct Prefetch {
  const char *next = nullptr, *end = nullptr;
  int lines = 0;
  void step() {
    for (int i = 0; i < lines && next < end; ++i, next += 64)
      _mm_prefetch(next, _MM_HINT_T1);
  }
};

/// 32 rows of bf16 A (`lda` values apart) times the column tiles at `b0`
/// and `b1` (one or two of them: `b1` may be null), over K = `k`, into f32
/// `c` (rows `ldc` floats apart; 16 or 32 columns).
TFC_AMX_TARGET void block32(const uint16_t *a, long lda, int k,
                            const uint16_t *b0, const uint16_t *b1, float *c,
                            long ldc, Prefetch &pf) {
  long aStride = lda * 2, bStride = kPanel * 2 * 2;
  const uint16_t *a1 = a + kTileRows * lda;
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  for (int kk = 0; kk < k; kk += kTileK) {
    pf.step();
    long bOff = long(kk / 2) * kPanel * 2;
    _tile_loadd(4, a + kk, aStride);
    _tile_loadd(6, b0 + bOff, bStride);
    _tile_dpbf16ps(0, 4, 6);
    _tile_loadd(5, a1 + kk, aStride);
    _tile_dpbf16ps(2, 5, 6);
    if (b1) {
      _tile_loadd(7, b1 + bOff, bStride);
      _tile_dpbf16ps(1, 4, 7);
      _tile_dpbf16ps(3, 5, 7);
    }
  }
  long s = ldc * 4;
  float *c1 = c + kTileRows * ldc;
  _tile_stored(0, c, s);
  _tile_stored(2, c1, s);
  if (b1) {
    _tile_stored(1, c + kTileCols, s);
    _tile_stored(3, c1 + kTileCols, s);
  }
}

TFC_AMX_TARGET void loadTileConfig() {
  static const TileConfig config;
  _tile_loadconfig(&config);
}

TFC_AMX_TARGET void releaseTiles() { _tile_release(); }
#endif

/// One 2-D product: rows [0, rows) of bf16 A (`lda` values apart), the
/// result's columns [col0, col0 + cols) (col0 a multiple of 16), into `c`
/// (the result's element (row 0, col0); rows `ldc` apart).
struct Block2D {
  const uint16_t *a;
  long lda;
  int rows;
  int col0, cols;
  float *c;
  long ldc;
};

#if defined(__x86_64__)
/// A's rows [r, blk.rows) of `blk`, fewer than 32, copied into `pad` (32 x
/// K, rows K apart) and padded with zero rows.
const uint16_t *padRows(const Block2D &blk, int r, int k,
                        std::vector<uint16_t> &pad) {
  pad.assign(size_t(kBlockRows) * k, 0);
  for (int i = 0; r + i < blk.rows; ++i)
    std::memcpy(pad.data() + size_t(i) * k, blk.a + (r + i) * blk.lda,
                size_t(k) * 2);
  return pad.data();
}

TFC_AMX_TARGET void product2D(const Block2D &blk, const uint16_t *panels,
                              int k, Prefetch &pf) {
  alignas(64) float edge[kBlockRows * kBlockCols];
  thread_local std::vector<uint16_t> pad;
  long panelSize = long(k) * kPanel;
  for (int r = 0; r < blk.rows; r += kBlockRows) {
    bool fullRows = r + kBlockRows <= blk.rows;
    const uint16_t *a =
        fullRows ? blk.a + r * blk.lda : padRows(blk, r, k, pad);
    long lda = fullRows ? blk.lda : k;
    for (int col = 0; col < blk.cols; col += kBlockCols) {
      // One column tile, or two; `valid` of their columns are the result's.
      int valid = std::min(kBlockCols, blk.cols - col);
      bool pair = valid > kTileCols;
      const uint16_t *b0 = tileB(panels, panelSize, blk.col0 + col);
      const uint16_t *b1 =
          pair ? tileB(panels, panelSize, blk.col0 + col + kTileCols)
               : nullptr;
      float *c = blk.c + r * blk.ldc + col;
      if (fullRows && valid % kTileCols == 0) {
        block32(a, lda, k, b0, b1, c, blk.ldc, pf);
        continue;
      }
      block32(a, lda, k, b0, b1, edge, kBlockCols, pf);
      for (int i = 0; i < kBlockRows && r + i < blk.rows; ++i)
        std::memcpy(c + i * blk.ldc, edge + i * kBlockCols,
                    size_t(valid) * 4);
    }
  }
}

/// The first column of the block this thread most likely computes next:
/// as far past this block as this block is past the thread's previous one
/// of the same product (2 threads that take turns: every other block), else
/// right after it. (Calls for the other rows of the block do not move it.)
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

/// The prefetch of one call: its share of the panels of the thread's next
/// block (nextColumn), in proportion to the rows it computes, spread over
/// its steps of K.
Prefetch planPrefetch(const halide_buffer_t *a, const halide_buffer_t *b,
                      int k, const halide_buffer_t *out) {
  int col0 = out->dim[0].min, width = out->dim[0].extent;
  int panels = (width + kPanel - 1) / kPanel;
  int first = (nextColumn(b->host, col0, width) + kPanel - 1) / kPanel;
  panels = std::min(panels, b->dim[3].extent - first);
  // This call's rows among all rows of A (the task's other calls take the
  // rest), in linear order over (rows, batch...).
  long total = 1, start = 0, count = 1;
  for (int d = 1; d < a->dimensions; ++d) {
    start += (out->dim[d].min - a->dim[d].min) * total;
    total *= a->dim[d].extent;
    count *= out->dim[d].extent;
  }
  Prefetch pf;
  if (panels <= 0 || count <= 0)
    return pf;
  long panelBytes = long(k) * kPanel * 2;
  long bytes = panels * panelBytes;
  const char *base =
      reinterpret_cast<const char *>(b->host) + first * panelBytes;
  pf.next = base + bytes * start / total / 64 * 64;
  pf.end = base + bytes * (start + count) / total;
  // block32's calls in this call (row groups of each batch entry, column
  // pairs) times their steps of K.
  int rows = out->dim[1].extent;
  long steps = count / rows * ((rows + kBlockRows - 1) / kBlockRows) *
               ((width + kBlockCols - 1) / kBlockCols) * (k / kTileK);
  pf.lines = static_cast<int>((pf.end - pf.next) / 64 / steps + 1);
  return pf;
}

#endif

/// Halide's bounds query: the rows of A the block needs (all of K), and
/// all of the panels.
void answerBoundsQuery(halide_buffer_t *a, halide_buffer_t *b, int32_t k,
                       int32_t n, const halide_buffer_t *out) {
  if (a->is_bounds_query()) {
    a->dim[0].min = 0;
    a->dim[0].extent = k;
    for (int d = 1; d < a->dimensions && d < out->dimensions; ++d) {
      a->dim[d].min = out->dim[d].min;
      a->dim[d].extent = out->dim[d].extent;
    }
  }
  if (b->is_bounds_query() && b->dimensions == 4) {
    int32_t extents[4] = {2, kPanel, k / 2, (n + kPanel - 1) / kPanel};
    for (int d = 0; d < 4; ++d) {
      b->dim[d].min = 0;
      b->dim[d].extent = extents[d];
    }
  }
}

/// Why the buffers cannot be read as the header says, or "".
std::string checkBuffers(const halide_buffer_t *a, const halide_buffer_t *b,
                         int32_t k, int32_t n, const halide_buffer_t *out) {
  if (k <= 0 || k % kTileK != 0 || n <= 0)
    return "K must be a positive multiple of 32 and N positive";
  if (a->type.code != halide_type_bfloat || a->type.bits != 16 ||
      out->type.code != halide_type_float || out->type.bits != 32 ||
      b->type.bits != 16 || b->dimensions != 4)
    return "expects bf16 activations and panels, an f32 result";
  if (a->dimensions != out->dimensions || a->dimensions < 2)
    return "the activations and the result differ in rank";
  if (a->dim[0].stride != 1 || out->dim[0].stride != 1 ||
      a->dim[0].extent != k)
    return "the rows of the activations or of the result are not dense";
  for (int d = 1; d < a->dimensions; ++d)
    if (out->dim[d].min < a->dim[d].min ||
        out->dim[d].min + out->dim[d].extent >
            a->dim[d].min + a->dim[d].extent)
      return "the block reads rows outside the activations";
  if (out->dim[0].min < 0 || out->dim[0].min % 16 != 0 ||
      out->dim[0].min + out->dim[0].extent >
          b->dim[3].extent * kPanel)
    return "the block's columns are not within the panels";
  return "";
}
} // namespace

bool tfc::codegen::hostHasAmx() {
#if defined(__x86_64__)
  static const bool has = [] {
    const char *off = std::getenv("TFC_HOST_NO_AMX");
    if (off && std::string(off) == "1")
      return false;
    return cpuHasAmx() &&
           syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
  }();
  return has;
#else
  return false;
#endif
}

extern "C" int tfc_amx_matmul_bf16(halide_buffer_t *a, halide_buffer_t *b,
                                   int32_t k, int32_t n,
                                   halide_buffer_t *out) {
  if (a->is_bounds_query() || b->is_bounds_query() ||
      out->is_bounds_query()) {
    answerBoundsQuery(a, b, k, n, out);
    return 0;
  }
  std::string problem = checkBuffers(a, b, k, n, out);
  if (problem.empty() && !hostHasAmx())
    problem = "this process cannot use AMX tiles";
  if (!problem.empty()) {
    reportError(std::string(kAmxMatmulSymbol) + ": " + problem);
    return -1;
  }
#if defined(__x86_64__)
  // The batch coordinates of the block, outermost last (odometer order).
  int dims = out->dimensions;
  std::vector<int> at(dims, 0);
  Prefetch pf = planPrefetch(a, b, k, out);
  loadTileConfig();
  for (;;) {
    long aOff = (out->dim[1].min - a->dim[1].min) * long(a->dim[1].stride);
    long cOff = 0;
    for (int d = 2; d < dims; ++d) {
      aOff += (out->dim[d].min + at[d] - a->dim[d].min) *
              long(a->dim[d].stride);
      cOff += at[d] * long(out->dim[d].stride);
    }
    Block2D blk{reinterpret_cast<const uint16_t *>(a->host) + aOff,
                a->dim[1].stride,
                out->dim[1].extent,
                out->dim[0].min,
                out->dim[0].extent,
                reinterpret_cast<float *>(out->host) + cOff,
                out->dim[1].stride};
    product2D(blk, reinterpret_cast<const uint16_t *>(b->host), k, pf);
    int d = 2;
    for (; d < dims; ++d) {
      if (++at[d] < out->dim[d].extent)
        break;
      at[d] = 0;
    }
    if (d >= dims)
      break;
  }
  releaseTiles();
  return 0;
#else
  return -1;
#endif
}
