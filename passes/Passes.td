//===- Passes.td - tfc graph passes ----------------------*- tablegen -*-===//
//
// The passes over the tfc dialect: cleanups, recognition of primitive spellings
// of LayerNorm and GELU, the fusions that create the fused ops of
// ir/TfcFusedOps.td, and the pass that prints the fusion report. Each pass is
// in its own .cpp file, whose header comment describes its algorithm;
// docs/passes.md describes them for users.
//
// All passes are op-agnostic: they rewrite everything nested in the op they
// run on (normally the module, so every entry function of the model).
//
//===----------------------------------------------------------------------===//

#ifndef TFC_PASSES_TD
#define TFC_PASSES_TD

include "mlir/Pass/PassBase.td"

def TfcSimplify : Pass<"tfc-simplify"> {
  let summary = "canonicalize, plus tfc cleanups that help the fusions";
  let description = [{
    Applies every canonicalization pattern and folder of the loaded dialects
    (what `-canonicalize` does) together with tfc-specific rewrites:
    `matmul(a, transpose(b))` with the last two axes swapped becomes
    `matmul(a, b) {transpose_b}` (and back), `where(not c, x, y)` becomes
    `where(c, y, x)`, a `concat` of adjacent slices of one tensor becomes
    one slice (or the tensor itself), and `reshape(slice(x, last axis, [a,
    b)), [..., H, D])` becomes `slice(reshape(x, [..., N / D, D]), axis -2,
    [a / D, b / D))` when D divides a, b and x's static last axis N (the
    head split after a merged Q/K/V projection: whole heads of one view).
  }];
  let dependentDialects = ["::mlir::tfc::TfcDialect"];
}

def RecognizeLayerNorm : Pass<"recognize-layernorm"> {
  let summary = "LayerNorm spelled out in primitives -> tfc.layer_norm";
  let description = [{
    Finds `(x - mean(x)) / sqrt(mean((x - mean(x))^2) + eps) * gamma + beta`
    over the last axis (also with `rsqrt` and multiplication, `x*x` for the
    square, and without gamma or beta) and replaces it with `tfc.layer_norm`.
  }];
  let dependentDialects = ["::mlir::tfc::TfcDialect"];
}

def RecognizeGelu : Pass<"recognize-gelu"> {
  let summary = "GELU spelled out in primitives -> tfc.gelu";
  let description = [{
    Finds `0.5 * x * (1 + erf(x / sqrt(2)))` (exact GELU) and
    `0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))` (tanh
    approximation), in any association of the products, and replaces them
    with `tfc.gelu` (`approximate = "tanh"` for the second).
  }];
  let dependentDialects = ["::mlir::tfc::TfcDialect"];
}

def FuseAttention : Pass<"fuse-attention"> {
  let summary = "softmax(mask(scale(Q K^T))) V -> tfc.fused_attention";
  let description = [{
    Matches scaled dot-product attention spelled out in primitives: the
    scores `matmul(Q, K^T)` (a transposed K or `transpose_b`), a scale
    (division or multiplication by a constant, on the scores or pre-applied
    to Q or K), an optional additive mask, masked fills (`tfc.where` with a
    constant fill, either polarity; `and` of masks; `tfc.causal_mask` becomes
    the `causal` flag), `softmax` over the last axis and `matmul(P, V)`.
    Fuses only when the intermediate tensors have no other users.
  }];
  let dependentDialects = ["::mlir::tfc::TfcDialect"];
}

def FuseAddLayerNorm : Pass<"fuse-add-layernorm"> {
  let summary = "layer_norm(a + b) -> tfc.add_layer_norm";
  let description = [{
    Replaces `layer_norm(a + b)` with `tfc.add_layer_norm`. When the sum has
    other users (pre-LN residual streams), the fused op is `with_sum` and
    they read its `sum` result; otherwise (post-LN) it has no sum to write.
  }];
  let dependentDialects = ["::mlir::tfc::TfcDialect"];
}

def FuseBiasActivation : Pass<"fuse-bias-activation"> {
  let summary = "act(x @ W + b) -> tfc.linear";
  let description = [{
    Replaces a matmul by a rank-2 weight, followed by the addition of a
    rank-1 bias over the last axis and/or a relu, gelu (either form) or silu,
    with one `tfc.linear`.
  }];
  let dependentDialects = ["::mlir::tfc::TfcDialect"];
}

