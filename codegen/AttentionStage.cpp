//===- AttentionStage.cpp - fp32 CPU attention as an extern stage ---------===//
//
// The extern stage of AttentionStage.h. One call computes the result of the
// (batch, head) pairs of its block (the kernel calls it once per pair, its
// parallel tasks):
//  1. into task-local buffers: K transposed in tiles of 32 keys and times
//     the scale ([Sk / 32][D][32], zero past Sk; 16 x 16 transposes in
//     registers), and V's rows dense; the views' rows prefetched a few
//     ahead. Q is read where it is (each block's 8 rows once), the next
//     block's rows prefetched into L1: its copy took ~2 of a BERT-base
//     head's ~26 us;
//  2. per block of 8 query rows (rows past the task's last repeat it, and
//     are not stored): the keys the block needs (under a plain causal mask,
//     up to its last row's last one, where its first row sees a key), in
//     tiles of 32 keys: 16 accumulators (8 rows x 2 vectors) over D, one
//     broadcast of Q per row and step of D; then biased and masked (`fill`)
//     into the block's scores, with each row's max (a vector per row,
//     reduced once per block). Where no row needs its own mask (no bias, a
//     padding mask or none, a causal cut only on the diagonal tiles), the
//     masks are a few mask registers;
//  3. per row exp(s - max) (a polynomial on the vector, scaled by 2^n with
//     vscalefps) and their sum, the block's rows side by side;
//  4. P V in tiles of 4 rows x up to 64 value channels (16 accumulators),
//     times 1 / sum into the result.
// A masked score is `fill`, as in the unfused graph's masked_fill, and the
// keys a block skips would only have added exp(fill - max) (0 in f32).
//
//===----------------------------------------------------------------------===//

#include "codegen/AttentionStage.h"

#include "codegen/KernelBuilder.h"
#include "codegen/PanelBlocks.h"

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

// GCC 12 reports -Wmaybe-uninitialized inside its own AVX-512 intrinsics
// (unpacks, shuffles, max, scalef) once they are inlined here: they pass
// _mm512_undefined_ps() through as the unused merge source.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

using namespace tfc::codegen;

namespace {
constexpr int kRows = 8;   // query rows per block
constexpr int kKeys = 32;  // keys per score tile (2 vectors)
constexpr int kPVRows = 4; // rows per P V tile
constexpr int kPVVecs = 4; // value vectors per P V tile (64 channels)

/// A rank-4 view [B, H, rows, cols] of a buffer (Halide dims cols, rows, H,
/// B), broadcast where an extent is 1 or the buffer has fewer dims.
struct View4 {
  const char *host = nullptr;
  long stride[4] = {0, 0, 0, 0}; // elements, Halide dim order
  int min[4] = {0, 0, 0, 0};
  int bytes = 4;

  explicit View4(const halide_buffer_t *buf) {
    if (!buf)
      return;
    host = reinterpret_cast<const char *>(buf->host);
    bytes = buf->type.bytes();
    for (int d = 0; d < buf->dimensions && d < 4; ++d)
      if (buf->dim[d].extent != 1) {
        stride[d] = buf->dim[d].stride;
        min[d] = buf->dim[d].min;
      }
  }
  /// The element at (col, row, h, b), in the buffer's coordinates.
  const char *at(long col, long row, long h, long b) const {
    long c[4] = {col, row, h, b};
    long off = 0;
    for (int d = 0; d < 4; ++d)
      if (stride[d] != 0)
        off += (c[d] - min[d]) * stride[d];
    return host + off * bytes;
  }
};

/// The sizes of one call and what it applies.
struct Problem {
  int D, Dv, Sk, Sq;
  int flags;
  float scale, fill;
  View4 q, k, v, keep, bias;
  /// Keys a block may skip: a causal mask and nothing else.
  bool plainCausal() const {
    return (flags & kAttentionCausal) &&
           !(flags & (kAttentionKeep | kAttentionBias));
  }
};

#if defined(__x86_64__)
#define TFC_AVX512_TARGET __attribute__((target("avx512f")))
#define TFC_AVX512_INLINE                                                      \
  __attribute__((target("avx512f"), always_inline)) inline

/// exp(x) for x <= 0 in 16 lanes: x = n ln 2 + r, |r| <= ln 2 / 2; exp(r) =
/// 1 + r + r^2 P(r) (a degree-5 minimax polynomial, ~1 ulp), times 2^n. 0
/// below -87, where exp(x) would be a denormal (f32's smallest normal is
/// e^-87.3): FMAs on denormals take microcode assists, and the masked
/// scores (`fill` - max) are all there (a first version, clamped at -88
/// like the Halide kernel's exp, ran the causal micro-benchmark 4x slower).
TFC_AVX512_INLINE __m512 expNeg(__m512 x) {
  __mmask16 normal = _mm512_cmp_ps_mask(x, _mm512_set1_ps(-87.0f), _CMP_GE_OQ);
  x = _mm512_max_ps(x, _mm512_set1_ps(-87.0f));
  __m512 n = _mm512_roundscale_ps(
      _mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
      _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
  __m512 p = _mm512_set1_ps(1.9875691500e-4f);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.3981999507e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894e-2f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459e-1f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201e-1f));
  __m512 e = _mm512_fmadd_ps(_mm512_mul_ps(r, r), p,
                             _mm512_add_ps(r, _mm512_set1_ps(1.0f)));
  return _mm512_maskz_mov_ps(normal, _mm512_scalef_ps(e, n));
}

