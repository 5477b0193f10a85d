//===- TfcOps.td - primitive ops of the tfc dialect ------*- tablegen -*-===//
//
// The primitive ops the frontend (MLIRGen) emits, one per construct of the
// .tfm language. Their shape functions are in ShapeInference.cpp; the
// broadcasting rule is in Broadcast.cpp. Fused ops, produced only by the
// fusion passes, go into their own file included at the end of this one.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_IR_TFCOPS_TD
#define TFC_IR_TFCOPS_TD

include "ir/TfcDialect.td"

//===----------------------------------------------------------------------===//
// Values: parameters and constants
//===----------------------------------------------------------------------===//

def Tfc_ParamOp : Tfc_Op<"param", [Tfc_Family<"None">,
                                   Tfc_FlopsPerElement<0>, Tfc_StaticShape]> {
  let summary = "a weight bound to a checkpoint tensor";
  let description = [{
    The value of the checkpoint tensor `name` (the name as stored in the
    `.safetensors` file, e.g. `h.0.attn.c_attn.weight`). Weights are not baked
    into the IR: the runtime binds them by name when the model is loaded, and
    checks the checkpoint's shape against the result type, which must
    therefore be fully static.

    ```mlir
    %w = tfc.param "h.0.ln_1.weight" : tensor<768xf32>
    ```
  }];
  let arguments = (ins StrAttr:$name);
  let results = (outs Tfc_AnyTensor:$result);
  let assemblyFormat = "$name attr-dict `:` type($result)";
  let hasVerifier = 1;
  // Written out because ODS's generic builder aborts on a mistyped attribute.
  let skipDefaultBuilders = 1;
  let builders = [
    OpBuilder<(ins "::mlir::Type":$type, "::llvm::StringRef":$name), [{
      $_state.addTypes(type);
      $_state.getOrAddProperties<Properties>().name =
          $_builder.getStringAttr(name);
    }]>,
    OpBuilder<(ins "::mlir::TypeRange":$resultTypes,
                   "::mlir::ValueRange":$operands,
                   CArg<"::llvm::ArrayRef<::mlir::NamedAttribute>", "{}">
                     :$attributes), [{
      $_state.addOperands(operands);
      $_state.addAttributes(attributes);
      $_state.addTypes(resultTypes);
      ::mlir::tfc::detail::attributesToProperties<ConcreteOpType>($_state);
    }]>,
  ];
}

def Tfc_ConstantOp : Tfc_InferOp<"constant", [ConstantLike, Tfc_Family<"None">,
                                             Tfc_FlopsPerElement<0>,
                                             Tfc_StaticShape]> {
  let summary = "a constant tensor";
  let description = [{
    A tensor given by its elements; the result type is the attribute's type.
    Scalars are rank-0 tensors and broadcast like any other operand.

    ```mlir
    %c = tfc.constant dense<0.125> : tensor<f32>
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs Tfc_InferredTensor:$result);
  let assemblyFormat = "attr-dict $value";
  let inferredBuilders = [
    Tfc_InferredBuilder<(ins "::mlir::ElementsAttr":$value), [{
      $_state.getOrAddProperties<Properties>().value = value;
    }]>,
  ];
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Binary elementwise ops (numpy broadcasting)
//===----------------------------------------------------------------------===//

defvar BroadcastDoc = [{

    The operands broadcast like numpy: shapes are aligned on the right; a pair
    of dimensions must be equal or one of them 1, and the result takes the
    other one. A dynamic dimension paired with 1 or with another dynamic one
    stays dynamic; paired with a static n > 1 it is taken to be n. Element
    types must be equal.
}];

// `flops`: FLOPs per result element (TfcInterfaces.td).
class Tfc_BinaryOp<string mnemonic, Type operandType, string what, int flops,
                   list<Trait> traits = []>
    : Tfc_InferOp<mnemonic, !listconcat(traits, [Tfc_Family<"Elementwise">,
          Tfc_FlopsPerElement<flops>, Tfc_BroadcastShape])> {
  let summary = "elementwise " # what;
  let description = "Elementwise " # what # " of two tensors."
                    # BroadcastDoc # [{

    ```mlir
    %r = tfc.}] # mnemonic # [{ %a, %b : (tensor<?x?x768xf32>, tensor<768xf32>) -> tensor<?x?x768xf32>
    ```
  }];
  let arguments = (ins operandType:$lhs, operandType:$rhs);
  let results = (outs Tfc_InferredTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` functional-type(operands, results)
  }];
  let inferredBuilders = [
    Tfc_InferredBuilder<(ins "::mlir::Value":$lhs, "::mlir::Value":$rhs), [{
      $_state.addOperands(lhs);
      $_state.addOperands(rhs);
    }]>,
  ];
}

def Tfc_AddOp : Tfc_BinaryOp<"add", Tfc_NumericTensor, "sum", 1,
                             [Commutative]>;
def Tfc_SubOp : Tfc_BinaryOp<"sub", Tfc_NumericTensor, "difference", 1>;
def Tfc_MulOp : Tfc_BinaryOp<"mul", Tfc_NumericTensor, "product", 1,
                             [Commutative]>;
def Tfc_DivOp : Tfc_BinaryOp<"div", Tfc_NumericTensor,
                             "quotient (integers: truncating)", 1> {
  let description = "Elementwise quotient of two tensors." # BroadcastDoc # [{

    Floats divide as IEEE does. Integers divide truncating toward zero (C,
    PyTorch's `rounding_mode="trunc"`), and never trap: `x / 0` is 0 (as in
    Halide) and `INT_MIN / -1` wraps to `INT_MIN` (two's complement), for i32
    and i64 alike. docs/runtime.md states the same rule.

    ```mlir
    %r = tfc.div %a, %b : (tensor<?x?x768xf32>, tensor<768xf32>) -> tensor<?x?x768xf32>
    ```
  }];
}
def Tfc_PowOp : Tfc_BinaryOp<"pow", Tfc_FloatTensor, "power `lhs ^ rhs`", 1>;
def Tfc_MaximumOp : Tfc_BinaryOp<"maximum", Tfc_NumericTensor, "maximum", 1,
                                 [Commutative]>;
