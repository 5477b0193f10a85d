//===- FusedKernels.cpp - Kernels of the fused ops ------------------------===//
//
// tfc.linear, tfc.add_layer_norm and tfc.fused_attention (ir/TfcFusedOps.td,
// docs/ir.md "Fused ops"): each computes exactly what the primitive graph it
// replaces computes, in one pass where that graph made several.
//
// tfc.linear: the tuned matmul of MatmulKernel.cpp (register-blocked tiles,
// packed weight panels) with bias and activation applied to each register
// tile as it is stored: no extra pass over the result, and no temp for the
// bias-added and the activated copies.
//
// tfc.add_layer_norm: per row, the sum a + b is computed once into a row
// buffer, its mean and squared deviations are reduced from there (two-pass
// variance, as tfc.layer_norm), and the results are written from it: the
// normalized row and, `with_sum`, the sum (the next residual), as one
// Tuple-valued Func, so that both outputs are written by the same loop.
//
// tfc.fused_attention: an online softmax over chunks of keys. For each
// (batch, head, block of kQueryBlock queries) task:
//   acc = (o = 0, m = -max, l = 0)                   per query row, Dv wide
//   for each chunk of C keys:
//     kt   = the chunk of K, transposed ([D, C]: keys contiguous)
//     s    = scale * q kt (+ bias), `fill` where not allowed   [rows, C]
//            (register tiles of 8 rows x 32 keys, like the matmul)
//     bm   = max_j s;  p = exp(s - bm);  bs = sum_j p;  pv = p v   [rows, Dv]
//     m'   = max(m, bm);  o = o e^(m - m') + pv e^(bm - m');
//     l    = l e^(m - m') + bs e^(bm - m');  m = m'
//   out = o / l
// Only one chunk of scores per task exists at a time ([kQueryBlock, C]), so
// memory does not grow with Sq * Sk and the [B, H, Sq, Sk] scores are never
// materialized. The causal condition and the masks are evaluated on the fly
// from indices; masked scores get `fill` (finite, like the unfused graph's
// masked_fill), keys past Sk in the last chunk get weight 0.
//
// On the CPU there is one chunk, C = Sk: a block's scores are kept whole
// (kQueryBlock x Sk floats, and as many weights: 64 KB per block at 1024
// keys), so no running state is rescaled (the first chunk's alpha is 0 and
// beta 1, known at compile time). Against chunks of 256 keys, 1 thread,
// 12 heads of 64 (bench/micro/attention.tfm, docs/benchmarks.md, session
// 10), with a padding mask: 11 % faster at 128 tokens, 10-16 % at
// 512-2048; causal (with the skipping below): 28 % faster at 128, 13 % at
// 512, level at 1024, 8-11 % slower at 2048 (a block's scores and weights,
// 64 KB each, no longer fit in L1).
// Under a plain causal mask a block reads only the keys up to its last
// row's last one: the max, the sum and P V skip the rest, so its scores
// and weights are computed up to there only (about half the work of a
// square causal prefill). The GPU keeps chunks of gpu::kAttentionKeyChunk
// keys in shared memory.
//
// Decode variant (CPU, one query row, D a multiple of 16: a decode step):
// the blocks above would compute kQueryBlock rows for one and transpose all
// of K per (batch, head). With Sq = 1 (static: a kernel of its own, which
// the planner adds beside the general kernel of a decode step whose Sq is
// dynamic, and the executor calls when Sq is 1) each task computes
// exactly one row and reads K as stored, with no transpose: per key, its
// row of K whole (in address order: one stream), q k along D in 16 lanes
// (D / 16 FMAs), the 16 lanes summed by one horizontal add (a vector
// reduce: log2(16) shuffle-and-add steps); then one max, exp and sum over
// the task's Sk scores (kept whole: Sk floats per task), and P V with the
// Dv channels in registers. K and V are each read once. The dot products
// are summed in another order than the general kernel's, so a one-row
// result may differ from the same row computed in a block in the last
// bits. GPT-2 small decode, 1 thread, CPU ms per step for the 12
// attentions, with the cache in huge pages (runtime/Tensor.h): 10.2 with K
// transposed per 16 x 16 tile and summed in order, 6.9 with blocks of 16
// keys whose first 16 dims were read side by side, then the next 16 (a
// stride of one key row), 3.8 with the blocks' rows read whole and the 16
// keys' lane sums as a transposed 16 x 16 tile (shuffles: more work per
// key than the memory allows), 2.7 this way, at 1000 cached tokens (13.6
// for the blocks of 8 rows, 4 KiB pages; the floor, 74 MB of K and V at
// ~30 GB/s, is ~2.5).
//
// Extern variant (CPU with AVX-512F, KernelOptions::attentionStage, kernels
// run in this process only): the general kernel (more than one query row,
// a one-byte keep mask if any) is the extern stage of AttentionStage.h, the
// same algorithm in C++ on AVX-512 intrinsics, called per (batch, head)
// task; AOT libraries, emitted sources, the GPU and the decode variant keep
// the Halide kernels here.
//
// GPU schedules (GpuSchedules.cpp): linear as the matmul; add+LayerNorm a
// block per row; attention one kernel per (batch, head, block of queries)
// running the same online softmax, with chunks of
// gpu::kAttentionKeyChunk keys in shared memory.
//
//===----------------------------------------------------------------------===//

#include "codegen/AttentionStage.h"
#include "codegen/GpuSchedules.h"
#include "codegen/KernelSupport.h"

#include "ir/TfcOps.h"

#include <cfloat>
#include <functional>

using namespace Halide;
using namespace mlir::tfc;
using namespace tfc::codegen::detail;