/// Lanes [0, count) of 16 (count may exceed 16 or be negative).
TFC_AVX512_INLINE __mmask16 firstLanes(long count) {
  if (count >= 16)
    return 0xffff;
  return count <= 0 ? 0 : static_cast<__mmask16>((1u << count) - 1);
}

/// Prefetches into L2 (or the level `Hint` names) the first `cols` floats
/// of rows [from, to) of the rows `ld` floats apart from `row`.
template <_mm_hint Hint = _MM_HINT_T1>
void prefetchRows(const float *row, long ld, long from, long to, int cols) {
#if defined(__x86_64__)
  for (long r = from; r < to; ++r)
    for (long c = 0; c < cols; c += 16)
      _mm_prefetch(reinterpret_cast<const char *>(row + r * ld + c), Hint);
#endif
}

/// Transposes the 16 x 16 block r (rows of 16) in registers: r[c] becomes
/// column c. Three rounds of 2 x 2 block swaps: unpacks of single floats,
/// then of pairs, then two shuffles of 128-bit lanes.
TFC_AVX512_INLINE void transpose16(__m512 r[16]) {
  __m512 t[16], u[16];
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
  }
  for (int i = 0; i < 16; i += 4)
    for (int k = 0; k < 2; ++k) {
      __m512d a = _mm512_castps_pd(t[i + k]),
              b = _mm512_castps_pd(t[i + k + 2]);
      u[i + 2 * k] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, b));
      u[i + 2 * k + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, b));
    }
  // u[4q + c]: columns c, c + 4, c + 8, c + 12 of rows 4q..4q+3.
  for (int c = 0; c < 4; ++c) {
    __m512 lo0 = _mm512_shuffle_f32x4(u[c], u[4 + c], 0x88);
    __m512 hi0 = _mm512_shuffle_f32x4(u[c], u[4 + c], 0xdd);
    __m512 lo1 = _mm512_shuffle_f32x4(u[8 + c], u[12 + c], 0x88);
    __m512 hi1 = _mm512_shuffle_f32x4(u[8 + c], u[12 + c], 0xdd);
    r[c] = _mm512_shuffle_f32x4(lo0, lo1, 0x88);
    r[c + 8] = _mm512_shuffle_f32x4(lo0, lo1, 0xdd);
    r[c + 4] = _mm512_shuffle_f32x4(hi0, hi1, 0x88);
    r[c + 12] = _mm512_shuffle_f32x4(hi0, hi1, 0xdd);
  }
}