def MergeQKV : Pass<"merge-qkv"> {
  let summary = "projections of one input -> one linear on concatenated weights";
  let description = [{
    Merges two or more `tfc.linear` (or matmul by a weight) of the same input,
    whose weights are parameters (or slices of them) of the same shape and
    layer, into one `tfc.linear` on the concatenated weights, followed by one
    `tfc.slice` per original projection (Q, K and V of attention).
  }];
  let dependentDialects = ["::mlir::tfc::TfcDialect"];
}

def DeadCodeElimination : Pass<"dce"> {
  let summary = "erase ops whose results are unused";
  let description = [{
    Erases every side-effect-free op whose results have no users, in reverse
    program order so that whole dead chains go in one sweep
    (`mlir::isOpTriviallyDead`).
  }];
}

def PrintFusionReport : Pass<"tfc-fusion-report", "::mlir::ModuleOp"> {
  let summary = "Print the fusion report of the module to stdout";
  let description = [{
    Prints `tfc::buildFusionReport` of the module (passes/FusionReport.h):
    per layer what fused and, for what did not, the op that blocked it. Reads
    the module only. For lit tests of the report; `tfc dump --fusion-report`
    is the user's way.
  }];
  let options = [
    ListOption<"disabled", "disabled", "std::string",
               "Passes that were disabled (the report then says so)">
  ];
}

def WeightLayout : Pass<"weight-layout", "::mlir::ModuleOp"> {
  let summary = "product weights -> column panels laid out once, where free";
  let description = [{
    Makes every `tfc.matmul` / `tfc.linear` on a static rank-2 weight
    (computed from parameters and constants alone) read
    `tfc.pack_panels(w)` (`[ceil(N / 48), K, 48]`, with the product's
    `transpose_b`) with `packed_n = N` instead: a weight-only step that the
    runtime computes once, so that the matmul kernels read each panel of 48
    columns as one stream and copy no panel per call. A weight of fewer than
    48 columns is read as `[K, N]` (`tfc.transpose(w)` for a `transpose_b`
    product). A weight whose parameters are also read by anything other than
    such products (GPT-2's tied LM head: `wte` is gathered by the embedding)
    is left as it is, so that no second copy is kept next to it. Runs on the
    module: every entry's readers of a checkpoint tensor count. Must run
    after the last `tfc-simplify`, which folds `matmul(x, transpose(w))` back
    into `transpose_b`.
  }];
  let dependentDialects = ["::mlir::tfc::TfcDialect"];
}

def Bf16Weights : Pass<"bf16-weights", "::mlir::ModuleOp"> {
  let summary = "product weights -> bf16 panels (--dtype bf16)";
  let description = [{
    Makes every `tfc.matmul` / `tfc.linear` whose weight is a static rank-2
    f32 value computed from parameters and constants alone, or the f32
    panels of one, read `tfc.pack_panels(tfc.cast(w) : bf16)` (pairs of K
    side by side, `[ceil(N / 48), K / 2, 48, 2]`) with `packed_n = N`:
    weight-only steps the runtime computes once. Weights with an odd K or
    fewer than 48 columns stay f32. The kernels multiply bf16 pairs with f32
    accumulation (AVX512_BF16). Not part of the default pipeline: run when
    `--dtype bf16` asks for it, after `weight-layout`.
  }];
  let dependentDialects = ["::mlir::tfc::TfcDialect"];
}

def KvCache : Pass<"kv-cache"> {
  let summary = "stack(concat(past[i], new_i)) -> in-place tfc.kv_append/kv_stack";
  let description = [{
    Finds the key/value cache growth of a decoder entry: an entry result
    `present = stack([concat([past[i], new_i], axis) for i in 0..layers], 0)`
    (as the frontend spells it: `tfc.concat` on axis 0 of leading-1
    `tfc.reshape`s of the per-layer concats, `past[i]` a `tfc.slice` of
    layer i plus a `tfc.reshape` that drops the layer axis) where `past` is an
    argument of the entry (a `func.func` in the op the pass runs on). Each
    per-layer concat becomes `tfc.kv_append past, new_i {layer = i}` and the stack `tfc.kv_stack past, ...`, which tells
    the runtime that the result is `past` grown in place (the plan records
    the output as an alias of the input; see docs/generation.md). Each
    argument is grown at most once; anything else is left alone.
  }];
  let dependentDialects = ["::mlir::tfc::TfcDialect"];
}

#endif // TFC_PASSES_TD
