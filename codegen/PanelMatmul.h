//===- PanelMatmul.h - Products on panels, prefetched -----------*- C++ -*-===//
//
// On x86-64 CPUs with AVX-512F, an fp32 product on weight panels (a linear
// whose weight tfc.pack_panels laid out once) runs as an extern stage of
// the kernel: the same register tile as the kernel's Halide schedule (8 rows
// x 48 columns, 24 accumulators, K in order; MatmulKernel.cpp), plus a
// software prefetch (prefetcht1) of the panels of the block the thread
// computes next, spread over the block's steps of K (PanelBlocks.h). Inside a
// model every weight comes from DRAM, and without it the first row tile of
// each panel waits on its panel: Halide 14 can only emit prefetchnta, whose
// lines skip L2. It also fetches the block's lines of the kernel's result
// for writing (PanelBlocks.h). The kernel's Halide code passes the block
// through its epilogue (bias, activation, residual) as usual.
//
// On CPUs with AVX512_BF16 but no AMX (AMD Zen 4 and 5), a bf16 product on
// panels (`--dtype bf16`) runs the same way on a second stage: the same
// tile and prefetch, with vdpbf16ps on pairs of K (A rounded to bf16 once
// per call by the kernel, as for the AMX stage of AmxMatmul.h, which takes
// precedence where the CPU has AMX).
//
// Only kernels compiled into this process use it (the JIT and the disk
// cache, whose shared objects find the function in the executable, which
// exports it); AOT libraries and emitted sources keep the Halide tile.
// docs/runtime.md, "fp32 products on panels".
//
//===----------------------------------------------------------------------===//

#ifndef TFC_CODEGEN_PANELMATMUL_H
#define TFC_CODEGEN_PANELMATMUL_H

#include "HalideRuntime.h"

#include <cstdint>
#include <vector>

namespace tfc::codegen {

/// The extern stages' C symbols.
inline constexpr const char *kPanelMatmulSymbol = "tfc_panel_matmul_f32";
inline constexpr const char *kBf16PanelMatmulSymbol = "tfc_panel_matmul_bf16";

/// The panel stages' register tiles as counted while counting is on (`tfc
/// bench --profile`): per K, element type and kind of tile (the first row
/// tile of a panel in a call, which waits on the panel, or a later one),
/// the tiles, their FLOPs and the seconds they took, summed over threads.
struct PanelTileCount {
  int32_t k = 0;
  bool bf16 = false;
  bool first = false;
  uint64_t tiles = 0;
  double flops = 0;
  double seconds = 0;
};

/// Starts counting the tiles of this process's panel stages, from zero.
/// Counting costs two reads of the time-stamp counter per tile (8 rows by
/// one panel over all of K) and nothing when off.
void startPanelTileCounts();

/// Stops counting and returns the counts, by K, element type and kind;
/// empty where no tile ran or the CPU has no invariant time-stamp counter.
std::vector<PanelTileCount> stopPanelTileCounts();

/// Whether this process may run the fp32 stage: an x86-64 CPU with
/// AVX-512F, and TFC_HOST_NO_F32_PANEL_STAGE is not "1". Decided once per
/// process.
bool hostHasF32PanelStage();

/// Whether this process may run the bf16 stage: an x86-64 CPU with AVX-512F
/// and AVX512_BF16, and TFC_HOST_NO_BF16_PANEL_STAGE is not "1". Decided
/// once per process.
bool hostHasBf16PanelStage();

} // namespace tfc::codegen

/// The extern stage (see the file comment). `a`: the activations, f32
/// [batch..., M, K] (Halide dims K, M, batch...; dim 0 dense); `b`: f32
/// panels [ceil(N / 48), K, 48] (tfc.pack_panels), dense, zero past N; `k`:
/// K; `n`: N, or any count of columns in the last panel (the stage reads
/// whole panels: a kernel that reads N at run time passes all the panels'
/// columns); `result`: a handle to the kernel's result buffer (or null),
/// whose lines under the block the stage prefetches for the epilogue
/// (PanelBlocks.h); `rows_outer`: non-zero where the kernel's row blocks are
/// the outermost loop (the prefetch's share, planPanelPrefetch);
/// `prefetch_a`: non-zero where the tiles should prefetch their rows of A
/// (A comes from L3 or DRAM: MatmulKernel.cpp, prefetchRowsOfA); `out`: the
/// block of the product to compute (dims N, M, batch..., any mins). Answers
/// Halide's bounds queries. Returns 0, or non-zero after saying why through
/// recordKernelRuntimeError (no AVX-512F in this process, a buffer it cannot
/// read).
extern "C" int tfc_panel_matmul_f32(halide_buffer_t *a, halide_buffer_t *b,
                                    int32_t k, int32_t n, const void *result,
                                    int32_t rows_outer, int32_t prefetch_a,
                                    halide_buffer_t *out);

/// The bf16 stage: as tfc_panel_matmul_f32, on `a` rounded to bf16 and bf16
/// panels [ceil(N / 48), K / 2, 48, 2] (pairs of K side by side, as
/// tfc.pack_panels lays out a bf16 weight), K even. Returns non-zero, after
/// saying why, where this process has no AVX512_BF16 (hostHasBf16PanelStage)
/// or a buffer cannot be read.
extern "C" int tfc_panel_matmul_bf16(halide_buffer_t *a, halide_buffer_t *b,
                                     int32_t k, int32_t n, const void *result,
                                     int32_t rows_outer, int32_t prefetch_a,
                                     halide_buffer_t *out);

#endif // TFC_CODEGEN_PANELMATMUL_H