/// A (batch, head)'s K transposed in tiles of kKeys keys and times the
/// scale: key j, dim d at kt[(j / kKeys) * D * kKeys + d * kKeys + j %
/// kKeys] (a tile's rows contiguous, as a weight panel's), zero past Sk. In
/// 16 x 16 blocks where D is a multiple of 16.
TFC_AVX512_TARGET void transposeK(const Problem &p, long h, long b, long pitch,
                                  float *kt) {
  long tile = long(p.D) * kKeys;
  std::fill(kt + (p.Sk / kKeys) * tile, kt + (pitch / kKeys) * tile, 0.0f);
  const float *k0 = reinterpret_cast<const float *>(p.k.at(0, 0, h, b));
  long ldk = p.k.stride[1];
  if (p.D % 16 != 0) {
    for (int j = 0; j < p.Sk; ++j) {
      float *col = kt + (j / kKeys) * tile + j % kKeys;
      for (int d = 0; d < p.D; ++d)
        col[d * kKeys] = k0[j * ldk + d] * p.scale;
    }
    return;
  }
  __m512 scale = _mm512_set1_ps(p.scale);
  prefetchRows(k0, ldk, 0, std::min(p.Sk, 16), p.D);
  for (int j0 = 0; j0 < p.Sk; j0 += 16) {
    prefetchRows(k0, ldk, j0 + 16, std::min(p.Sk, j0 + 32), p.D);
    float *dst = kt + (j0 / kKeys) * tile + j0 % kKeys;
    for (int d0 = 0; d0 < p.D; d0 += 16) {
      __m512 r[16];
      for (int i = 0; i < 16; ++i)
        r[i] = j0 + i < p.Sk ? _mm512_loadu_ps(k0 + (j0 + i) * ldk + d0)
                             : _mm512_setzero_ps();
      transpose16(r);
      for (int c = 0; c < 16; ++c)
        _mm512_storeu_ps(dst + (d0 + c) * kKeys, _mm512_mul_ps(r[c], scale));
    }
  }
}

/// The keep operand at keys [j, j + 16) of query row `i` (lanes past Sk
/// set).
__mmask16 keepLanes(const Problem &p, long i, long j, long h, long b) {
  __mmask16 m = 0xffff;
  for (int l = 0; l < 16 && j + l < p.Sk; ++l)
    if (*p.keep.at(j + l, i, h, b) == 0)
      m &= static_cast<__mmask16>(~(1u << l));
  return m;
}

/// A (batch, head)'s keep lanes for all keys, where they are the same for
/// every query row (a padding mask, [B, 1, 1, Sk]); else empty.
void keepForAllRows(const Problem &p, long h, long b,
                    std::vector<__mmask16> &lanes) {
  lanes.clear();
  if (!(p.flags & kAttentionKeep) || p.keep.stride[1] != 0)
    return;
  for (long j = 0; j < p.Sk; j += 16)
    lanes.push_back(keepLanes(p, 0, j, h, b));
}

/// Where query row `i` may see keys [j, j + 16): the keep operand (`rowless`:
/// keepForAllRows's) and the causal condition (j' <= i + Sk - Sq).
TFC_AVX512_INLINE __mmask16
allowedLanes(const Problem &p, long i, long j, long h, long b,
             const std::vector<__mmask16> &rowless) {
  __mmask16 m = 0xffff;
  if (p.flags & kAttentionCausal)
    m &= firstLanes(i + (p.Sk - p.Sq) - j + 1);
  if (p.flags & kAttentionKeep)
    m &= rowless.empty() ? keepLanes(p, i, j, h, b) : rowless[j / 16];
  return m;
}

/// The bias of row `i` at keys [j, j + 16) (0 past Sk).
TFC_AVX512_INLINE __m512 biasLanes(const Problem &p, long i, long j, long h,
                                   long b) {
  alignas(64) float lanes[16] = {};
  for (int l = 0; l < 16 && j + l < p.Sk; ++l)
    lanes[l] = *reinterpret_cast<const float *>(p.bias.at(j + l, i, h, b));
  return _mm512_load_ps(lanes);
}