def Tfc_MinimumOp : Tfc_BinaryOp<"minimum", Tfc_NumericTensor, "minimum", 1,
                                 [Commutative]>;
def Tfc_AndOp : Tfc_BinaryOp<"and", Tfc_BoolTensor, "logical and", 0,
                             [Commutative]>;
def Tfc_OrOp : Tfc_BinaryOp<"or", Tfc_BoolTensor, "logical or", 0,
                            [Commutative]>;

// The C++ view of tfc.cmp's predicate (symbolizeCmpPredicate,
// stringifyCmpPredicate). The attribute itself is a string, readable in the
// generic form too.
def Tfc_CmpPredicate : I64EnumAttr<"CmpPredicate", "comparison predicate", [
  I64EnumAttrCase<"eq", 0>,
  I64EnumAttrCase<"ne", 1>,
  I64EnumAttrCase<"lt", 2>,
  I64EnumAttrCase<"le", 3>,
  I64EnumAttrCase<"gt", 4>,
  I64EnumAttrCase<"ge", 5>,
]> {
  let cppNamespace = "::mlir::tfc";
  let genSpecializedAttr = 0;
}

def Tfc_CmpOp : Tfc_InferOp<"cmp", [Tfc_Family<"Elementwise">,
                                    Tfc_FlopsPerElement<0>, Tfc_BroadcastShape]> {
  let summary = "elementwise comparison";
  let description = [{
    Compares two tensors elementwise with `predicate`: one of `eq`, `ne`,
    `lt`, `le`, `gt`, `ge` (signed for integers, ordered for floats: a NaN
    compares false except under `ne`). The result is an `i1` tensor of the
    broadcast shape.}] # BroadcastDoc # [{

    ```mlir
    %m = tfc.cmp eq, %ids, %pad : (tensor<?x?xi32>, tensor<i32>) -> tensor<?x?xi1>
    // generic form: "tfc.cmp"(%ids, %pad) <{predicate = "eq"}> : ...
    ```
  }];
  let arguments = (ins StrAttr:$predicate, Tfc_AnyTensor:$lhs,
                       Tfc_AnyTensor:$rhs);
  let results = (outs Tfc_InferredTensor:$result);
  let assemblyFormat = [{
    custom<CmpPredicate>($predicate) `,` $lhs `,` $rhs attr-dict `:`
    functional-type(operands, results)
  }];
  let inferredBuilders = [
    Tfc_InferredBuilder<(ins "::mlir::tfc::CmpPredicate":$predicate,
                             "::mlir::Value":$lhs, "::mlir::Value":$rhs), [{
      $_state.addOperands(lhs);
      $_state.addOperands(rhs);
      $_state.getOrAddProperties<Properties>().predicate =
          $_builder.getStringAttr(
              ::mlir::tfc::stringifyCmpPredicate(predicate));
    }]>,
  ];
  let extraClassDeclaration = inferShapeDecl # [{
    /// The predicate as an enum; empty only on IR that does not verify.
    std::optional<::mlir::tfc::CmpPredicate> getPredicateKind() {
      return ::mlir::tfc::symbolizeCmpPredicate(getPredicate());
    }
  }];
}

def Tfc_WhereOp : Tfc_InferOp<"where", [Tfc_Family<"Elementwise">,
                                        Tfc_FlopsPerElement<1>,
                                        Tfc_BroadcastShape]> {
  let summary = "elementwise select";
  let description = [{
    `on_true` where `condition` holds, else `on_false` (masked fill). All
    three operands broadcast together (numpy rules, see `tfc.add`);
    `on_true` and `on_false` have the same element type, which is the
    result's.

    ```mlir
    %s = tfc.where %mask, %scores, %neg_inf
        : (tensor<?x?xi1>, tensor<?x12x?x?xf32>, tensor<f32>) -> tensor<?x12x?x?xf32>
    ```
  }];
  let arguments = (ins Tfc_BoolTensor:$condition, Tfc_AnyTensor:$on_true,
                       Tfc_AnyTensor:$on_false);
  let results = (outs Tfc_InferredTensor:$result);
  let assemblyFormat = [{
    $condition `,` $on_true `,` $on_false attr-dict `:`
    functional-type(operands, results)
  }];
  let inferredBuilders = [
    Tfc_InferredBuilder<(ins "::mlir::Value":$condition,
                             "::mlir::Value":$on_true,
                             "::mlir::Value":$on_false), [{
      $_state.addOperands(condition);
      $_state.addOperands(on_true);
      $_state.addOperands(on_false);
    }]>,
  ];
}

//===----------------------------------------------------------------------===//
// Unary elementwise ops
//===----------------------------------------------------------------------===//

// `flops`: FLOPs per result element (TfcInterfaces.td).
class Tfc_UnaryOp<string mnemonic, Type type, string what, int flops,
                  list<Trait> traits = []>
    : Tfc_InferOp<mnemonic, !listconcat(traits, [Tfc_Family<"Elementwise">,
          Tfc_FlopsPerElement<flops>, Tfc_ShapeOfOperand<0>])> {
  let summary = "elementwise " # what;
  let description = "Elementwise " # what # [{; the result has the type of the
    operand.

    ```mlir
    %r = tfc.}] # mnemonic # [{ %x : tensor<?x?x768xf32>
    ```
  }];
  let arguments = (ins type:$input);
  let results = (outs type:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let inferredBuilders = [
    Tfc_InferredBuilder<(ins "::mlir::Value":$input), [{
      $_state.addOperands(input);
    }]>,
  ];
}

