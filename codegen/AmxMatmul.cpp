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
//     thread guesses that block from its last two (the next one: each
//     thread runs a contiguous chunk of the blocks, runtime/ThreadPool.h).
//     And the block's lines
//     of the kernel's result are fetched for writing, for the epilogue's
//     stores (GPT-2 small bf16 at 1 and 2 threads ~3-4 % faster, alternated:
//     its LM head writes 25.7 MB of logits).
//
//===----------------------------------------------------------------------===//

#include "codegen/AmxMatmul.h"

#include "codegen/KernelBuilder.h"
#include "codegen/PanelBlocks.h"
#include "ir/TfcOps.h"

#include <algorithm>
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
  __attribute__((target("amx-tile,amx-bf16,avx512f,avx512bf16,prfchw")))

/// One column tile's B: its panel row 0 (`kPanel` x 2 bf16 per row of
/// pairs), offset to the tile's 16 columns.
const uint16_t *tileB(const uint16_t *panels, long panelSize, int col) {
  return panels + (col / kPanel) * panelSize + (col % kPanel) * 2;
}

/// 32 rows of bf16 A (`lda` values apart) times the column tiles at `b0`
/// and `b1` (one or two of them: `b1` may be null), over K = `k`, into f32
/// `c` (rows `ldc` floats apart; 16 or 32 columns).
TFC_AMX_TARGET void block32(const uint16_t *a, long lda, int k,
                            const uint16_t *b0, const uint16_t *b1, float *c,
                            long ldc, PanelPrefetch &pf) {
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

TFC_AMX_TARGET void product2D(const Block2D<uint16_t> &blk,
                              const uint16_t *panels, int k,
                              PanelPrefetch &pf) {
  alignas(64) float edge[kBlockRows * kBlockCols];
  thread_local std::vector<uint16_t> pad;
  long panelSize = long(k) * kPanel;
  for (int r = 0; r < blk.rows; r += kBlockRows) {
    bool fullRows = r + kBlockRows <= blk.rows;
    const uint16_t *a =
        fullRows ? blk.a + r * blk.lda : padRows(blk, r, kBlockRows, k, pad);
    long lda = fullRows ? blk.lda : k;
    for (int col = 0; col < blk.cols; col += kBlockCols) {
      // One column tile, or two; `valid` of their columns are the result's.
      int valid = std::min(kBlockCols, blk.cols - col);
      bool pair = valid > kTileCols;
      const uint16_t *b0 = tileB(panels, panelSize, blk.col0 + col);
      const uint16_t *b1 =
          pair ? tileB(panels, panelSize, blk.col0 + col + kTileCols) : nullptr;
      float *c = blk.c + r * blk.ldc + col;
      if (fullRows && valid % kTileCols == 0) {
        block32(a, lda, k, b0, b1, c, blk.ldc, pf);
        continue;
      }
      block32(a, lda, k, b0, b1, edge, kBlockCols, pf);
      for (int i = 0; i < kBlockRows && r + i < blk.rows; ++i)
        std::memcpy(c + i * blk.ldc, edge + i * kBlockCols, size_t(valid) * 4);
    }
  }
}

/// The prefetch of one call (PanelBlocks.h), spread over its steps of K:
/// block32's calls (row groups of each batch entry, column pairs) times
/// theirs.
PanelPrefetch planPrefetch(const halide_buffer_t *a, const halide_buffer_t *b,
                           int k, const void *result, bool rowsOuter,
                           const halide_buffer_t *out) {
  PanelPrefetch pf =
      planPanelPrefetch(a, out, b->host, long(k) * kPanel * 2, b->dim[3].extent,
                        kPanel, result, rowsOuter);
  int rows = out->dim[1].extent, width = out->dim[0].extent;
  long entries = batchEntries(out);
  pf.spread(entries * ((rows + kBlockRows - 1) / kBlockRows) *
            ((width + kBlockCols - 1) / kBlockCols) * (k / kTileK));
  return pf;
}

#endif

/// Why the buffers cannot be read as the header says, or "".
std::string checkBuffers(const halide_buffer_t *a, const halide_buffer_t *b,
                         int32_t k, int32_t n, const halide_buffer_t *out) {
  if (k <= 0 || k % kTileK != 0 || n <= 0)
    return "K must be a positive multiple of 32 and N positive";
  if (a->type.code != halide_type_bfloat || a->type.bits != 16 ||
      out->type.code != halide_type_float || out->type.bits != 32 ||
      b->type.bits != 16 || b->dimensions != 4)
    return "expects bf16 activations and panels, an f32 result";
  if (std::string rows = checkBlockRows(a, k, out); !rows.empty())
    return rows;
  if (out->dim[0].min < 0 || out->dim[0].min % 16 != 0 ||
      out->dim[0].min + out->dim[0].extent > b->dim[3].extent * kPanel)
    return "the block's columns are not within the panels";
  return "";
}
} // namespace

bool tfc::codegen::hostHasAmx() {
#if defined(__x86_64__)
  static const bool has = [] {
    return notSwitchedOff("TFC_HOST_NO_AMX") && cpuHasAmx() &&
           syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
  }();
  return has;
#else
  return false;
#endif
}

extern "C" int tfc_amx_matmul_bf16(halide_buffer_t *a, halide_buffer_t *b,
                                   int32_t k, int32_t n, const void *result,
                                   int32_t rows_outer, halide_buffer_t *out) {
  StageCall call = beginStageCall(
      kAmxMatmulSymbol, {a, b, out},
      [&] {
        answerBlockQuery(a, b, k, out,
                         {2, kPanel, k / 2, (n + kPanel - 1) / kPanel});
      },
      [&] { return checkBuffers(a, b, k, n, out); }, hostHasAmx(),
      "this process cannot use AMX tiles");
  if (call != StageCall::Compute)
    return call == StageCall::Answered ? 0 : -1;
#if defined(__x86_64__)
  PanelPrefetch pf = planPrefetch(a, b, k, result, rows_outer != 0, out);
  loadTileConfig();
  forEachBlock2D<uint16_t>(a, out, [&](const Block2D<uint16_t> &blk) {
    product2D(blk, reinterpret_cast<const uint16_t *>(b->host), k, pf);
  });
  releaseTiles();
  return 0;
#else
  return -1;
#endif
}