/// Stores the block's tile of scores at keys [j, j + kKeys) (acc: row r's
/// two vectors) to s (row r at s + r * pitch), biased and masked, and folds
/// them into each row's running max vector (lanes at keys [0, keys) only).
/// Where the masks are the same for all the block's rows but the causal
/// cut (no bias, keep lanes from keepForAllRows), in registers; else per
/// element.
TFC_AVX512_INLINE void storeTile(const Problem &p, const long *rows, long h,
                                 long b, long j, long keys,
                                 const std::vector<__mmask16> &rowless,
                                 const __m512 (&acc)[kRows][2], float *s,
                                 long pitch, __m512 *maxes) {
  __m512 fill = _mm512_set1_ps(p.fill);
  const __mmask16 valid[2] = {firstLanes(keys - j), firstLanes(keys - j - 16)};
  if ((p.flags & kAttentionBias) ||
      ((p.flags & kAttentionKeep) && rowless.empty())) {
    for (int r = 0; r < kRows; ++r)
      for (int c = 0; c < 2; ++c) {
        long jc = j + c * 16;
        __m512 x = acc[r][c];
        if (p.flags & kAttentionBias)
          x = _mm512_add_ps(x, biasLanes(p, rows[r], jc, h, b));
        if (p.flags & (kAttentionKeep | kAttentionCausal))
          x = _mm512_mask_blend_ps(allowedLanes(p, rows[r], jc, h, b, rowless),
                                   fill, x);
        _mm512_storeu_ps(s + r * pitch + c * 16, x);
        maxes[r] = _mm512_mask_max_ps(maxes[r], valid[c], maxes[r], x);
      }
    return;
  }
  __mmask16 keep[2] = {0xffff, 0xffff};
  if (p.flags & kAttentionKeep)
    for (int c = 0; c < 2; ++c)
      if (j + c * 16 < p.Sk)
        keep[c] = rowless[j / 16 + c];
  // Row i sees keys below i + 1 + Sk - Sq; the block's first row the
  // fewest. Most tiles lie wholly before the cut.
  long seen = 1 + p.Sk - p.Sq;
  bool cut = (p.flags & kAttentionCausal) && rows[0] + seen < j + kKeys;
  bool masked = cut || (p.flags & kAttentionKeep);
#pragma GCC unroll 8
  for (int r = 0; r < kRows; ++r)
#pragma GCC unroll 2
    for (int c = 0; c < 2; ++c) {
      __m512 x = acc[r][c];
      if (masked) {
        __mmask16 m = keep[c];
        if (cut)
          m &= firstLanes(rows[r] + seen - (j + c * 16));
        x = _mm512_mask_blend_ps(m, fill, x);
      }
      _mm512_storeu_ps(s + r * pitch + c * 16, x);
      maxes[r] = _mm512_mask_max_ps(maxes[r], valid[c], maxes[r], x);
    }
}

/// The block's scores at keys [0, keys) rounded up to kKeys, row r at
/// s + r * pitch: q kt per tile (kt holds the scale; q: the block's first
/// row, rows `ldq` floats apart), then bias and masks (storeTile);
/// rowMax[r]: the largest of row r's scores at keys [0, keys).
TFC_AVX512_TARGET void scoreBlock(const Problem &p, const long *rows,
                                  const float *q, long ldq, long h, long b,
                                  const float *kt, long pitch, long keys,
                                  const std::vector<__mmask16> &rowless,
                                  float *s, float *rowMax) {
  __m512 maxes[kRows];
  for (int r = 0; r < kRows; ++r)
    maxes[r] = _mm512_set1_ps(std::numeric_limits<float>::lowest());
  const float *qr[kRows];
  for (int r = 0; r < kRows; ++r)
    qr[r] = q + (rows[r] - rows[0]) * ldq;
  for (long j = 0; j < keys; j += kKeys) {
    __m512 acc[kRows][2];
#pragma GCC unroll 8
    for (int r = 0; r < kRows; ++r)
      acc[r][0] = acc[r][1] = _mm512_setzero_ps();
    const float *tile = kt + (j / kKeys) * p.D * kKeys;
    for (int d = 0; d < p.D; ++d) {
      __m512 k0 = _mm512_loadu_ps(tile + d * kKeys);
      __m512 k1 = _mm512_loadu_ps(tile + d * kKeys + 16);
#pragma GCC unroll 8
      for (int r = 0; r < kRows; ++r) {
        __m512 x = _mm512_set1_ps(qr[r][d]);
        acc[r][0] = _mm512_fmadd_ps(x, k0, acc[r][0]);
        acc[r][1] = _mm512_fmadd_ps(x, k1, acc[r][1]);
      }
    }
    storeTile(p, rows, h, b, j, keys, rowless, acc, s + j, pitch, maxes);
  }
  for (int r = 0; r < kRows; ++r)
    rowMax[r] = _mm512_reduce_max_ps(maxes[r]);
}

