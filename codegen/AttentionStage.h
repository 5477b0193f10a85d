//===- AttentionStage.h - fp32 CPU attention as an extern stage -*- C++ -*-===//
//
// On x86-64 CPUs with AVX-512F, the general CPU kernel of
// tfc.fused_attention (more than one query row) is an extern stage: a C++
// function on AVX-512 intrinsics that computes one (batch, head) of the
// result, which the kernel's Halide code calls per parallel task. It runs
// the same algorithm as the Halide kernel of FusedKernels.cpp on the CPU
// (one chunk of keys: per block of 8 query rows, the scores in register
// tiles of 8 rows x 32 keys, their max, exp and sum, then P V in tiles of 4
// rows x 64 value channels; keys past a block's last causal one skipped
// under a plain causal mask), on the kernel's inputs as they are (rows
// dense, any strides: the head split's views), into the kernel's result
// (the extern stage is the kernel's output Func). It exists
// for two reasons: the Halide kernel reached ~45 % of the FMA peak (its
// copies of Q, K and V, its masks and statistics in separate loop nests),
// and it was the longest kernel to compile (~1.3 s of GPT-2 small's 3.4 s of
// CPU: three causal loop nests to lower).
//
// Only kernels compiled into this process use it (the JIT and the disk
// cache, whose shared objects find the function in the executable, which
// exports it); AOT libraries, emitted sources, the GPU and the one-row
// decode kernel keep the Halide kernels. docs/runtime.md, "Attention on the
// CPU".
//
//===----------------------------------------------------------------------===//

#ifndef TFC_CODEGEN_ATTENTIONSTAGE_H
#define TFC_CODEGEN_ATTENTIONSTAGE_H

#include "HalideRuntime.h"

#include <cstdint>

namespace tfc::codegen {

/// The extern stage's C symbol.
inline constexpr const char *kAttentionSymbol = "tfc_attention_f32";

/// The stage's `flags`: which of `keep` and `bias` are operands (the others
/// are stand-ins, never read), and whether the causal mask applies.
enum AttentionStageFlags : int32_t {
  kAttentionKeep = 1,
  kAttentionBias = 2,
  kAttentionCausal = 4,
};

/// Whether this process may run the extern stage: an x86-64 CPU with
/// AVX-512F, and TFC_HOST_NO_ATTENTION_STAGE is not "1". Decided once per
/// process.
bool hostHasAttentionStage();

} // namespace tfc::codegen

/// The extern stage (see the file comment). `q` [B, H, Sq, D], `k`
/// [B, H, Sk, D], `v` [B, H, Sk, Dv] (f32; Halide dims reversed, dim 0
/// dense); `keep` (bool, 1 byte per element) and `bias` (f32): rank <= 4,
/// broadcast to [B, H, Sq, Sk] from the right (extent-1 dims), present where
/// `flags` says (AttentionStageFlags); `scale` multiplies q k; a masked
/// score is `fill`; `out`: the (batch, head) blocks of the f32 result
/// [B, H, Sq, Dv] to compute (dims Dv, Sq, H, B, any mins; all of Dv). Answers
/// Halide's bounds queries. Returns 0, or non-zero after saying why through
/// recordKernelRuntimeError (no AVX-512F in this process, a buffer it cannot
/// read).
extern "C" int tfc_attention_f32(halide_buffer_t *q, halide_buffer_t *k,
                                 halide_buffer_t *v, halide_buffer_t *keep,
                                 halide_buffer_t *bias, int32_t flags,
                                 float scale, float fill, halide_buffer_t *out);

#endif // TFC_CODEGEN_ATTENTIONSTAGE_H
