//===- AmxMatmul.cpp - bf16 products on AMX tiles -------------------------===//
//
// The extern stage of AmxMatmul.h. One call computes a block of the result
// (the columns of a few panels by up to ~128 rows, as the kernel's schedule
// asks):
//  1. the block's rows of A are rounded to bf16 into a thread-local buffer,
//     rows padded with zeros to a multiple of 32;
//  2. for each panel (48 columns), for each 32 rows: six accumulator tiles
//     (2 row tiles x 3 column tiles) over all of K, 32 at a time; the two
//     remaining tile registers take the A and B tiles in turn (7 loads per
//     6 products). A panel's rows of 48 x 2 bf16 are 192 bytes apart, so
//     its 16-column thirds are B tiles as laid out, with no repacking;
//  3. the accumulators are stored into the result, or through a small
//     buffer where the block is cut by the result's edge.
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
constexpr int kTileK = 32;     // bf16 values of K per tile row
constexpr int kBlockRows = 32; // two row tiles

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

/// Rounds `rows` rows of f32 (`lda` apart, K = `k`) to bf16 rows of `k`
/// values at `dst`, then zero rows up to `padded`.
TFC_AMX_TARGET void roundRows(const float *a, long lda, int rows, int padded,
                              int k, uint16_t *dst) {
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < k; c += 32) {
      __m512 lo = _mm512_loadu_ps(a + r * lda + c);
      __m512 hi = _mm512_loadu_ps(a + r * lda + c + 16);
      _mm512_storeu_si512(dst + long(r) * k + c,
                          (__m512i)_mm512_cvtne2ps_pbh(hi, lo));
    }
  std::memset(dst + long(rows) * k, 0, size_t(padded - rows) * k * 2);
}

/// 32 rows of bf16 A (`k` apart) times one panel, into f32 `c` (rows `ldc`
/// floats apart, 48 columns).
TFC_AMX_TARGET void block32x48(const uint16_t *a, int k, const uint16_t *panel,
                               float *c, long ldc) {
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  _tile_zero(4);
  _tile_zero(5);
  long aStride = long(k) * 2, bStride = kPanel * 2 * 2;
  for (int kk = 0; kk < k; kk += kTileK) {
    const uint16_t *a0 = a + kk, *a1 = a + long(kTileRows) * k + kk;
    const uint16_t *b = panel + long(kk / 2) * kPanel * 2;
    _tile_loadd(6, a0, aStride);
    _tile_loadd(7, b, bStride);
    _tile_dpbf16ps(0, 6, 7);
    _tile_loadd(7, b + 32, bStride);
    _tile_dpbf16ps(1, 6, 7);
    _tile_loadd(7, b + 64, bStride);
    _tile_dpbf16ps(2, 6, 7);
    _tile_loadd(6, a1, aStride);
    _tile_dpbf16ps(5, 6, 7);
    _tile_loadd(7, b + 32, bStride);
    _tile_dpbf16ps(4, 6, 7);
    _tile_loadd(7, b, bStride);
    _tile_dpbf16ps(3, 6, 7);
  }
  long s = ldc * 4;
  float *c1 = c + kTileRows * ldc;
  _tile_stored(0, c, s);
  _tile_stored(1, c + 16, s);
  _tile_stored(2, c + 32, s);
  _tile_stored(3, c1, s);
  _tile_stored(4, c1 + 16, s);
  _tile_stored(5, c1 + 32, s);
}

TFC_AMX_TARGET void loadTileConfig() {
  static const TileConfig config;
  _tile_loadconfig(&config);
}

TFC_AMX_TARGET void releaseTiles() { _tile_release(); }
#endif

/// One 2-D product: rows [row0, row0 + rows) of A (bf16 in `abf`, padded),
/// the result's columns [col0, col0 + cols), into `c` (the result's
/// element (row0, col0); rows `ldc` apart).
struct Block2D {
  const uint16_t *abf;
  int rows, paddedRows;
  int col0, cols;
  float *c;
  long ldc;
};

#if defined(__x86_64__)
TFC_AMX_TARGET void product2D(const Block2D &blk, const uint16_t *panels, int k) {
  alignas(64) float edge[kBlockRows * kPanel];
  long panelSize = long(k) * kPanel;
  int firstPanel = blk.col0 / kPanel;
  int endPanel = (blk.col0 + blk.cols + kPanel - 1) / kPanel;
  for (int p = firstPanel; p < endPanel; ++p) {
    int pc0 = p * kPanel - blk.col0; // the panel's first column in the block
    bool fullCols = pc0 >= 0 && pc0 + kPanel <= blk.cols;
    for (int r = 0; r < blk.paddedRows; r += kBlockRows) {
      const uint16_t *a = blk.abf + long(r) * k;
      const uint16_t *panel = panels + p * panelSize;
      if (fullCols && r + kBlockRows <= blk.rows) {
        block32x48(a, k, panel, blk.c + r * blk.ldc + pc0, blk.ldc);
        continue;
      }
      block32x48(a, k, panel, edge, kPanel);
      int rowEnd = std::min(kBlockRows, blk.rows - r);
      int from = std::max(0, -pc0), to = std::min(kPanel, blk.cols - pc0);
      for (int i = 0; i < rowEnd; ++i)
        std::memcpy(blk.c + (r + i) * blk.ldc + pc0 + from,
                    edge + i * kPanel + from, size_t(to - from) * 4);
    }
  }
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
  if (a->type.code != halide_type_float || a->type.bits != 32 ||
      out->type.code != halide_type_float || out->type.bits != 32 ||
      b->type.bits != 16 || b->dimensions != 4)
    return "expects f32 activations and result, bf16 panels";
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
  int rows = out->dim[1].extent;
  int padded = (rows + kBlockRows - 1) / kBlockRows * kBlockRows;
  thread_local std::vector<uint16_t> abf;
  if (abf.size() < size_t(padded) * k)
    abf.resize(size_t(padded) * k);
  // The batch coordinates of the block, outermost last (odometer order).
  int dims = out->dimensions;
  std::vector<int> at(dims, 0);
  loadTileConfig();
  for (;;) {
    long aOff = (out->dim[1].min - a->dim[1].min) * long(a->dim[1].stride);
    long cOff = 0;
    for (int d = 2; d < dims; ++d) {
      aOff += (out->dim[d].min + at[d] - a->dim[d].min) *
              long(a->dim[d].stride);
      cOff += at[d] * long(out->dim[d].stride);
    }
    roundRows(reinterpret_cast<const float *>(a->host) + aOff,
              a->dim[1].stride, rows, padded, k, abf.data());
    Block2D blk{abf.data(), rows, padded, out->dim[0].min, out->dim[0].extent,
                reinterpret_cast<float *>(out->host) + cOff,
                out->dim[1].stride};
    product2D(blk, reinterpret_cast<const uint16_t *>(b->host), k);
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