/// exp(x - max) of the 16 scores at s, in place, on `lanes` (0 on the
/// others); returns them.
TFC_AVX512_INLINE __m512 expInPlace(float *s, __m512 max, __mmask16 lanes) {
  __m512 e = _mm512_maskz_mov_ps(
      lanes, expNeg(_mm512_sub_ps(_mm512_loadu_ps(s), max)));
  _mm512_storeu_ps(s, e);
  return e;
}

/// The block's rows (row r at s + r * pitch): their scores at keys [0,
/// keys), row r's largest rowMax[r], become exp(s - max), zero from `keys`
/// to the tile's end; inv[r] = 1 / row r's sum, added in key order. The
/// rows side by side, so that one row's horizontal sum and loop ends
/// overlap the others' exps: a BERT-base head's softmax from ~2.4 to ~2.1
/// us (of ~26; docs/benchmarks.md, "Session 27").
TFC_AVX512_TARGET void softmaxBlock(float *s, long pitch, long keys,
                                    const float *rowMax, float *inv) {
  __m512 maxes[kRows], sums[kRows];
  for (int r = 0; r < kRows; ++r) {
    maxes[r] = _mm512_set1_ps(rowMax[r]);
    sums[r] = _mm512_setzero_ps();
  }
  long full = keys / 16 * 16, end = (keys + kKeys - 1) / kKeys * kKeys;
  for (long j = 0; j < end; j += 16) {
    __mmask16 lanes = j < full ? __mmask16(0xffff) : firstLanes(keys - j);
#pragma GCC unroll 8
    for (int r = 0; r < kRows; ++r)
      sums[r] = _mm512_add_ps(sums[r],
                              expInPlace(s + r * pitch + j, maxes[r], lanes));
  }
  for (int r = 0; r < kRows; ++r)
    inv[r] = 1.0f / _mm512_reduce_add_ps(sums[r]);
}

/// P V for kPVRows rows (weights at w + r * pitch, keys [0, keys)) and
/// value vectors [e0, e0 + NV * 16) (the last masked to Dv where `Tail`)
/// of V (rows of Dv floats at v), times inv[r], into the result rows
/// out[r].
template <int NV, bool Tail>
TFC_AVX512_TARGET void pvTile(const float *v, int dv, const float *w,
                              long pitch, long keys, int e0, const float *inv,
                              float *const *out) {
  __m512 acc[kPVRows][NV];
#pragma GCC unroll 4
  for (int r = 0; r < kPVRows; ++r)
#pragma GCC unroll 4
    for (int c = 0; c < NV; ++c)
      acc[r][c] = _mm512_setzero_ps();
  __mmask16 last = firstLanes(dv - e0 - (NV - 1) * 16);
  const float *vr = v + e0;
  for (long j = 0; j < keys; ++j, vr += dv) {
    __m512 vv[NV];
#pragma GCC unroll 4
    for (int c = 0; c < NV; ++c)
      vv[c] = Tail && c + 1 == NV ? _mm512_maskz_loadu_ps(last, vr + c * 16)
                                  : _mm512_loadu_ps(vr + c * 16);
#pragma GCC unroll 4
    for (int r = 0; r < kPVRows; ++r) {
      __m512 x = _mm512_set1_ps(w[r * pitch + j]);
#pragma GCC unroll 4
      for (int c = 0; c < NV; ++c)
        acc[r][c] = _mm512_fmadd_ps(x, vv[c], acc[r][c]);
    }
  }
#pragma GCC unroll 4
  for (int r = 0; r < kPVRows; ++r) {
    if (!out[r])
      continue;
    __m512 s = _mm512_set1_ps(inv[r]);
#pragma GCC unroll 4
    for (int c = 0; c < NV; ++c) {
      __m512 x = _mm512_mul_ps(acc[r][c], s);
      if (Tail && c + 1 == NV)
        _mm512_mask_storeu_ps(out[r] + e0 + c * 16, last, x);
      else
        _mm512_storeu_ps(out[r] + e0 + c * 16, x);
    }
  }
}