def Tfc_NegOp : Tfc_UnaryOp<"neg", Tfc_NumericTensor, "negation", 1>;
def Tfc_ExpOp : Tfc_UnaryOp<"exp", Tfc_FloatTensor, "exponential", 1>;
def Tfc_LogOp : Tfc_UnaryOp<"log", Tfc_FloatTensor, "natural logarithm", 1>;
def Tfc_SqrtOp : Tfc_UnaryOp<"sqrt", Tfc_FloatTensor, "square root", 1>;
def Tfc_RsqrtOp : Tfc_UnaryOp<"rsqrt", Tfc_FloatTensor,
                              "reciprocal square root `1 / sqrt(x)`", 1>;
def Tfc_TanhOp : Tfc_UnaryOp<"tanh", Tfc_FloatTensor, "hyperbolic tangent", 1>;
def Tfc_ErfOp : Tfc_UnaryOp<"erf", Tfc_FloatTensor, "error function", 1>;
def Tfc_ReluOp : Tfc_UnaryOp<"relu", Tfc_FloatTensor, "`max(x, 0)`", 1>;
def Tfc_SiluOp : Tfc_UnaryOp<"silu", Tfc_FloatTensor,
                             "SiLU (swish) `x * sigmoid(x)`", 4>;
def Tfc_SigmoidOp : Tfc_UnaryOp<"sigmoid", Tfc_FloatTensor,
                                "logistic sigmoid `1 / (1 + exp(-x))`", 3>;
def Tfc_SinOp : Tfc_UnaryOp<"sin", Tfc_FloatTensor, "sine", 1>;
def Tfc_CosOp : Tfc_UnaryOp<"cos", Tfc_FloatTensor, "cosine", 1>;
def Tfc_NotOp : Tfc_UnaryOp<"not", Tfc_BoolTensor, "logical negation", 0>;
def Tfc_AbsOp : Tfc_UnaryOp<"abs", Tfc_FloatTensor, "absolute value", 1>;

def Tfc_GeluOp : Tfc_UnaryOp<"gelu", Tfc_FloatTensor, "GELU", 8> {
  let description = [{
    Elementwise GELU. `approximate = "none"` (the default) is the exact form
    `0.5 * x * (1 + erf(x / sqrt(2)))` of BERT; `approximate = "tanh"` is
    `0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))` of GPT-2
    (`gelu_new`). The result has the type of the operand.

    ```mlir
    %r = tfc.gelu %x {approximate = "tanh"} : tensor<?x?x3072xf32>
    ```
  }];
  let arguments = (ins Tfc_FloatTensor:$input,
                       DefaultValuedStrAttr<StrAttr, "none">:$approximate);
  let inferredBuilders = [
    Tfc_InferredBuilder<(ins "::mlir::Value":$input,
                             CArg<"::llvm::StringRef", "\"none\"">
                               :$approximate), [{
      $_state.addOperands(input);
      $_state.getOrAddProperties<Properties>().approximate =
          $_builder.getStringAttr(approximate);
    }]>,
  ];
}

