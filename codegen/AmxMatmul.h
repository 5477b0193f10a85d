//===- AmxMatmul.h - bf16 products on AMX tiles ------------------*- C++ -*-===//
//
// On x86 CPUs with AMX (Intel Sapphire Rapids and later), the products of
// bf16 weight panels run on the tile unit: TDPBF16PS multiplies a 16 x 32
// tile of bf16 by a 32 x 16 one into 16 x 16 f32 accumulators, 16x the
// work of one AVX-512 FMA. Halide 14 has no schedule that keeps several
// accumulator tiles in registers, so the product is an extern stage of the
// kernel: a C++ function on the tile intrinsics that computes one block of
// the result, which the kernel's Halide code then passes through its
// epilogue (bias, activation, residual) as usual (MatmulKernel.cpp).
//
// Only kernels compiled into this process use it (the JIT and the disk
// cache, whose shared objects find the function in the executable, which
// exports it): AOT libraries and emitted sources keep the AVX512_BF16
// kernels. docs/runtime.md, "bf16 on AMX tiles".
//
//===----------------------------------------------------------------------===//

#ifndef TFC_CODEGEN_AMXMATMUL_H
#define TFC_CODEGEN_AMXMATMUL_H

#include "HalideRuntime.h"

#include <cstdint>

namespace tfc::codegen {

/// The extern stage's C symbol.
inline constexpr const char *kAmxMatmulSymbol = "tfc_amx_matmul_bf16";

/// Whether this process may run AMX bf16 tiles: an x86-64 CPU with AMX-TILE
/// and AMX-BF16, whose kernel granted the process the tile state
/// (arch_prctl ARCH_REQ_XCOMP_PERM), and TFC_HOST_NO_AMX is not "1".
/// Decided once per process.
bool hostHasAmx();

} // namespace tfc::codegen

/// The extern stage (see the file comment). `a`: the activations rounded to
/// bf16, [batch..., M, K] (Halide dims K, M, batch...; dim 0 dense); `b`: bf16
/// panels [ceil(N / 48), K / 2, 48, 2] (tfc.pack_panels), dense, zero past N;
/// `k`, `n`: K (a multiple of 32) and N; `result`: a handle to the kernel's
/// result buffer (or null), whose lines under the block the stage prefetches
/// for the epilogue (PanelBlocks.h); `rows_outer`: as the fp32 stage's
/// (PanelMatmul.h); `out`: the block of the f32 product to compute (dims N,
/// M, batch..., any mins). Answers Halide's bounds
/// queries. Returns 0, or non-zero after saying why through
/// recordKernelRuntimeError (no AMX in this process, a buffer it cannot
/// read).
extern "C" int tfc_amx_matmul_bf16(halide_buffer_t *a, halide_buffer_t *b,
                                   int32_t k, int32_t n, const void *result,
                                   int32_t rows_outer, halide_buffer_t *out);

#endif // TFC_CODEGEN_AMXMATMUL_H