namespace tfc::codegen {

namespace detail {
// MatmulKernel.cpp.
llvm::Expected<Func> buildMatmulWithEpilogue(
    KernelContext &ctx, TensorInput &a, TensorInput &b, bool transposeB,
    std::optional<uint64_t> packedN,
    const std::function<Expr(Expr, const std::vector<Var> &)> &epilogue,
    bool longEpilogue);
} // namespace detail

namespace {

/// Queries per block (a block's rows share the pass over the keys). A
/// block is computed whole (its
/// rows past Sq are clamped), so a decode step (Sq = 1) computes kQueryBlock
/// rows: 8, one score tile, rather than 32 (GPT-2 decode at 512 cached
/// tokens: 48.7 -> 40.6 ms; prefill and 1024-token attention unchanged).
constexpr int kQueryBlock = 8;
/// The score register tile: 8 query rows x 32 keys (2 vectors).
constexpr int kScoreRows = 8;
constexpr int kScoreKeys = 32;
/// Query rows per tile of the P V product (x Dv wide).
constexpr int kPVRows = 4;

/// `f(vars) = value` for a Tuple value, with axis-ordered vars.
void defineTuple(Func &f, const std::vector<Var> &vars, const Tuple &value) {
  std::vector<Var> reversed(vars.rbegin(), vars.rend());
  f(reversed) = value;
}

//===----------------------------------------------------------------------===//
// tfc.linear
//===----------------------------------------------------------------------===//

llvm::Expected<Func> buildLinear(KernelContext &ctx, LinearOp op) {
  if (ctx.inputs.size() < 2)
    return ctx.error("expects x and w");
  TensorInput &x = ctx.inputs[0];
  TensorInput &w = ctx.inputs[1];
  if (w.rank() != 2 && !op.getPackedN())
    return ctx.error("the weight must have rank 2");
  bool hasBias = ctx.inputs.size() > 2;
  if (hasBias && ctx.inputs[2].rank() != 1)
    return ctx.error("the bias must have rank 1");
  std::string name = op.getActivation().str();
  if (!activation(name, Expr(0.0f)).defined())
    return ctx.error("unknown activation '" + name + "'");
  const TensorInput *bias = hasBias ? &ctx.inputs[2] : nullptr;
  auto epilogue = [&](Expr acc, const std::vector<Var> &vars) {
    Expr value = acc;
    if (bias)
      value = value + bias->at({vars.back()});
    return activation(name, value);
  };
  bool longEpilogue = name != "none" && name != "relu";
  return buildMatmulWithEpilogue(ctx, x, w, op.getTransposeB(), op.getPackedN(),
                                 epilogue, longEpilogue);
}

//===----------------------------------------------------------------------===//
// tfc.add_layer_norm
//===----------------------------------------------------------------------===//

/// Independent accumulator vectors of the row statistics (CPU): one chain
/// of 48 dependent FMAs per 768-wide row ran at their latency.
constexpr int kStatisticsChains = 4;

llvm::Expected<Func> buildAddLayerNorm(KernelContext &ctx,
                                       AddLayerNormOp op) {
  if (ctx.inputs.size() != 4)
    return ctx.error("expects a, b, gamma and beta");
  const TensorInput &a = ctx.inputs[0];
  const TensorInput &b = ctx.inputs[1];
  const TensorInput &gamma = ctx.inputs[2];
  const TensorInput &beta = ctx.inputs[3];
  int rank = ctx.resultRank();
  if (rank < 1 || gamma.rank() != 1 || beta.rank() != 1)
    return ctx.error("expects a rank >= 1 sum and rank-1 gamma and beta");
  int axis = rank - 1;
  std::vector<Var> vars = axisVars(rank);
  std::vector<Var> rowVars(vars.begin(), vars.end() - 1);
  std::vector<Expr> rowIdx = asExprs(rowVars);
  Var c = vars[axis];
  std::optional<int64_t> rowLength = ctx.resultStaticExtent(axis);
  Expr n = rowLength ? Expr(static_cast<int>(*rowLength)) : gamma.extent(0);
  Expr nf = cast<float>(n);
  Expr eps = Expr(static_cast<float>(op.getEpsilon().convertToDouble()));
  RDom r(0, n, ctx.base + "_r");
  auto at = [&](const std::vector<Var> &v, Expr last) {
    std::vector<Expr> idx = asExprs(v);
    idx.push_back(std::move(last));
    return idx;
  };

  // Algorithm
  Func sum = ctx.func("sum");
  {
    std::vector<Expr> idx = asExprs(vars);
    define(sum, vars,
           a.at(broadcastIndices(a, idx)) + b.at(broadcastIndices(b, idx)));
  }
  Func total = ctx.func("total");
  define(total, rowVars, 0.0f);
  ref(total, rowIdx) += call(sum, at(rowVars, r));
  Expr mean = call(total, rowIdx) / nf;
  Func sqdev = ctx.func("sqdev");
  define(sqdev, rowVars, 0.0f);
  Expr dev = call(sum, at(rowVars, r)) - mean;
  ref(sqdev, rowIdx) += dev * dev;
  Expr inv = 1.0f / sqrt(call(sqdev, rowIdx) / nf + eps);
  Expr s = call(sum, asExprs(vars));
  Expr normalized = (s - mean) * inv * gamma.at({c}) + beta.at({c});
  Func out = ctx.func();
  if (op.getWithSum())
    defineTuple(out, vars, Tuple(normalized, s));
  else
    define(out, vars, normalized);

  // Schedule
  if (ctx.gpu() && rank > 1) {
    gpu::scheduleRowReduction(out, vars, rowLength, {total, sqdev}, RVar(r.x),
                              {sum});
    return out;
  }
  if (ctx.gpu()) {
    for (Func f : {total, sqdev}) {
      f.compute_root();
      gpuTileStage(f, rowVars);
      gpuTileStage(f.update(), rowVars);
    }
    gpuTileStage(out, vars);
    return out;
  }
  out.vectorize(c, kVectorLanes, outputTail(rowLength, kVectorLanes));
  LoopLevel rowLevel = LoopLevel::root();
  if (rank > 1) {
    std::vector<Var> rows(vars.rbegin() + 1, vars.rend());
    Var row = parallelRows(out, rows, rowsPerTask(rowLength));
    rowLevel = LoopLevel(out, row);
  }
  // The row's sum once, in a row buffer; the statistics read it.
  sum.compute_at(rowLevel).vectorize(c, kVectorLanes,
                                     TailStrategy::GuardWithIf);
  for (Func f : {total, sqdev}) {
    f.compute_at(rowLevel);
    vectorizeInnerReduction(f, RVar(r.x), rowLevel, kStatisticsChains);
  }
  return out;
}

//===----------------------------------------------------------------------===//
// tfc.fused_attention
//===----------------------------------------------------------------------===//

/// Computes the reduction `update` (of a Func) as kVectorLanes partial
/// results per point, `lane` (an RVar of extent kVectorLanes, contiguous in
/// memory) being the vector, combined at the end; the partial results are
/// computed at `at` with the lanes innermost in storage (rfactor appends the
/// lane dimension last, which makes the vectors strided when the Func covers
/// more than one point at `at`).
void laneSums(Stage update, const RVar &lane, const LoopLevel &at) {
  Var l("lane");
  Func lanes = update.rfactor(lane, l);
  std::vector<Var> storage = {l};
  for (const Var &v : lanes.args())
    if (v.name() != l.name())
      storage.push_back(v);
  lanes.compute_at(at).reorder_storage(storage).vectorize(l);
  lanes.update().vectorize(l);
  // The 16 partial results of a point combined by one vector reduction
  // (log2(16) shuffle steps) rather than a scalar loop of 16 dependent max
  // or add instructions per point.
  update.atomic().vectorize(lane);
}

/// laneSums over `r`, split into groups of kVectorLanes.
void vectorizeLanes(Func f, const RVar &r, const LoopLevel &at) {
  RVar ro("ro"), ri("ri");
  laneSums(f.update().split(r, ro, ri, kVectorLanes, TailStrategy::GuardWithIf),
           ri, at);
}

/// The operands and attributes of a tfc.fused_attention.
struct AttentionOperands {
  TensorInput *q, *k, *v;
  const TensorInput *keep, *bias; // null when absent
  float scale, fill;
  bool causal;
};

/// Sizes (Exprs, constant where static) and the chunking of the keys.
struct AttentionShape {
  Expr B, H, D, Sk, Sq, Dv;
  std::optional<int64_t> staticD, staticDv;
  /// Keys per chunk: C = min(Sk, the chunk) (at least 1; all of Sk without
  /// a chunk size), ceil(Sk / C) chunks.
  Expr C, numChunks;
};

/// Halide-order vars: e (value channel), d (head dim), j (key), jj (key in
/// a chunk), ch (chunk), i (query), ii (query in a block), qb (query
/// block), h (head), b (batch).
struct AttentionVars {
  Var e{"e"}, d{"d"}, j{"j"}, jj{"jj"}, ch{"ch"}, i{"i"}, ii{"ii"}, qb{"qb"},
      h{"h"}, b{"b"};
};

/// The stages of the kernel (created named, in this order) and their
/// reduction domains.
struct AttentionFuncs {
  explicit AttentionFuncs(const KernelContext &ctx)
      : kin(ctx.func("kin")), kt(ctx.func("kt")), qrows(ctx.func("qrows")),
        vrows(ctx.func("vrows")), sacc(ctx.func("qk")), raw(ctx.func("scores")),
        s(ctx.func("masked")), bmax(ctx.func("chunk_max")),
        p(ctx.func("weights")), bsum(ctx.func("chunk_sum")), pv(ctx.func("pv")),
        acc(ctx.func("acc")), inv(ctx.func("inv_sum")), out(ctx.func()) {}

