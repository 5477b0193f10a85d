//===- TfcFusedOps.td - fused ops of the tfc dialect -----*- tablegen -*-===//
//
// Ops that only the fusion passes (passes/) create: each replaces a group of
// primitive ops the frontend emits. Their semantics are defined exactly in
// terms of the primitive ops (docs/ir.md, "Fused ops"), so that a codegen
// kernel and the unfused graph compute the same function. Shape functions
// are at the end of ShapeInference.cpp. Included from TfcOps.td.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_IR_TFCFUSEDOPS_TD
#define TFC_IR_TFCFUSEDOPS_TD

//===----------------------------------------------------------------------===//
// tfc.fused_attention
//===----------------------------------------------------------------------===//

def Tfc_FusedAttentionOp
    : Tfc_InferOp<"fused_attention", [AttrSizedOperandSegments,
          Tfc_Family<"Fused">, Tfc_CustomFlops, Tfc_CustomSymbolicShape]> {
  let summary = "scaled dot-product attention";
  let description = [{
    Scaled dot-product attention over per-head tensors, as one op:

    ```
    s[b,h,i,j] = scale * sum_d q[b,h,i,d] * k[b,h,j,d]  (+ bias[b,h,i,j])
    allowed    = keep[b,h,i,j] && (!causal || j <= i + (Sk - Sq))
    s'         = allowed ? s : fill
    result     = softmax_j(s') @ v          (softmax subtracts the row max)
    ```

    - `q` is `[B, H, Sq, D]`, `k` is `[B, H, Sk, D]`, `v` is `[B, H, Sk, Dv]`,
      all f32 and of rank 4. Dimensions may be dynamic; where two operands
      both give a dimension statically, they must agree (no broadcasting of
      B and H).
    - `scale` multiplies the scores: attention that divides by `sqrt(D)` has
      `scale = 1 / sqrt(D)`.
    - `keep` (optional, i1) broadcasts to `[B, H, Sq, Sk]` by numpy rules
      (e.g. a padding mask `[B, 1, 1, Sk]`, or a `[Sq, Sk]` matrix); true
      means "attend". Absent means all true.
    - `causal` adds the causal condition of `tfc.causal_mask`: query `i` sees
      key `j` iff `j <= i + (Sk - Sq)`, i.e. the queries are the last `Sq` of
      the `Sk` positions (prefill: `Sq == Sk`; decode with a KV cache:
      `Sq < Sk`).
    - `bias` (optional, f32) is an additive attention bias (an additive mask
      such as `(1 - mask) * -10000`), broadcast to `[B, H, Sq, Sk]` by numpy
      rules and added to the scaled scores before masking.
    - `fill` replaces the scores of positions not allowed (default `-1e9`,
      the masked_fill value of the reference implementations). A row with no
      allowed position therefore gets uniform weights, exactly as the
      unfused graph computes it.

    The result is `[B, H, Sq, Dv]`. The op is produced by `fuse-attention`
    from `softmax(where(keep, matmul(q, k^T) * scale, fill)) @ v` and its
    variants; the head split/merge reshapes and transposes stay outside.

    ```mlir
    %o = tfc.fused_attention %q, %k, %v {causal = true, scale = 1.250000e-01 : f64}
        : (tensor<?x12x?x64xf32>, tensor<?x12x?x64xf32>, tensor<?x12x?x64xf32>) -> tensor<?x12x?x64xf32>
    %o = tfc.fused_attention %q, %k, %v keep(%m) {scale = 1.250000e-01 : f64}
        : (tensor<?x12x?x64xf32>, tensor<?x12x?x64xf32>, tensor<?x12x?x64xf32>, tensor<?x1x1x?xi1>) -> tensor<?x12x?x64xf32>
    ```
  }];
  let arguments = (ins Tfc_FloatTensor:$q, Tfc_FloatTensor:$k,
                       Tfc_FloatTensor:$v,
                       Optional<Tfc_BoolTensor>:$keep,
                       Optional<Tfc_FloatTensor>:$bias,
                       F64Attr:$scale,
                       DefaultValuedAttr<BoolAttr, "false">:$causal,
                       DefaultValuedAttr<F64Attr, "-1.0e9">:$fill);
  let results = (outs Tfc_InferredTensor:$result);
  let assemblyFormat = [{
    $q `,` $k `,` $v (`keep` `(` $keep^ `)`)? (`bias` `(` $bias^ `)`)?
    attr-dict `:` functional-type(operands, results)
  }];
  let inferredBuilders = [
    // `keep` and `bias` may be null (absent).
    Tfc_InferredBuilder<(ins "::mlir::Value":$q, "::mlir::Value":$k,
                             "::mlir::Value":$v, "::mlir::Value":$keep,
                             "::mlir::Value":$bias, "double":$scale,
                             CArg<"bool", "false">:$causal,
                             CArg<"double", "-1.0e9">:$fill), [{
      $_state.addOperands({q, k, v});
      if (keep)
        $_state.addOperands(keep);
      if (bias)
        $_state.addOperands(bias);
      auto &props = $_state.getOrAddProperties<Properties>();
      props.operandSegmentSizes = {1, 1, 1, keep ? 1 : 0, bias ? 1 : 0};
      props.scale = $_builder.getF64FloatAttr(scale);
      props.causal = $_builder.getBoolAttr(causal);
      props.fill = $_builder.getF64FloatAttr(fill);
    }]>,
  ];
}

//===----------------------------------------------------------------------===//
// tfc.add_layer_norm
//===----------------------------------------------------------------------===//