def Tfc_CastOp : Tfc_Op<"cast", [Tfc_Family<"Elementwise">,
                                 Tfc_FlopsPerElement<0>,
                                 Tfc_ShapeOfOperand<0>]> {
  let summary = "element type conversion";
  let description = [{
    Converts each element to the element type of the result; the shape does
    not change. i1 converts to 0/1, floats to integers truncate toward zero,
    integers or floats to i1 test for non-zero.

    ```mlir
    %f = tfc.cast %mask : tensor<?x?xi1> to tensor<?x?xf32>
    ```

    f32 to bf16 rounds to nearest, ties to even (product weights under
    `--dtype bf16`; bf16 is only accepted between f32 and bf16).
  }];
  let arguments = (ins Tfc_CastableTensor:$input);
  let results = (outs Tfc_CastableTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `to` type($result)";
  let builders = [
    // The result keeps the input's shape and takes `elementType`.
    OpBuilder<(ins "::mlir::Value":$input, "::mlir::Type":$elementType)>,
  ];
  let hasVerifier = 1;
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Linear algebra
//===----------------------------------------------------------------------===//

def Tfc_MatmulOp : Tfc_InferOp<"matmul", [Tfc_Family<"Matmul">, Tfc_CustomFlops,
                                          Tfc_CustomSymbolicShape]> {
  let summary = "batched matrix product";
  let description = [{
    `lhs` is `[..., M, K]`; `rhs` is `[..., K, N]`, or `[..., N, K]` when
    `transpose_b` is set (nn.Linear's stored layout, and `Q @ K^T`). Both have
    rank >= 2. The batch dimensions (all but the last two) broadcast like
    `tfc.add`'s operands, so a rank-2 weight multiplies every batch. The
    result is `[batch..., M, N]`. The contraction dimensions must agree where
    both are static. `lhs` is f32; `rhs` is f32, or a rank-2 bf16 weight
    (`--dtype bf16`): products then round `lhs` to bf16 and accumulate in
    f32.

    With `packed_n = N`, `rhs` is a weight in the CPU kernels' column
    panels, as `tfc.pack_panels` lays it out (`[ceil(N / 48), K, 48]`, or
    `[ceil(N / 48), K / 2, 48, 2]` in bf16) and N is the result's last
    dimension; `transpose_b` is then false. Set by `weight-layout`.

    ```mlir
    %y = tfc.matmul %x, %w : (tensor<?x?x768xf32>, tensor<768x2304xf32>) -> tensor<?x?x2304xf32>
    %s = tfc.matmul %q, %k {transpose_b = true}
        : (tensor<?x12x?x64xf32>, tensor<?x12x?x64xf32>) -> tensor<?x12x?x?xf32>
    ```
  }];
  let arguments = (ins Tfc_FloatTensor:$lhs, Tfc_WeightTensor:$rhs,
                       DefaultValuedAttr<BoolAttr, "false">:$transpose_b,
                       OptionalAttr<I64Attr>:$packed_n);
  let results = (outs Tfc_InferredTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` functional-type(operands, results)
  }];
  let inferredBuilders = [
    Tfc_InferredBuilder<(ins "::mlir::Value":$lhs, "::mlir::Value":$rhs,
                             CArg<"bool", "false">:$transpose_b), [{
      $_state.addOperands(lhs);
      $_state.addOperands(rhs);
      $_state.getOrAddProperties<Properties>().transpose_b =
          $_builder.getBoolAttr(transpose_b);
    }]>,
  ];
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

def Tfc_PackPanelsOp : Tfc_InferOp<"pack_panels",
    [Tfc_Family<"DataMovement">, Tfc_FlopsPerElement<0>, Tfc_StaticShape]> {
  let summary = "a product weight laid out in the CPU kernels' column panels";
  let description = [{
    Lays out a static rank-2 weight, `[K, N]` (or `[N, K]` with
    `transpose_b`, nn.Linear's stored layout), in column panels of 48
    (`kPanelColumns`: the CPU matmul kernels' register tile, 3 AVX-512
    vectors) so that a kernel reads each panel as one contiguous stream:

    - f32: `[ceil(N / 48), K, 48]`, `result[p, k, j] = w[k, 48 p + j]`;
    - bf16 (K even): `[ceil(N / 48), K / 2, 48, 2]`,
      `result[p, k2, j, i] = w[2 k2 + i, 48 p + j]`: the pairs of K that
      `vdpbf16ps` multiplies lie side by side.

    Columns past N (the last panel's tail) are zero. Only a `tfc.matmul` or
    `tfc.linear` with `packed_n = N` reads the result; it is a weight-only
    step, which the runtime computes once (the weight prologue). Created by
    `weight-layout` (f32) and `bf16-weights`.

    ```mlir
    %p = tfc.pack_panels %w {transpose_b = true}
        : tensor<3072x768xf32> -> tensor<64x768x48xf32>
    ```
  }];
  let arguments = (ins Tfc_WeightTensor:$input,
                       DefaultValuedAttr<BoolAttr, "false">:$transpose_b);
  let results = (outs Tfc_InferredTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let inferredBuilders = [
    Tfc_InferredBuilder<(ins "::mlir::Value":$input,
                             CArg<"bool", "false">:$transpose_b), [{
      $_state.addOperands(input);
      $_state.getOrAddProperties<Properties>().transpose_b =
          $_builder.getBoolAttr(transpose_b);
    }]>,
  ];
}

def Tfc_TransposeOp : Tfc_InferOp<"transpose",
    [Tfc_Family<"DataMovement">, Tfc_FlopsPerElement<0>,
     Tfc_CustomSymbolicShape]> {
  let summary = "permutation of dimensions";
  let description = [{
    Result dimension `i` is input dimension `perm[i]`; `perm` is a
    permutation of `0 .. rank-1`.

    ```mlir
    %t = tfc.transpose %x {perm = array<i64: 0, 2, 1, 3>}
        : tensor<?x?x12x64xf32> -> tensor<?x12x?x64xf32>
    ```
  }];
  let arguments = (ins Tfc_AnyTensor:$input, DenseI64ArrayAttr:$perm);
  let results = (outs Tfc_InferredTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let inferredBuilders = [
    Tfc_InferredBuilder<(ins "::mlir::Value":$input,
                             "::llvm::ArrayRef<int64_t>":$perm), [{
      $_state.addOperands(input);
      $_state.getOrAddProperties<Properties>().perm =
          $_builder.getDenseI64ArrayAttr(perm);
    }]>,
  ];
  let hasFolder = 1;
}

def Tfc_ReshapeOp : Tfc_InferOp<"reshape", [Tfc_Family<"View">,
     Tfc_FlopsPerElement<0>, Tfc_CustomSymbolicShape]> {
  let summary = "regrouping of static dimensions";
  let description = [{
    Reinterprets the row-major elements of `input` with the dimensions
    `shape`. An entry `-1` is a dynamic dimension; every other entry is a
    positive static size.

    Rule: dynamic dimensions cannot be split or merged, because their sizes
    are only known at run time. The input's dynamic dimensions are carried to
    the result's `-1` entries one to one, in order; a reshape only regroups the
    static dimensions between and around them. Hence the verifier requires
    that the number of `-1` entries equals the number of dynamic input
    dimensions, and that the product of the static input dimensions equals
    the product of the static entries of `shape`.

    ```mlir
    // split heads: [batch, seq, 768] -> [batch, seq, 12, 64]
    %h = tfc.reshape %x {shape = array<i64: -1, -1, 12, 64>}
        : tensor<?x?x768xf32> -> tensor<?x?x12x64xf32>
    ```
  }];
  let arguments = (ins Tfc_AnyTensor:$input, DenseI64ArrayAttr:$shape);
  let results = (outs Tfc_InferredTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let inferredBuilders = [
    Tfc_InferredBuilder<(ins "::mlir::Value":$input,
                             "::llvm::ArrayRef<int64_t>":$shape), [{
      $_state.addOperands(input);
      $_state.getOrAddProperties<Properties>().shape =
          $_builder.getDenseI64ArrayAttr(shape);
    }]>,
  ];
  let hasFolder = 1;
}

def Tfc_SliceOp : Tfc_InferOp<"slice",
    [Tfc_Family<"DataMovement">, Tfc_FlopsPerElement<0>,
     Tfc_CustomSymbolicShape]> {
  let summary = "static slice along one axis, with an optional step";
  let description = [{
    Elements `start, start + step, ...` below `end` of dimension `axis`.
    Bounds are static: `0 <= start < end`, `step >= 1` (1 when absent), and
    `end <= dim` when the dimension is static; the result dimension is
    `ceil((end - start) / step)` either way (for a dynamic dimension, the
    runtime checks that `end` is in bounds). Splits packed weights such as
    GPT-2's `c_attn` into Q, K and V; a step takes the even or odd features
    of rotary embeddings (`x[..., 0::2]`).

    ```mlir
    %q = tfc.slice %qkv {axis = 2 : i64, start = 0 : i64, end = 768 : i64}
        : tensor<?x?x2304xf32> -> tensor<?x?x768xf32>
    %even = tfc.slice %x {axis = 1 : i64, start = 0 : i64, end = 64 : i64,
                          step = 2 : i64}
        : tensor<?x64xf32> -> tensor<?x32xf32>
    ```
  }];
  let arguments = (ins Tfc_AnyTensor:$input, I64Attr:$axis, I64Attr:$start,
                       I64Attr:$end, DefaultValuedAttr<I64Attr, "1">:$step);
  let results = (outs Tfc_InferredTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let inferredBuilders = [
    Tfc_InferredBuilder<(ins "::mlir::Value":$input, "int64_t":$axis,
                             "int64_t":$start, "int64_t":$end,
                             CArg<"int64_t", "1">:$step), [{
      $_state.addOperands(input);
      auto &props = $_state.getOrAddProperties<Properties>();
      props.axis = $_builder.getI64IntegerAttr(axis);
      props.start = $_builder.getI64IntegerAttr(start);
      props.end = $_builder.getI64IntegerAttr(end);
      if (step != 1)
        props.step = $_builder.getI64IntegerAttr(step);
    }]>,
  ];
  let hasFolder = 1;
  let extraClassDeclaration = inferShapeDecl # [{
    /// The number of elements the slice takes along `axis`.
    static int64_t sliceSize(int64_t start, int64_t end, int64_t step) {
      return (end - start + step - 1) / step;
    }
  }];
}

def Tfc_ConcatOp : Tfc_InferOp<"concat",
    [Tfc_Family<"DataMovement">, Tfc_FlopsPerElement<0>,
     Tfc_CustomSymbolicShape]> {
  let summary = "concatenation along one axis";
  let description = [{
    Joins one or more tensors of equal rank and element type along `axis`.
    The other dimensions must agree (a dynamic one takes the static size of
    another operand); the result's `axis` dimension is the sum, dynamic if
    any operand's is. Used for KV-cache appends and head merges.

    ```mlir
    %kv = tfc.concat %past, %new {axis = 2 : i64}
        : (tensor<?x12x?x64xf32>, tensor<?x12x1x64xf32>) -> tensor<?x12x?x64xf32>
    ```
  }];
  let arguments = (ins Variadic<Tfc_AnyTensor>:$inputs, I64Attr:$axis);
  let results = (outs Tfc_InferredTensor:$result);
  let assemblyFormat = [{
    $inputs attr-dict `:` functional-type($inputs, results)
  }];
  let inferredBuilders = [
    Tfc_InferredBuilder<(ins "::mlir::ValueRange":$inputs, "int64_t":$axis), [{
      $_state.addOperands(inputs);
      $_state.getOrAddProperties<Properties>().axis =
          $_builder.getI64IntegerAttr(axis);
    }]>,
  ];
}

def Tfc_GatherOp : Tfc_InferOp<"gather",
    [Tfc_Family<"DataMovement">, Tfc_FlopsPerElement<0>,
     Tfc_CustomSymbolicShape]> {
  let summary = "row lookup (embedding)";
  let description = [{
    Looks up the rows of `table` (`[V, D...]`) named by `ids` (any rank,
    i32 or i64). The result is `ids.shape ++ table.shape[1:]` with the
    table's element type.

    Out-of-range ids: ids that are entry inputs are checked before the entry
    runs (an id outside `[0, V)` is an error naming the input and the
    position). Ids computed inside the model are not checked element by
    element: the kernel clamps each one into `[0, V - 1]`, so a gather never
    reads outside its table (docs/runtime.md, "What inputs are refused").

    With `packed_rows = V`, `table` is a `[V, D]` f32 table laid out by
    `tfc.pack_panels` with `transpose_b` (`[ceil(V / 48), D, 48]`, row `v`
    at `table[v / 48, :, v % 48]`) and the result is `ids.shape ++ [D]`:
    a tied embedding (GPT-2's `wte`) gathered from the panels its LM head
    reads, so that only one copy of it is kept. Set by `weight-layout`.

    ```mlir
    %e = tfc.gather %wte, %ids : (tensor<50257x768xf32>, tensor<?x?xi32>) -> tensor<?x?x768xf32>
    %p = tfc.gather %panels, %ids {packed_rows = 50257 : i64}
        : (tensor<1048x768x48xf32>, tensor<?x?xi32>) -> tensor<?x?x768xf32>
    ```
  }];
  let arguments = (ins Tfc_AnyTensor:$table, Tfc_IndexTensor:$ids,
                       OptionalAttr<I64Attr>:$packed_rows);
  let results = (outs Tfc_InferredTensor:$result);
  let assemblyFormat = [{
    $table `,` $ids attr-dict `:` functional-type(operands, results)
  }];
  let inferredBuilders = [
    Tfc_InferredBuilder<(ins "::mlir::Value":$table, "::mlir::Value":$ids), [{
      $_state.addOperands(table);
      $_state.addOperands(ids);
    }]>,
  ];
}

//===----------------------------------------------------------------------===//
// Reductions and normalizations
//===----------------------------------------------------------------------===//

class Tfc_ReduceOp<string mnemonic, Type type, string what>
    : Tfc_InferOp<mnemonic, [Tfc_Family<"Reduction">,
                             Tfc_FlopsPerInputElement<1>,
                             Tfc_CustomSymbolicShape]> {
  let summary = what # " along one axis";
  let description = "The " # what # [{ of `input` along `axis`
    (`0 <= axis < rank`; the frontend normalizes negative axes). The axis is
    removed from the result, or kept with size 1 when `keepdim` is set.
    Accumulation is in f32 for floats.

    ```mlir
    %r = tfc.}] # mnemonic # [{ %x {axis = 2 : i64, keepdim = true}
        : tensor<?x?x768xf32> -> tensor<?x?x1xf32>
    ```
  }];
  let arguments = (ins type:$input, I64Attr:$axis,
                       DefaultValuedAttr<BoolAttr, "false">:$keepdim);
  let results = (outs Tfc_InferredTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let inferredBuilders = [
    Tfc_InferredBuilder<(ins "::mlir::Value":$input, "int64_t":$axis,
                             CArg<"bool", "false">:$keepdim), [{
      $_state.addOperands(input);
      auto &props = $_state.getOrAddProperties<Properties>();
      props.axis = $_builder.getI64IntegerAttr(axis);
      props.keepdim = $_builder.getBoolAttr(keepdim);
    }]>,
  ];
}

def Tfc_ReduceSumOp : Tfc_ReduceOp<"reduce_sum", Tfc_NumericTensor, "sum">;
def Tfc_ReduceMeanOp : Tfc_ReduceOp<"reduce_mean", Tfc_FloatTensor, "mean">;
def Tfc_ReduceMaxOp : Tfc_ReduceOp<"reduce_max", Tfc_NumericTensor, "maximum">;

def Tfc_ArgmaxOp : Tfc_InferOp<"argmax", [Tfc_Family<"Reduction">,
     Tfc_FlopsPerInputElement<1>, Tfc_CustomSymbolicShape]> {
  let summary = "index of the maximum along one axis";
  let description = [{
    The i32 index along `axis` (`0 <= axis < rank`) of the largest element of
    `input`; of the first one where several are equal (PyTorch's
    `argmax`). The axis is removed from the result, or kept with size 1
    when `keepdim` is set. For greedy decoding in the graph:
    `argmax(logits[:, -1])` is the next token id.

    ```mlir
    %t = tfc.argmax %logits {axis = 1 : i64}
        : tensor<?x50257xf32> -> tensor<?xi32>
    ```
  }];
  let arguments = (ins Tfc_NumericTensor:$input, I64Attr:$axis,
                       DefaultValuedAttr<BoolAttr, "false">:$keepdim);
  let results = (outs Tfc_InferredTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let inferredBuilders = [
    Tfc_InferredBuilder<(ins "::mlir::Value":$input, "int64_t":$axis,
                             CArg<"bool", "false">:$keepdim), [{
      $_state.addOperands(input);
      auto &props = $_state.getOrAddProperties<Properties>();
      props.axis = $_builder.getI64IntegerAttr(axis);
      props.keepdim = $_builder.getBoolAttr(keepdim);
    }]>,
  ];
}

def Tfc_TopkOp : Tfc_InferOp<"topk", [Tfc_Family<"Reduction">, Tfc_CustomFlops,
                                     Tfc_CustomSymbolicShape]> {
  let summary = "the k largest elements along the last axis";
  let description = [{
    Two results, each `input`'s shape with the last dimension replaced by
    `k`: `values`, the `k` largest elements of each row in descending order
    (type of `input`), and `indices`, their i32 positions in the row. Equal
    elements come in the order of their positions (PyTorch's
    `topk(x, k, sorted=True)` on distinct values). `1 <= k`, and `k` is at
    most the last dimension where that is static; a row shorter than `k` at
    run time ends in entries of index -1.

    ```mlir
    %v, %i = tfc.topk %logits {k = 50 : i64}
        : tensor<?x50257xf32> -> (tensor<?x50xf32>, tensor<?x50xi32>)
    ```
  }];
  let arguments = (ins Tfc_NumericTensor:$input, I64Attr:$k);
  let results = (outs Tfc_InferredTensor:$values,
                      Tfc_InferredTensor:$indices);
  let assemblyFormat = [{
    $input attr-dict `:` type($input) `->` `(` type($values) `,`
    type($indices) `)`
  }];
  let inferredBuilders = [
    Tfc_InferredBuilder<(ins "::mlir::Value":$input, "int64_t":$k), [{
      $_state.addOperands(input);
      $_state.getOrAddProperties<Properties>().k =
          $_builder.getI64IntegerAttr(k);
    }]>,
  ];
}

def Tfc_CumsumOp : Tfc_InferOp<"cumsum", [Tfc_Family<"Reduction">,
     Tfc_FlopsPerElement<1>, Tfc_ShapeOfOperand<0>]> {
  let summary = "inclusive prefix sum along one axis";
  let description = [{
    Element `i` along `axis` (`0 <= axis < rank`) is the sum of elements
    `0 .. i` of `input` (PyTorch's `cumsum`); the result has the type of the
    operand. Position ids of a left-padded batch are
    `cumsum(mask, axis) - 1`.

    ```mlir
    %p = tfc.cumsum %mask {axis = 1 : i64} : tensor<?x?xi32>
    ```
  }];
  let arguments = (ins Tfc_NumericTensor:$input, I64Attr:$axis);
  let results = (outs Tfc_NumericTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let inferredBuilders = [
    Tfc_InferredBuilder<(ins "::mlir::Value":$input, "int64_t":$axis), [{
      $_state.addOperands(input);
      $_state.getOrAddProperties<Properties>().axis =
          $_builder.getI64IntegerAttr(axis);
    }]>,
  ];
}

def Tfc_SoftmaxOp : Tfc_InferOp<"softmax", [Tfc_Family<"Reduction">,
     Tfc_FlopsPerElement<5>, Tfc_ShapeOfOperand<0>]> {
  let summary = "softmax along one axis";
  let description = [{
    `exp(x - max) / sum(exp(x - max))` along `axis` (`0 <= axis < rank`); the
    result has the type of the operand.

    ```mlir
    %p = tfc.softmax %scores {axis = 3 : i64} : tensor<?x12x?x?xf32>
    ```
  }];
  let arguments = (ins Tfc_FloatTensor:$input, I64Attr:$axis);
  let results = (outs Tfc_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let inferredBuilders = [
    Tfc_InferredBuilder<(ins "::mlir::Value":$input, "int64_t":$axis), [{
      $_state.addOperands(input);
      $_state.getOrAddProperties<Properties>().axis =
          $_builder.getI64IntegerAttr(axis);
    }]>,
  ];
}

def Tfc_LayerNormOp : Tfc_InferOp<"layer_norm", [Tfc_Family<"Reduction">,
     Tfc_FlopsPerElement<8>, Tfc_ShapeOfOperand<0>]> {
  let summary = "layer normalization over the last axis";
  let description = [{
    `(x - mean) / sqrt(var + epsilon) * gamma + beta` over the last axis
    (biased variance, as PyTorch). `gamma` and `beta` are rank 1 and as long
    as the last dimension. The result has the type of `input`.

    ```mlir
    %y = tfc.layer_norm %x, %g, %b {epsilon = 1.0e-05 : f64}
        : (tensor<?x?x768xf32>, tensor<768xf32>, tensor<768xf32>) -> tensor<?x?x768xf32>
    ```
  }];
  let arguments = (ins Tfc_FloatTensor:$input, Tfc_FloatTensor:$gamma,
                       Tfc_FloatTensor:$beta, F64Attr:$epsilon);
  let results = (outs Tfc_InferredTensor:$result);
  let assemblyFormat = [{
    $input `,` $gamma `,` $beta attr-dict `:` functional-type(operands, results)
  }];
  let inferredBuilders = [
    Tfc_InferredBuilder<(ins "::mlir::Value":$input, "::mlir::Value":$gamma,
                             "::mlir::Value":$beta, "double":$epsilon), [{
      $_state.addOperands(input);
      $_state.addOperands(gamma);
      $_state.addOperands(beta);
      $_state.getOrAddProperties<Properties>().epsilon =
          $_builder.getF64FloatAttr(epsilon);
    }]>,
  ];
}

def Tfc_RmsNormOp : Tfc_InferOp<"rms_norm", [Tfc_Family<"Reduction">,
     Tfc_FlopsPerElement<5>, Tfc_ShapeOfOperand<0>]> {
  let summary = "RMS normalization over the last axis";
  let description = [{
    `x / sqrt(mean(x^2) + epsilon) * gamma` over the last axis. `gamma` is
    rank 1 and as long as the last dimension. The result has the type of
    `input`.

    ```mlir
    %y = tfc.rms_norm %x, %g {epsilon = 1.0e-06 : f64}
        : (tensor<?x?x512xf32>, tensor<512xf32>) -> tensor<?x?x512xf32>
    ```
  }];
  let arguments = (ins Tfc_FloatTensor:$input, Tfc_FloatTensor:$gamma,
                       F64Attr:$epsilon);
  let results = (outs Tfc_InferredTensor:$result);
  let assemblyFormat = [{
    $input `,` $gamma attr-dict `:` functional-type(operands, results)
  }];
  let inferredBuilders = [
    Tfc_InferredBuilder<(ins "::mlir::Value":$input, "::mlir::Value":$gamma,
                             "double":$epsilon), [{
      $_state.addOperands(input);
      $_state.addOperands(gamma);
      $_state.getOrAddProperties<Properties>().epsilon =
          $_builder.getF64FloatAttr(epsilon);
    }]>,
  ];
}

//===----------------------------------------------------------------------===//
// Index generators
//===----------------------------------------------------------------------===//

def Tfc_PositionsOp : Tfc_InferOp<"positions",
    [Tfc_Family<"DataMovement">, Tfc_FlopsPerElement<0>,
     Tfc_CustomSymbolicShape]> {
  let summary = "position ids 0 .. n-1 (plus an offset)";
  let description = [{
    The i32 vector `offset + 0, offset + 1, ..., offset + n-1` where `n` is
    dimension `axis` of `ref` (only the shape of `ref` is read). Without
    `offset_ref` the offset is 0; with it, the offset is dimension
    `offset_axis` of `offset_ref`, e.g. the length of the KV cache, so that a
    decode step continues the positions of the prefix. `offset_ref` and
    `offset_axis` come together. The result length is static when `ref`'s
    dimension is.

    ```mlir
    %p = tfc.positions %ids {axis = 1 : i64} : tensor<?x?xi32> -> tensor<?xi32>
    %p = tfc.positions %ids, %past_k {axis = 1 : i64, offset_axis = 2 : i64}
        : tensor<?x?xi32>, tensor<?x12x?x64xf32> -> tensor<?xi32>
    ```
  }];
  let arguments = (ins Tfc_AnyTensor:$ref, Optional<Tfc_AnyTensor>:$offset_ref,
                       I64Attr:$axis, OptionalAttr<I64Attr>:$offset_axis);
  let results = (outs Tfc_InferredTensor:$result);
  let assemblyFormat = [{
    $ref (`,` $offset_ref^)? attr-dict `:` type($ref) (`,` type($offset_ref)^)?
    `->` type($result)
  }];
  let inferredBuilders = [
    // Positions 0 .. n-1.
    Tfc_InferredBuilder<(ins "::mlir::Value":$ref, "int64_t":$axis), [{
      $_state.addOperands(ref);
      $_state.getOrAddProperties<Properties>().axis =
          $_builder.getI64IntegerAttr(axis);
    }]>,
    // Positions offset .. offset+n-1, offset = offset_ref.shape[offset_axis].
    Tfc_InferredBuilder<(ins "::mlir::Value":$ref, "int64_t":$axis,
                             "::mlir::Value":$offset_ref,
                             "int64_t":$offset_axis), [{
      $_state.addOperands(ref);
      $_state.addOperands(offset_ref);
      auto &props = $_state.getOrAddProperties<Properties>();
      props.axis = $_builder.getI64IntegerAttr(axis);
      props.offset_axis = $_builder.getI64IntegerAttr(offset_axis);
    }]>,
  ];
}

def Tfc_ArangeOp : Tfc_InferOp<"arange",
    [Tfc_Family<"DataMovement">, Tfc_FlopsPerElement<0>,
     Tfc_CustomSymbolicShape]> {
  let summary = "the i32 sequence start, start + step, ...";
  let description = [{
    The i32 vector `start + step * i` for `i` in `0 .. n-1` (PyTorch's
    `arange(start, start + n * step, step)`). The length `n` is the static
    `length`, or dimension `axis` of `ref` (only its shape is read), for a
    length known at run time; exactly one of the two is given. `start` and
    `step` default to 0 and 1.

    ```mlir
    %i = tfc.arange {length = 4 : i64, start = 2 : i64} -> tensor<4xi32>
    %p = tfc.arange %ids : tensor<?x?xi32> {axis = 1 : i64} -> tensor<?xi32>
    ```
  }];
  let arguments = (ins Optional<Tfc_AnyTensor>:$ref,
                       OptionalAttr<I64Attr>:$axis,
                       OptionalAttr<I64Attr>:$length,
                       DefaultValuedAttr<I64Attr, "0">:$start,
                       DefaultValuedAttr<I64Attr, "1">:$step);
  let results = (outs Tfc_InferredTensor:$result);
  let assemblyFormat = [{
    ($ref^ `:` type($ref))? attr-dict `->` type($result)
  }];
  let inferredBuilders = [
    // A static length.
    Tfc_InferredBuilder<(ins "int64_t":$length, "int64_t":$start,
                             "int64_t":$step), [{
      auto &props = $_state.getOrAddProperties<Properties>();
      props.length = $_builder.getI64IntegerAttr(length);
      props.start = $_builder.getI64IntegerAttr(start);
      props.step = $_builder.getI64IntegerAttr(step);
    }]>,
    // The length of `ref`'s dimension `axis`.
    Tfc_InferredBuilder<(ins "::mlir::Value":$ref, "int64_t":$axis,
                             "int64_t":$start, "int64_t":$step), [{
      $_state.addOperands(ref);
      auto &props = $_state.getOrAddProperties<Properties>();
      props.axis = $_builder.getI64IntegerAttr(axis);
      props.start = $_builder.getI64IntegerAttr(start);
      props.step = $_builder.getI64IntegerAttr(step);
    }]>,
  ];
}

def Tfc_CausalMaskOp : Tfc_InferOp<"causal_mask",
    [Tfc_Family<"DataMovement">, Tfc_FlopsPerElement<0>,
     Tfc_CustomSymbolicShape]> {
  let summary = "causal attention mask";
  let description = [{
    The i1 matrix `[Q, K]` with `Q` = dimension `q_axis` of `q_ref` and `K` =
    dimension `k_axis` of `k_ref` (only shapes are read). Element `(i, j)` is
    true where query `i` may attend key `j`: `j <= i + (K - Q)`. The queries
    are taken to be the last `Q` of the `K` positions, so the same op serves
    prefill (`Q == K`: lower triangle) and cached decode (`Q < K`).

    ```mlir
    %m = tfc.causal_mask %q, %k {q_axis = 2 : i64, k_axis = 2 : i64}
        : (tensor<?x12x?x64xf32>, tensor<?x12x?x64xf32>) -> tensor<?x?xi1>
    ```
  }];
  let arguments = (ins Tfc_AnyTensor:$q_ref, Tfc_AnyTensor:$k_ref,
                       I64Attr:$q_axis, I64Attr:$k_axis);
  let results = (outs Tfc_InferredTensor:$result);
  let assemblyFormat = [{
    $q_ref `,` $k_ref attr-dict `:` functional-type(operands, results)
  }];
  let inferredBuilders = [
    Tfc_InferredBuilder<(ins "::mlir::Value":$q_ref, "::mlir::Value":$k_ref,
                             "int64_t":$q_axis, "int64_t":$k_axis), [{
      $_state.addOperands(q_ref);
      $_state.addOperands(k_ref);
      auto &props = $_state.getOrAddProperties<Properties>();
      props.q_axis = $_builder.getI64IntegerAttr(q_axis);
      props.k_axis = $_builder.getI64IntegerAttr(k_axis);
    }]>,
  ];
}

// Fused ops (tfc.fused_attention, tfc.add_layer_norm, tfc.linear), created
// only by the fusion passes, are in their own file. They derive from
// Tfc_InferOp like the ops above; their `inferShape` functions are at the end
// of ShapeInference.cpp.
include "ir/TfcFusedOps.td"

// Key/value cache ops (tfc.kv_append, tfc.kv_stack), created only by the
// kv-cache pass; their `inferShape` functions are in CacheOps.cpp.
include "ir/TfcCacheOps.td"

#endif // TFC_IR_TFCOPS_TD