  Func kin, kt, qrows, vrows, sacc, raw, s, bmax, p, bsum, pv, acc, inv, out;
  /// rj: the keys of a chunk's P V; rm, rs: of its max and sum, as (lane,
  /// group).
  RDom rd, rj, rm, rs, rc;
  /// The result at (e, i, h, b).
  Expr value;
};

constexpr float kLowestScore = -FLT_MAX;

/// exp of a non-positive argument, clamped so that it never underflows
/// through Halide's exp (whose exponent is computed in int32).
Expr expNeg(const Expr &x) { return exp(max(x, -88.0f)); }

/// Reads q, k, v and the optional keep and bias operands of `op`, checks
/// their count and ranks, and reads the attributes.
llvm::Expected<AttentionOperands> readAttentionOperands(KernelContext &ctx,
                                                        FusedAttentionOp op) {
  if (ctx.inputs.size() < 3)
    return ctx.error("expects q, k and v");
  AttentionOperands o;
  o.q = &ctx.inputs[0];
  o.k = &ctx.inputs[1];
  o.v = &ctx.inputs[2];
  size_t next = 3;
  o.keep = op.getKeep() ? &ctx.inputs[next++] : nullptr;
  o.bias = op.getBias() ? &ctx.inputs[next++] : nullptr;
  if (next != ctx.inputs.size())
    return ctx.error("unexpected operands");
  if (o.q->rank() != 4 || o.k->rank() != 4 || o.v->rank() != 4 ||
      ctx.resultRank() != 4)
    return ctx.error("q, k, v and the result must have rank 4");
  if ((o.keep && o.keep->rank() > 4) || (o.bias && o.bias->rank() > 4))
    return ctx.error("keep and bias must have rank <= 4");
  o.scale = static_cast<float>(op.getScale().convertToDouble());
  o.fill = static_cast<float>(op.getFill().convertToDouble());
  o.causal = op.getCausal();
  return o;
}

/// Sizes. Where an operand is dynamic and another gives the size, the
/// kernel constrains it, so mismatched buffers are refused.
AttentionShape attentionShape(const AttentionOperands &o,
                              std::optional<int> keyChunk) {
  TensorInput &q = *o.q, &k = *o.k, &v = *o.v;
  auto tie = [](TensorInput &t, int axis, const Expr &extent) {
    if (!t.staticExtent(axis))
      t.param.dim(t.hdim(axis)).set_extent(extent);
  };
  auto pick = [](TensorInput &x, TensorInput &y, int axis) {
    if (x.staticExtent(axis))
      return x.extent(axis);
    if (y.staticExtent(axis))
      return y.extent(axis);
    return x.extent(axis);
  };
  AttentionShape sh;
  sh.B = pick(q, k, 0);
  sh.H = pick(q, k, 1);
  sh.D = pick(q, k, 3);
  for (TensorInput *t : {&q, &k, &v}) {
    tie(*t, 0, sh.B);
    tie(*t, 1, sh.H);
  }
  tie(q, 3, sh.D);
  tie(k, 3, sh.D);
  sh.Sk = pick(k, v, 2);
  tie(k, 2, sh.Sk);
  tie(v, 2, sh.Sk);
  sh.Sq = q.extent(2);
  sh.Dv = v.extent(3);
  sh.staticD = q.staticExtent(3) ? q.staticExtent(3) : k.staticExtent(3);
  sh.staticDv = v.staticExtent(3);

  if (!keyChunk) {
    sh.C = max(sh.Sk, 1);
    sh.numChunks = 1;
    return sh;
  }
  sh.C = max(min(sh.Sk, *keyChunk), 1);
  sh.numChunks = (sh.Sk + sh.C - 1) / sh.C;
  return sh;
}

/// The masks: adds the bias (if any) to `score` and returns where a score
/// is allowed (the keep operand and the causal condition), evaluated from
/// the indices.
Expr applyAttentionMasks(const AttentionOperands &o, const AttentionShape &sh,
                         const Expr &i, const Expr &j, const Expr &h,
                         const Expr &b, Expr &score) {
  Expr iq = clamp(i, 0, sh.Sq - 1);
  Expr jk = clamp(j, 0, sh.Sk - 1);
  std::vector<Expr> maskIdx = {b, h, iq, jk};
  if (o.bias)
    score = score + o.bias->at(broadcastIndices(*o.bias, maskIdx));
  Expr allowed = Internal::const_true();
  if (o.keep)
    allowed = o.keep->value(broadcastIndices(*o.keep, maskIdx));
  if (o.causal)
    allowed = allowed && (j <= i + (sh.Sk - sh.Sq));
  return allowed;
}

/// kt (K transposed), the q kt products, the scaled scores and the masked
/// ones.
void defineAttentionScores(const KernelContext &ctx, const AttentionOperands &o,
                           const AttentionShape &sh, const AttentionVars &v,
                           AttentionFuncs &f) {
  const Var &d = v.d, &j = v.j, &i = v.i, &h = v.h, &b = v.b;
  Expr iq = clamp(i, 0, sh.Sq - 1); // tiles may run past the last query
  Expr jk = clamp(j, 0, sh.Sk - 1); // and past the last key

  // kt(j, d): K transposed, keys contiguous.
  f.kin(d, j, h, b) = o.k->at({b, h, jk, d});
  f.kt(j, d, h, b) = f.kin(d, j, h, b);

  f.rd = RDom(0, sh.D, ctx.base + "_d");
  f.sacc(j, i, h, b) = 0.0f;
  f.qrows(d, i, h, b) = o.q->at({b, h, iq, d});
  f.sacc(j, i, h, b) += f.qrows(f.rd, i, h, b) * f.kt(j, f.rd, h, b);

  Expr score = f.sacc(j, i, h, b) * o.scale;
  Expr allowed = applyAttentionMasks(o, sh, i, j, h, b, score);
  // Scaled scores (a stored Func), then the masked ones (inlined into their
  // uses). Halide narrows the region of a Func read in a select arm to
  // where the condition holds; reading the tiled `raw` there keeps its
  // register tiles of qk on their grid under the causal mask.
  f.raw(j, i, h, b) = score;
  f.s(j, i, h, b) = select(allowed, f.raw(j, i, h, b), o.fill);
}

/// Under a plain causal mask, the last key the block of queries starting at
/// `firstRow` needs: its last row's last one, or the last of all where its
/// first row sees none (more queries than keys: that row's weights are
/// uniform over every key, as in the unfused graph).
Expr causalBlockLastKey(const Expr &firstRow, const AttentionShape &sh) {
  Expr offset = sh.Sk - sh.Sq;
  return select(firstRow + offset < 0, sh.Sk - 1,
                firstRow + (kQueryBlock - 1) + offset);
}

/// The online softmax over chunks of keys: per chunk its max, weights, sum
/// and P V; the running (o, m, l) per query row; and the result o / l.
void defineOnlineSoftmax(const KernelContext &ctx, const AttentionOperands &o,
                         const AttentionShape &sh, const AttentionVars &v,
                         AttentionFuncs &f) {
  const Var &e = v.e, &jj = v.jj, &ch = v.ch, &i = v.i, &ii = v.ii, &qb = v.qb,
            &h = v.h, &b = v.b;
  const Expr &C = sh.C, &Sk = sh.Sk;
  // Keys of a chunk: rj for P V; for the max and the sum on the CPU, (lane,
  // group) with key = 16 group + lane in the chunk, whose lanes are computed
  // as vectors (rfactor) and whose groups can be bounded (on the GPU, rj).
  f.rj = RDom(0, C, ctx.base + "_j");
  const RDom &rj = f.rj;
  Expr key = ch * C + rj;
  auto statKeys = [&](const std::string &name, RDom &r) {
    if (ctx.gpu()) {
      r = rj;
      return std::pair<Expr, Expr>(Expr(rj.x), Internal::const_true());
    }
    r = RDom(0, kVectorLanes, 0, (C + kVectorLanes - 1) / kVectorLanes,
             ctx.base + name);
    Expr jInChunk = r.y * kVectorLanes + r.x;
    return std::pair<Expr, Expr>(jInChunk, jInChunk < C);
  };
  auto [jM, inChunkM] = statKeys("_jm", f.rm);
  auto [jS, inChunkS] = statKeys("_js", f.rs);
  // Under a plain causal mask, the keys after the last one a query block's
  // last row sees only hold weights exp(fill - m) = 0 (CPU): the block
  // skips them, so its scores and weights are computed up to that key only.
  if (!ctx.gpu() && o.causal && !o.keep && !o.bias) {
    Expr lastKey = causalBlockLastKey((i / kQueryBlock) * kQueryBlock, sh);
    f.rj.where(key <= lastKey);
    f.rm.where(ch * C + f.rm.y * kVectorLanes <= lastKey);
    f.rs.where(ch * C + f.rs.y * kVectorLanes <= lastKey);
  }
  Expr keyM = ch * C + jM;
  f.bmax(ch, i, h, b) = kLowestScore;
  f.bmax(ch, i, h, b) =
      max(f.bmax(ch, i, h, b),
          select(inChunkM && keyM < Sk, f.s(keyM, i, h, b), kLowestScore));

  f.p(jj, ch, i, h, b) =
      select(ch * C + jj < Sk,
             expNeg(f.s(ch * C + jj, i, h, b) - f.bmax(ch, i, h, b)), 0.0f);

  f.bsum(ch, i, h, b) = 0.0f;
  f.bsum(ch, i, h, b) += select(inChunkS, f.p(jS, ch, i, h, b), 0.0f);

  // Value channels: vectors of 16 run past a Dv that is not a multiple of
  // 16 (computed, never stored); their reads are clamped.
  bool denseDv = sh.staticDv && *sh.staticDv % kVectorLanes == 0;
  Expr ev = denseDv ? Expr(e) : min(e, sh.Dv - 1);
  f.vrows(e, v.j, h, b) = o.v->at({b, h, v.j, e});
  f.pv(e, ch, i, h, b) = 0.0f;
  f.pv(e, ch, i, h, b) +=
      f.p(rj, ch, i, h, b) * f.vrows(ev, clamp(key, 0, Sk - 1), h, b);

  // The running (o, m, l) per query row of a block of kQueryBlock queries.
  // Under a plain causal mask (no keep, no bias), a chunk that starts after
  // the last key the block needs only holds weights exp(fill - m) = 0: it is
  // skipped.
  Expr row = qb * kQueryBlock + ii;
  f.rc = RDom(0, sh.numChunks, ctx.base + "_chunk");
  const RDom &rc = f.rc;
  if (o.causal && !o.keep && !o.bias)
    f.rc.where(rc * C <= causalBlockLastKey(qb * kQueryBlock, sh));
  Func &acc = f.acc;
  acc(e, ii, qb, h, b) = Tuple(0.0f, kLowestScore, 0.0f);
  {
    Expr mOld = acc(e, ii, qb, h, b)[1];
    Expr bm = f.bmax(rc, row, h, b);
    Expr mNew = max(mOld, bm);
    // The first chunk starts from o = 0, l = 0: alpha is 0 and beta 1 (as
    // the general expressions give: o and l are 0, bm is the max). With the
    // CPU's one chunk, the rescaling exps (per value channel and query row)
    // are not computed at all.
    Expr later = ctx.gpu() ? Internal::const_true() : rc > 0;
    Expr alpha =
        select(later, select(mOld == mNew, 1.0f, expNeg(mOld - mNew)), 0.0f);
    Expr beta = select(later, select(bm == mNew, 1.0f, expNeg(bm - mNew)), 1.0f);
    acc(e, ii, qb, h, b) = Tuple(
        acc(e, ii, qb, h, b)[0] * alpha + f.pv(e, rc, row, h, b) * beta, mNew,
        acc(e, ii, qb, h, b)[2] * alpha + f.bsum(rc, row, h, b) * beta);
  }
  {
    Expr blk = i / kQueryBlock, in = i % kQueryBlock;
    Expr l = acc(e, in, blk, h, b)[2];
    if (ctx.gpu()) {
      f.value = select(l > 0.0f, acc(e, in, blk, h, b)[0] / l, 0.0f);
    } else {
      // One division per query row, then products (a vector division per
      // 16 value channels took ~16 cycles each).
      f.inv(ii, qb, h, b) = 1.0f / acc(0, ii, qb, h, b)[2];
      f.value = select(l > 0.0f,
                       acc(e, in, blk, h, b)[0] * f.inv(in, blk, h, b), 0.0f);
    }
  }
}

/// CPU, per chunk (at `chunk`): the scores in register tiles, the chunk
/// statistics and weights, and P V per tile of kPVRows rows (at `ao`).
void scheduleAttentionChunk(AttentionFuncs &f, const AttentionVars &v,
                            const AttentionShape &sh, bool vecE,
                            const LoopLevel &chunk, const Var &ao) {
  const Var &e = v.e, &j = v.j, &jj = v.jj, &i = v.i;
  // Scores: register tiles of kScoreRows x kScoreKeys.
  Var sjo("sjo"), sji("sji"), sio("sio"), sii("sii");
  f.raw.compute_at(chunk)
      .split(j, sjo, sji, kScoreKeys, TailStrategy::RoundUp)
      .split(i, sio, sii, kScoreRows, TailStrategy::RoundUp)
      .reorder(sji, sii, sjo, sio)
      .vectorize(sji, kVectorLanes)
      .unroll(sji)
      .unroll(sii);
  f.sacc.compute_at(f.raw, sjo)
      .bound_extent(j, kScoreKeys)
      .bound_extent(i, kScoreRows)
      .vectorize(j, kVectorLanes)
      .unroll(j)
      .unroll(i);
  f.sacc.update()
      .reorder(j, i, f.rd)
      .vectorize(j, kVectorLanes)
      .unroll(j)
      .unroll(i);

  // Chunk statistics and weights.
  f.bmax.compute_at(chunk);
  laneSums(f.bmax.update(), RVar(f.rm.x), chunk);
  f.p.compute_at(chunk).vectorize(jj, kVectorLanes, TailStrategy::RoundUp);
  f.bsum.compute_at(chunk);
  laneSums(f.bsum.update(), RVar(f.rs.x), chunk);

  // P V: kPVRows rows x Dv in registers, keys innermost but one.
  f.pv.compute_at(f.acc, ao);
  if (sh.staticDv && vecE) {
    int rounded = static_cast<int>((*sh.staticDv + kVectorLanes - 1) /
                                   kVectorLanes * kVectorLanes);
    f.pv.bound_extent(e, rounded)
        .bound_extent(i, kPVRows)
        .vectorize(e, kVectorLanes, TailStrategy::RoundUp)
        .unroll(e)
        .unroll(i);
    f.pv.update()
        .reorder(e, i, f.rj)
        .vectorize(e, kVectorLanes, TailStrategy::RoundUp)
        .unroll(e)
        .unroll(i);
  } else if (vecE) {
    f.pv.vectorize(e, kVectorLanes, TailStrategy::RoundUp);
    f.pv.update()
        .reorder(e, i, f.rj)
        .vectorize(e, kVectorLanes, TailStrategy::RoundUp);
  }
}

/// CPU: (batch, head) tasks, K^T once per task, the running state per
/// block of queries, then the per-chunk stages.
void scheduleAttentionCpu(AttentionFuncs &f, const AttentionVars &v,
                          const AttentionShape &sh) {
  const Var &e = v.e, &d = v.d, &j = v.j, &i = v.i, &ii = v.ii, &h = v.h,
            &b = v.b;
  // Tasks: (batch, head); blocks of kQueryBlock queries run inside, each
  // with its running state (acc) and the current chunk's scores.
  Var io("io"), in("in");
  f.out.split(i, io, in, kQueryBlock, TailStrategy::GuardWithIf);
  bool vecE = !sh.staticDv || *sh.staticDv >= kVectorLanes;
  if (vecE)
    f.out.vectorize(e, kVectorLanes, outputTail(sh.staticDv, kVectorLanes));
  Var task = fuseAll(f.out, {h, b}, "task");
  f.out.reorder(e, in, io, task).parallel(task);

  // K^T for the whole head, once per task: 16x16 tiles of the dense copy of
  // K, loaded along d and transposed in registers.
  Var jo("jo"), ji("ji"), dO("dO"), di("di");
  f.kt.compute_at(f.out, task);
  if (sh.staticD && *sh.staticD % kVectorLanes == 0) {
    f.kt.tile(j, d, jo, dO, ji, di, kVectorLanes, kVectorLanes,
              TailStrategy::RoundUp)
        .vectorize(ji)
        .unroll(di);
    f.kin.compute_at(f.out, task).vectorize(d, kVectorLanes);
  } else {
    f.kt.vectorize(j, kVectorLanes, TailStrategy::RoundUp);
  }

  // The head's query rows ([D, Sq]), K ([D, Sk], kin) and V ([Dv, Sk])
  // copied dense once per task, row by row: the score tiles and P V read
  // them at constant offsets, and the reads of a strided view (the head
  // split of a Q/K/V projection, rows 9 KB apart, mostly beyond L2) happen
  // in three plain row loops. BERT-base b1, attention on the views: 9.8-10.6
  // -> 9.1-9.5 ms (8.2 on dense copies, which cost 2.1 ms).
  if (sh.staticD) {
    f.qrows.compute_at(f.out, task);
    if (*sh.staticD % kVectorLanes == 0)
      f.qrows.vectorize(d, kVectorLanes);
  }
  if (sh.staticDv && *sh.staticDv % kVectorLanes == 0)
    f.vrows.compute_at(f.out, task).vectorize(e, kVectorLanes);
  f.acc.compute_at(f.out, io);
  f.inv.compute_at(f.out, io);
  if (vecE)
    f.acc.vectorize(e, kVectorLanes, TailStrategy::RoundUp);
  // The update: chunks outermost; per chunk, tiles of kPVRows query rows,
  // each with its P V product in registers.
  Var ao("ao"), ai("ai");
  f.acc.update()
      .split(ii, ao, ai, kPVRows, TailStrategy::RoundUp)
      .reorder(e, ai, ao, f.rc);
  if (vecE)
    f.acc.update().vectorize(e, kVectorLanes, TailStrategy::RoundUp);
  LoopLevel chunk(f.acc, f.rc);
  scheduleAttentionChunk(f, v, sh, vecE, chunk, ao);
  // A block's scores, weights and running state have Sk-dependent (or
  // dynamic) sizes: on the heap, each block of each task would call
  // malloc and free. In Halide's pseudostack they are allocated once per
  // task and reused by its blocks (BERT-base b1, 1 thread: the attention
  // 8.5-8.7 -> 7.5-8.1 ms, alternated).
  f.raw.store_in(MemoryType::Stack);
  f.p.store_in(MemoryType::Stack);
  f.acc.store_in(MemoryType::Stack);
}

/// The decode variant (CPU, one query row, D a multiple of 16): see the file
/// comment. Funcs over (lane, key) for the partial dot products, over (key)
/// for their sums, the scores and weights, and per (head, batch) for the softmax
/// statistics and P V; Halide order with h, b outermost.
struct DecodeFuncs {
  explicit DecodeFuncs(const KernelContext &ctx)
      : qk(ctx.func("dec_qk")), dot(ctx.func("dec_dot")),
        score(ctx.func("dec_scores")),
        smax(ctx.func("dec_max")), p(ctx.func("dec_weights")),
        ssum(ctx.func("dec_sum")), pv(ctx.func("dec_pv")) {}

