//===- TfcCacheOps.td - key/value cache ops of the tfc dialect -*- tablegen -*-===//
//
// Ops that only the `kv-cache` pass (passes/KvCache.cpp) creates: the
// growth of a decoder's key/value cache, which the frontend spells as
// `stack([concat([past[i], new_i], axis) for i in layers], 0)`. As values
// they are pure and defined by those primitive ops; what they add is the
// fact the runtime needs to grow the cache in place: every layer's keys are
// appended to the same cache input, and the stacked result is that input
// grown by the new positions (docs/ir.md, "Cache ops"; docs/generation.md,
// "The cache"). Shape functions are in CacheOps.cpp. Included from
// TfcOps.td.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_IR_TFCCACHEOPS_TD
#define TFC_IR_TFCCACHEOPS_TD

def Tfc_KvAppendOp : Tfc_InferOp<"kv_append", [Tfc_Family<"None">, Tfc_FlopsPerElement<0>,
                                    Tfc_CustomSymbolicShape]> {
  let summary = "one layer of a key/value cache, grown by new positions";
  let description = [{
    `cache` holds every layer's cached keys (or values), stacked on axis 0:
    `[layers, ..., past, ...]` with the positions on axis `axis` (>= 1).
    The result is layer `layer` of the cache followed by `new` along the
    positions:

    ```
    result = concat([cache[layer], new], axis - 1)
    ```

    `new` has the rank of `cache[layer]` (one less than `cache`) and the
    same dimensions except the positions. The `kv-cache` pass creates it,
    together with the `tfc.kv_stack` that returns the grown cache; the
    runtime then writes `new` into the cache's own buffer after the `past`
    cached positions, and the result is a view of that buffer, not a copy
    (docs/generation.md, "The cache").

    ```mlir
    %k0 = tfc.kv_append %past_k, %new {axis = 3 : i64, layer = 0 : i64}
        : (tensor<12x?x12x?x64xf32>, tensor<?x12x?x64xf32>) -> tensor<?x12x?x64xf32>
    ```
  }];
  let arguments = (ins Tfc_FloatTensor:$cache, Tfc_FloatTensor:$new_positions,
                       I64Attr:$layer, I64Attr:$axis);
  let results = (outs Tfc_InferredTensor:$result);
  let assemblyFormat = [{
    $cache `,` $new_positions attr-dict `:` functional-type(operands, results)
  }];
  let inferredBuilders = [
    Tfc_InferredBuilder<(ins "::mlir::Value":$cache, "::mlir::Value":$newPositions,
                             "int64_t":$layer, "int64_t":$axis), [{
      $_state.addOperands({cache, newPositions});
      auto &props = $_state.getOrAddProperties<Properties>();
      props.layer = $_builder.getI64IntegerAttr(layer);
      props.axis = $_builder.getI64IntegerAttr(axis);
    }]>,
  ];
}

def Tfc_KvStackOp : Tfc_InferOp<"kv_stack", [Tfc_Family<"None">, Tfc_FlopsPerElement<0>,
                                  Tfc_CustomSymbolicShape]> {
  let summary = "a key/value cache grown by every layer's new positions";
  let description = [{
    The cache `cache` (`[layers, ..., past, ...]`) after every layer was
    grown: `layers` operands `appended`, where operand `i` is the
    `tfc.kv_append` of layer `i` to this same cache on the same `axis`.

    ```
    result = stack(appended, 0)      # [layers, ..., past + new, ...]
    ```

    The verifier requires exactly that chain (the number of layers is the
    cache's static dimension 0), because it is what lets the runtime return
    the cache's buffer itself, grown in place, as the result. An entry whose
    output is a `tfc.kv_stack` of an input declares that the output aliases
    the input (runtime/Plan.h, `PlanCache`).

    ```mlir
    %present = tfc.kv_stack %past_k, %k0, %k1 {axis = 3 : i64}
        : (tensor<2x?x12x?x64xf32>, tensor<?x12x?x64xf32>, tensor<?x12x?x64xf32>)
        -> tensor<2x?x12x?x64xf32>
    ```
  }];
  let arguments = (ins Tfc_FloatTensor:$cache,
                       Variadic<Tfc_FloatTensor>:$appended, I64Attr:$axis);
  let results = (outs Tfc_InferredTensor:$result);
  let assemblyFormat = [{
    $cache `,` $appended attr-dict `:` functional-type(operands, results)
  }];
  let inferredBuilders = [
    Tfc_InferredBuilder<(ins "::mlir::Value":$cache,
                             "::mlir::ValueRange":$appended, "int64_t":$axis), [{
      $_state.addOperands(cache);
      $_state.addOperands(appended);
      $_state.getOrAddProperties<Properties>().axis =
          $_builder.getI64IntegerAttr(axis);
    }]>,
  ];
}

#endif // TFC_IR_TFCCACHEOPS_TD