/// P V of the block's rows (V: rows of Dv floats at v) into the result
/// (`out[r]` null: not stored).
TFC_AVX512_TARGET void pvBlock(const float *v, int dv, const float *w,
                               long pitch, long keys, const float *inv,
                               float *const *out) {
  for (int r = 0; r < kRows; r += kPVRows)
    for (int e0 = 0; e0 < dv; e0 += kPVVecs * 16) {
      const float *wr = w + r * pitch;
      if (e0 + kPVVecs * 16 <= dv) {
        pvTile<kPVVecs, false>(v, dv, wr, pitch, keys, e0, inv + r, out + r);
        continue;
      }
      switch ((dv - e0 + 15) / 16) { // 1 to kPVVecs vectors, a tail
      case 1:
        pvTile<1, true>(v, dv, wr, pitch, keys, e0, inv + r, out + r);
        break;
      case 2:
        pvTile<2, true>(v, dv, wr, pitch, keys, e0, inv + r, out + r);
        break;
      case 3:
        pvTile<3, true>(v, dv, wr, pitch, keys, e0, inv + r, out + r);
        break;
      default:
        pvTile<4, true>(v, dv, wr, pitch, keys, e0, inv + r, out + r);
      }
    }
}

/// The `rows` rows of a (batch, head) of `t` (`cols` floats each) as dense
/// rows: where they are if they are dense already, else copied into `dst`,
/// prefetching kAheadRows rows ahead (the rows of the head split's views
/// are 9 KiB apart in BERT-base: one per 4 KiB page, past the hardware
/// prefetchers' reach; dense, they no longer share a few L1 sets). Returns
/// the first row.
constexpr long kAheadRows = 8;
TFC_AVX512_TARGET const float *denseRows(const View4 &t, long h, long b,
                                         long rows, int cols,
                                         std::vector<float> &dst) {
  const float *src = reinterpret_cast<const float *>(t.at(0, 0, h, b));
  long ld = t.stride[1];
  if (ld == cols || rows == 1)
    return src;
  dst.resize(size_t(rows) * cols);
  prefetchRows(src, ld, 0, std::min(rows, kAheadRows), cols);
  for (long r = 0; r < rows; ++r) {
    if (r + kAheadRows < rows)
      prefetchRows(src, ld, r + kAheadRows, r + kAheadRows + 1, cols);
    std::copy(src + r * ld, src + r * ld + cols, dst.data() + r * cols);
  }
  return dst.data();
}

/// The keys the block of rows [first, last] needs: all of Sk, or under a
/// plain causal mask up to the last row's last key, if every row has one.
long blockKeys(const Problem &p, long first, long last) {
  long offset = p.Sk - p.Sq;
  if (!p.plainCausal() || first + offset < 0)
    return p.Sk;
  return std::min<long>(p.Sk, last + offset + 1);
}

/// The rows [i0, i0 + rows) of one (batch, head) into `out` (row i at
/// out + (i - i0) * ldo).
TFC_AVX512_TARGET void attendHead(const Problem &p, long h, long b, long i0,
                                  long rows, float *out, long ldo) {
  long pitch = (p.Sk + kKeys - 1) / kKeys * kKeys;
  thread_local std::vector<float> kt, vd, scores;
  thread_local std::vector<__mmask16> rowless;
  kt.resize(size_t(p.D) * pitch);
  scores.resize(size_t(kRows) * pitch);
  transposeK(p, h, b, pitch, kt.data());
  const float *v = denseRows(p.v, h, b, p.Sk, p.Dv, vd);
  // Q's rows where they are: a block reads its 8 rows once (as
  // broadcasts), and prefetches the next block's into L1.
  const float *q = reinterpret_cast<const float *>(p.q.at(0, i0, h, b));
  long ldq = p.q.stride[1];
  prefetchRows<_MM_HINT_T0>(q, ldq, 0, std::min<long>(rows, kRows), p.D);
  keepForAllRows(p, h, b, rowless);
  for (long r0 = 0; r0 < rows; r0 += kRows) {
    prefetchRows<_MM_HINT_T0>(q, ldq, r0 + kRows,
                              std::min<long>(rows, r0 + 2 * kRows), p.D);
    long idx[kRows];
    float *dst[kRows];
    for (int r = 0; r < kRows; ++r) {
      bool real = r0 + r < rows;
      idx[r] = i0 + (real ? r0 + r : rows - 1);
      dst[r] = real ? out + (r0 + r) * ldo : nullptr;
    }
    long keys = blockKeys(p, idx[0], idx[kRows - 1]);
    float inv[kRows], rowMax[kRows];
    scoreBlock(p, idx, q + (idx[0] - i0) * ldq, ldq, h, b, kt.data(), pitch,
               keys, rowless, scores.data(), rowMax);
    softmaxBlock(scores.data(), pitch, keys, rowMax, inv);
    pvBlock(v, p.Dv, scores.data(), pitch, keys, inv, dst);
  }
}
#endif