  Func qk, dot, score, smax, p, ssum, pv;
  RDom rd, rl, rj;
  /// The result at (e, i, h, b).
  Expr value;
};

/// Defines the decode variant: the scores of the one query row (q k over D
/// in 16 lanes, K read as stored), one softmax over all Sk scores (max,
/// exp, sum, as one chunk of the general kernel), then P V.
void defineDecodeAttention(const KernelContext &ctx, const AttentionOperands &o,
                           const AttentionShape &sh, const AttentionVars &v,
                           DecodeFuncs &f) {
  const Var &e = v.e, &j = v.j, &h = v.h, &b = v.b;
  // The weights' vectors run past the last key.
  Expr jk = clamp(j, 0, sh.Sk - 1);
  // 16 partial dot products per key, over d = 16 do + lane.
  Var lane("lane");
  f.rd = RDom(0, sh.D / kVectorLanes, ctx.base + "_dd");
  Expr dIdx = f.rd * kVectorLanes + lane;
  f.qk(lane, j, h, b) = 0.0f;
  f.qk(lane, j, h, b) += o.q->at({b, h, 0, dIdx}) * o.k->at({b, h, jk, dIdx});
  // Their sum: one horizontal add per key (scheduled as a vector reduce).
  f.rl = RDom(0, kVectorLanes, ctx.base + "_dl");
  f.dot(j, h, b) = 0.0f;
  f.dot(j, h, b) += f.qk(f.rl, j, h, b);
  Expr score = f.dot(j, h, b) * o.scale;
  Expr allowed = applyAttentionMasks(o, sh, 0, j, h, b, score);
  f.score(j, h, b) = select(allowed, score, o.fill);

  f.rj = RDom(0, sh.Sk, ctx.base + "_dj");
  f.smax(h, b) = kLowestScore;
  f.smax(h, b) = max(f.smax(h, b), f.score(f.rj, h, b));
  f.p(j, h, b) = expNeg(f.score(j, h, b) - f.smax(h, b));
  f.ssum(h, b) = 0.0f;
  f.ssum(h, b) += f.p(f.rj, h, b);
  bool denseDv = sh.staticDv && *sh.staticDv % kVectorLanes == 0;
  Expr ev = denseDv ? Expr(e) : min(e, sh.Dv - 1);
  f.pv(e, h, b) = 0.0f;
  f.pv(e, h, b) += f.p(f.rj, h, b) * o.v->at({b, h, f.rj, ev});
  Expr l = f.ssum(h, b);
  f.value = select(l > 0.0f, f.pv(e, h, b) / l, 0.0f);
}

/// Schedules the decode variant on `stage` (`out` itself: the one-row
/// kernel): (batch, head) tasks; per task the scores key by key (the 16
/// lanes of q k in one register, then their horizontal sum), the
/// statistics and weights as vectors, and P V with the Dv channels in
/// registers.
void scheduleDecodeAttention(Func out, Stage stage, DecodeFuncs &f,
                             const AttentionVars &v, const AttentionShape &sh,
                             bool vecE) {
  const Var &e = v.e, &i = v.i, &j = v.j, &h = v.h, &b = v.b;
  if (vecE)
    stage.vectorize(e, kVectorLanes, outputTail(sh.staticDv, kVectorLanes));
  Var task = fuseAll(stage, {h, b}, "dec_task");
  stage.reorder(e, i, task).parallel(task);
  LoopLevel at(out, task);

  // Per key: its row of K in address order, the 16 lanes of q k over D
  // (4 FMAs), their horizontal sum.
  f.score.compute_at(at);
  f.dot.compute_at(f.score, j);
  f.dot.update().atomic().vectorize(RVar(f.rl.x));
  Var lane = f.qk.args()[0];
  f.qk.compute_at(f.dot, j).bound_extent(lane, kVectorLanes).vectorize(lane);
  f.qk.update().reorder(lane, f.rd).vectorize(lane).unroll(f.rd);

  f.smax.compute_at(at);
  vectorizeLanes(f.smax, RVar(f.rj.x), at);
  f.p.compute_at(at).vectorize(j, kVectorLanes, TailStrategy::RoundUp);
  f.ssum.compute_at(at);
  vectorizeLanes(f.ssum, RVar(f.rj.x), at);

  f.pv.compute_at(at);
  if (!vecE)
    return;
  if (sh.staticDv) {
    int rounded = static_cast<int>((*sh.staticDv + kVectorLanes - 1) /
                                   kVectorLanes * kVectorLanes);
    f.pv.bound_extent(e, rounded);
    f.pv.update()
        .reorder(e, f.rj)
        .vectorize(e, kVectorLanes, TailStrategy::RoundUp)
        .unroll(e);
  } else {
    f.pv.update().reorder(e, f.rj).vectorize(e, kVectorLanes,
                                             TailStrategy::RoundUp);
  }
  f.pv.vectorize(e, kVectorLanes, TailStrategy::RoundUp);
}

/// Whether the general CPU kernel is the extern stage of AttentionStage.h:
/// the options allow it, and the keep mask (if any) has one byte per
/// element.
bool attentionOnStage(const KernelContext &ctx, const AttentionOperands &o) {
  return !ctx.gpu() && ctx.options.attentionStage &&
         (!o.keep || o.keep->param.type().bytes() == 1);
}

/// The general CPU kernel as the extern stage: the output Func itself, its
/// (batch, head) loop parallel, so that each call writes one head straight
/// into the kernel's result (a copy out of a task-local block took ~15 % of
/// the stage's time in BERT-base).
Func attentionStage(const KernelContext &ctx, const AttentionOperands &o,
                    const AttentionVars &v) {
  int32_t flags = (o.keep ? kAttentionKeep : 0) |
                  (o.bias ? kAttentionBias : 0) |
                  (o.causal ? kAttentionCausal : 0);
  // Absent masks: q stands in (never read; the flags say so).
  std::vector<ExternFuncArgument> args = {o.q->param,
                                          o.k->param,
                                          o.v->param,
                                          o.keep ? o.keep->param : o.q->param,
                                          o.bias ? o.bias->param : o.q->param,
                                          Expr(flags),
                                          Expr(o.scale),
                                          Expr(o.fill)};
  Func out = ctx.func();
  out.define_extern(kAttentionSymbol, args, Float(32), {v.e, v.i, v.h, v.b});
  Var task("task");
  out.fuse(v.h, v.b, task).parallel(task);
  return out;
}

llvm::Expected<Func> buildAttention(KernelContext &ctx, FusedAttentionOp op) {
  llvm::Expected<AttentionOperands> operands = readAttentionOperands(ctx, op);
  if (!operands)
    return operands.takeError();
  AttentionShape shape = attentionShape(
      *operands, ctx.gpu() ? std::optional<int>(gpu::kAttentionKeyChunk)
                           : std::nullopt);
  AttentionVars vars;
  // The decode variant: CPU, D a multiple of 16, one query row known at
  // compile time. A dynamic Sq gets the general kernel only: the planner
  // adds a one-row kernel beside it (compiled separately, from the op with
  // Sq = 1) where a step needs one (plan/PlanBuilder.cpp, PlanStep::variant).
  // The general CPU kernel is the extern stage where the host has it.
  bool oneRow = !ctx.gpu() && shape.staticD &&
                *shape.staticD % kVectorLanes == 0 &&
                Internal::is_const_one(Internal::simplify(shape.Sq == 1));
  if (!oneRow && attentionOnStage(ctx, *operands))
    return attentionStage(ctx, *operands, vars);
  AttentionFuncs funcs(ctx);
  defineAttentionScores(ctx, *operands, shape, vars, funcs);
  defineOnlineSoftmax(ctx, *operands, shape, vars, funcs);
  const Var &e = vars.e, &i = vars.i, &h = vars.h, &b = vars.b;
  if (oneRow) {
    bool vecE = !shape.staticDv || *shape.staticDv >= kVectorLanes;
    DecodeFuncs dec(ctx);
    defineDecodeAttention(ctx, *operands, shape, vars, dec);
    funcs.out(e, i, h, b) = dec.value;
    scheduleDecodeAttention(funcs.out, funcs.out, dec, vars, shape, vecE);
    return funcs.out;
  }
  funcs.out(e, i, h, b) = funcs.value;
  if (ctx.gpu())
    gpu::scheduleAttention({funcs.kin, funcs.kt, funcs.sacc, funcs.raw,
                            funcs.bmax, funcs.p, funcs.bsum, funcs.pv,
                            funcs.acc, funcs.out, funcs.rd, funcs.rj, funcs.rc,
                            vars.e, vars.d, vars.j, vars.jj, vars.ch, vars.i,
                            vars.ii, vars.qb, vars.h, vars.b, kQueryBlock});
  else
    scheduleAttentionCpu(funcs, vars, shape);
  return funcs.out;
}

} // namespace

llvm::Expected<Func> buildFused(KernelContext &ctx) {
  if (auto linear = llvm::dyn_cast<LinearOp>(ctx.op))
    return buildLinear(ctx, linear);
  if (auto ln = llvm::dyn_cast<AddLayerNormOp>(ctx.op))
    return buildAddLayerNorm(ctx, ln);
  if (auto attention = llvm::dyn_cast<FusedAttentionOp>(ctx.op))
    return buildAttention(ctx, attention);
  return ctx.error("not a fused op");
}

} // namespace tfc::codegen