// The FLOPs: 1 for the add, 8 for the layer norm (tfc.layer_norm's).
def Tfc_AddLayerNormOp : Tfc_InferOp<"add_layer_norm", [Tfc_Family<"Fused">,
     Tfc_FlopsPerElement<9>, Tfc_BroadcastShape]> {
  let summary = "residual add followed by layer normalization";
  let description = [{
    One or two results:

    - `output = layer_norm(a + b, gamma, beta, epsilon)` over the last
      axis, exactly as `tfc.layer_norm` (biased variance), with `a + b`
      broadcasting like `tfc.add`;
    - with `with_sum`, also `sum = a + b` (the residual stream).

    `gamma` and `beta` are rank 1 and as long as the last dimension of the
    sum. The results have the broadcast type of `a` and `b`. Pre-LN layers
    (GPT-2: `x = x + attn; h = LN(x)`) also use the sum as the next
    residual, so it is written once and never recomputed; post-LN layers
    (BERT: `LN(x + sublayer(x))`) use only `output`, and their kernel writes
    nothing else.

    ```mlir
    %y, %s = tfc.add_layer_norm %x, %attn, %g, %b
        {epsilon = 1.0e-05 : f64, with_sum}
        : (tensor<?x?x768xf32>, tensor<?x?x768xf32>, tensor<768xf32>, tensor<768xf32>)
        -> (tensor<?x?x768xf32>, tensor<?x?x768xf32>)
    %z = tfc.add_layer_norm %x, %ffn, %g, %b {epsilon = 1.0e-12 : f64}
        : (tensor<?x?x768xf32>, tensor<?x?x768xf32>, tensor<768xf32>, tensor<768xf32>)
        -> tensor<?x?x768xf32>
    ```
  }];
  let arguments = (ins Tfc_FloatTensor:$a, Tfc_FloatTensor:$b,
                       Tfc_FloatTensor:$gamma, Tfc_FloatTensor:$beta,
                       F64Attr:$epsilon, UnitAttr:$with_sum);
  let results = (outs Tfc_InferredTensor:$output,
                      Optional<Tfc_InferredTensor>:$sum);
  let assemblyFormat = [{
    $a `,` $b `,` $gamma `,` $beta attr-dict `:`
    functional-type(operands, results)
  }];
  let inferredBuilders = [
    Tfc_InferredBuilder<(ins "::mlir::Value":$a, "::mlir::Value":$b,
                             "::mlir::Value":$gamma, "::mlir::Value":$beta,
                             "double":$epsilon, "bool":$withSum), [{
      $_state.addOperands({a, b, gamma, beta});
      auto &props = $_state.getOrAddProperties<Properties>();
      props.epsilon = $_builder.getF64FloatAttr(epsilon);
      if (withSum)
        props.with_sum = $_builder.getUnitAttr();
    }]>,
  ];
}

//===----------------------------------------------------------------------===//
// tfc.linear
//===----------------------------------------------------------------------===//

def Tfc_LinearOp : Tfc_InferOp<"linear", [Tfc_Family<"Fused">, Tfc_CustomFlops,
                                          Tfc_CustomSymbolicShape]> {
  let summary = "matmul with a fused bias and activation epilogue";
  let description = [{
    `activation(matmul(x, w, transpose_b) + bias)`:

    - `x` is `[..., M, K]` (rank >= 2, like `tfc.matmul`'s lhs);
    - `w` is a rank-2 weight, `[K, N]`, or `[N, K]` when `transpose_b` is
      set (nn.Linear's stored layout); f32, or bf16 under `--dtype bf16`
      (products then round `x` to bf16 and accumulate in f32);
    - or, with `packed_n = N`, `w` is laid out in column panels by
      `tfc.pack_panels` (`[ceil(N / 48), K, 48]`; bf16
      `[ceil(N / 48), K / 2, 48, 2]`), without `transpose_b`;
    - `bias` (optional) is rank 1 of length `N`, added to every row;
    - `activation` is one of `"none"` (default), `"relu"`, `"gelu"` (exact,
      erf: `tfc.gelu`), `"gelu_tanh"` (`tfc.gelu {approximate = "tanh"}`)
      and `"silu"`.

    The result is `[..., M, N]`. Produced by `fuse-bias-activation` from
    `act(x @ w + b)`; `merge-qkv` creates one on concatenated weights.

    ```mlir
    %h = tfc.linear %x, %w, %b {activation = "gelu", transpose_b = true}
        : (tensor<?x?x768xf32>, tensor<3072x768xf32>, tensor<3072xf32>) -> tensor<?x?x3072xf32>
    ```
  }];
  let arguments = (ins Tfc_FloatTensor:$x, Tfc_WeightTensor:$w,
                       Optional<Tfc_FloatTensor>:$bias,
                       DefaultValuedAttr<BoolAttr, "false">:$transpose_b,
                       DefaultValuedStrAttr<StrAttr, "none">:$activation,
                       OptionalAttr<I64Attr>:$packed_n);
  let results = (outs Tfc_InferredTensor:$result);
  let assemblyFormat = [{
    $x `,` $w (`,` $bias^)? attr-dict `:` functional-type(operands, results)
  }];
  let inferredBuilders = [
    // `bias` may be null (absent).
    Tfc_InferredBuilder<(ins "::mlir::Value":$x, "::mlir::Value":$w,
                             "::mlir::Value":$bias, "bool":$transpose_b,
                             CArg<"::llvm::StringRef", "\"none\"">
                               :$activation), [{
      $_state.addOperands({x, w});
      if (bias)
        $_state.addOperands(bias);
      auto &props = $_state.getOrAddProperties<Properties>();
      props.transpose_b = $_builder.getBoolAttr(transpose_b);
      props.activation = $_builder.getStringAttr(activation);
    }]>,
  ];
}

#endif // TFC_IR_TFCFUSEDOPS_TD