/// Why the buffers cannot be read as the header says, or "".
std::string checkBuffers(const halide_buffer_t *q, const halide_buffer_t *k,
                         const halide_buffer_t *v, const halide_buffer_t *keep,
                         const halide_buffer_t *bias, int32_t flags,
                         const halide_buffer_t *out) {
  auto isF32 = [](const halide_buffer_t *buf) {
    return buf->type.code == halide_type_float && buf->type.bits == 32;
  };
  for (const halide_buffer_t *t : {q, k, v, out})
    if (t->dimensions != 4 || !isF32(t) || t->dim[0].stride != 1)
      return "expects f32 q, k, v and result of rank 4 with dense rows";
  if (k->dim[0].extent != q->dim[0].extent ||
      v->dim[1].extent != k->dim[1].extent || k->dim[1].extent < 1)
    return "q, k and v disagree in D or Sk, or there is no key";
  if (out->dim[0].min != 0 || out->dim[0].extent != v->dim[0].extent)
    return "the block does not cover all value channels";
  for (int d = 1; d < 4; ++d) {
    const halide_buffer_t *src = d == 1 ? q : v;
    if (out->dim[d].min < src->dim[d].min ||
        out->dim[d].min + out->dim[d].extent >
            src->dim[d].min + src->dim[d].extent)
      return "the block lies outside q or v";
  }
  if ((flags & kAttentionKeep) &&
      (keep->dimensions > 4 || keep->type.bytes() != 1))
    return "expects a one-byte keep mask of rank <= 4";
  if ((flags & kAttentionBias) && (bias->dimensions > 4 || !isF32(bias)))
    return "expects an f32 bias of rank <= 4";
  return "";
}
} // namespace

bool tfc::codegen::hostHasAttentionStage() {
  static const bool has = avx512fStageAllowed("TFC_HOST_NO_ATTENTION_STAGE");
  return has;
}

extern "C" int tfc_attention_f32(halide_buffer_t *q, halide_buffer_t *k,
                                 halide_buffer_t *v, halide_buffer_t *keep,
                                 halide_buffer_t *bias, int32_t flags,
                                 float scale, float fill,
                                 halide_buffer_t *out) {
  // Every input is a kernel input (an ImageParam), read where it is: the
  // bounds query needs no answer beyond the regions Halide described.
  StageCall call = beginStageCall(
      kAttentionSymbol, {q, k, v, keep, bias, out}, [] {},
      [&] { return checkBuffers(q, k, v, keep, bias, flags, out); },
      hostHasAttentionStage(), "this process cannot use AVX-512F");
  if (call != StageCall::Compute)
    return call == StageCall::Answered ? 0 : -1;
#if defined(__x86_64__)
  Problem p{q->dim[0].extent,
            v->dim[0].extent,
            k->dim[1].extent,
            q->dim[1].extent,
            flags,
            scale,
            fill,
            View4(q),
            View4(k),
            View4(v),
            View4((flags & kAttentionKeep) ? keep : nullptr),
            View4((flags & kAttentionBias) ? bias : nullptr)};
  // Queries count from q's first row (the causal offset Sk - Sq is in
  // rows of q): the view's coordinates are q's.
  for (int bi = 0; bi < out->dim[3].extent; ++bi)
    for (int hi = 0; hi < out->dim[2].extent; ++hi) {
      long b = out->dim[3].min + bi, h = out->dim[2].min + hi;
      float *dst = reinterpret_cast<float *>(out->host) +
                   bi * long(out->dim[3].stride) +
                   hi * long(out->dim[2].stride);
      attendHead(p, h, b, out->dim[1].min, out->dim[1].extent, dst,
                 out->dim[1].stride);
    }
  return 0;
#else
  return -1;
#endif
}
