// The fused ops: assembly format round trip and verifier messages.
// RUN: tfc-opt %s -split-input-file -verify-diagnostics | FileCheck %s
// RUN: tfc-opt %s -split-input-file -verify-diagnostics -mlir-print-op-generic | tfc-opt -split-input-file | FileCheck %s

// CHECK-LABEL: func.func @roundtrip
// CHECK: tfc.fused_attention %arg0, %arg1, %arg2 {scale = 1.250000e-01 : f64} : (tensor<?x12x?x64xf32>, tensor<?x12x?x64xf32>, tensor<?x12x?x64xf32>) -> tensor<?x12x?x64xf32>
// CHECK: tfc.fused_attention %arg0, %arg1, %arg2 keep(%arg3) {causal = true, fill = -1.000000e+04 : f64, scale = 1.250000e-01 : f64} : (tensor<?x12x?x64xf32>, tensor<?x12x?x64xf32>, tensor<?x12x?x64xf32>, tensor<?x1x1x?xi1>) -> tensor<?x12x?x64xf32>
// CHECK: tfc.fused_attention %arg0, %arg1, %arg2 keep(%arg3) bias(%arg4) {scale = 1.250000e-01 : f64}
// CHECK: %{{.*}}, %{{.*}} = tfc.add_layer_norm %arg5, %arg6, %arg7, %arg7 {epsilon = 1.000000e-05 : f64, with_sum} : (tensor<?x?x768xf32>, tensor<?x?x768xf32>, tensor<768xf32>, tensor<768xf32>) -> (tensor<?x?x768xf32>, tensor<?x?x768xf32>)
// CHECK: %{{[a-z0-9_]+}} = tfc.add_layer_norm %arg5, %arg6, %arg7, %arg7 {epsilon = 1.000000e-05 : f64} : (tensor<?x?x768xf32>, tensor<?x?x768xf32>, tensor<768xf32>, tensor<768xf32>) -> tensor<?x?x768xf32>
// CHECK: tfc.linear %arg5, %arg8, %arg9 {activation = "gelu", transpose_b = true} : (tensor<?x?x768xf32>, tensor<3072x768xf32>, tensor<3072xf32>) -> tensor<?x?x3072xf32>
// CHECK: tfc.linear %arg5, %arg8 {transpose_b = true} : (tensor<?x?x768xf32>, tensor<3072x768xf32>) -> tensor<?x?x3072xf32>
func.func @roundtrip(%q: tensor<?x12x?x64xf32>, %k: tensor<?x12x?x64xf32>, %v: tensor<?x12x?x64xf32>,
                     %keep: tensor<?x1x1x?xi1>, %bias: tensor<?x1x1x?xf32>,
                     %x: tensor<?x?x768xf32>, %y: tensor<?x?x768xf32>, %g: tensor<768xf32>,
                     %w: tensor<3072x768xf32>, %b: tensor<3072xf32>) {
  %0 = tfc.fused_attention %q, %k, %v {scale = 0.125 : f64} : (tensor<?x12x?x64xf32>, tensor<?x12x?x64xf32>, tensor<?x12x?x64xf32>) -> tensor<?x12x?x64xf32>
  %1 = tfc.fused_attention %q, %k, %v keep(%keep) {scale = 0.125 : f64, causal = true, fill = -1.0e4 : f64} : (tensor<?x12x?x64xf32>, tensor<?x12x?x64xf32>, tensor<?x12x?x64xf32>, tensor<?x1x1x?xi1>) -> tensor<?x12x?x64xf32>
  %2 = tfc.fused_attention %q, %k, %v keep(%keep) bias(%bias) {scale = 0.125 : f64} : (tensor<?x12x?x64xf32>, tensor<?x12x?x64xf32>, tensor<?x12x?x64xf32>, tensor<?x1x1x?xi1>, tensor<?x1x1x?xf32>) -> tensor<?x12x?x64xf32>
  %3:2 = tfc.add_layer_norm %x, %y, %g, %g {epsilon = 1.0e-5 : f64, with_sum} : (tensor<?x?x768xf32>, tensor<?x?x768xf32>, tensor<768xf32>, tensor<768xf32>) -> (tensor<?x?x768xf32>, tensor<?x?x768xf32>)
  %6 = tfc.add_layer_norm %x, %y, %g, %g {epsilon = 1.0e-5 : f64} : (tensor<?x?x768xf32>, tensor<?x?x768xf32>, tensor<768xf32>, tensor<768xf32>) -> tensor<?x?x768xf32>
  %4 = tfc.linear %x, %w, %b {transpose_b = true, activation = "gelu"} : (tensor<?x?x768xf32>, tensor<3072x768xf32>, tensor<3072xf32>) -> tensor<?x?x3072xf32>
  %5 = tfc.linear %x, %w {transpose_b = true} : (tensor<?x?x768xf32>, tensor<3072x768xf32>) -> tensor<?x?x3072xf32>
  return
}

// -----

// Static dims of q, k and v merge into the result.
// CHECK-LABEL: func.func @static_merge
// CHECK: -> tensor<2x12x7x32xf32>
func.func @static_merge(%q: tensor<?x12x7x64xf32>, %k: tensor<2x?x9x64xf32>, %v: tensor<?x12x?x32xf32>) -> tensor<2x12x7x32xf32> {
  %0 = tfc.fused_attention %q, %k, %v {scale = 0.125 : f64} : (tensor<?x12x7x64xf32>, tensor<2x?x9x64xf32>, tensor<?x12x?x32xf32>) -> tensor<2x12x7x32xf32>
  return %0 : tensor<2x12x7x32xf32>
}

// -----

func.func @attention_rank(%q: tensor<?x?x64xf32>, %k: tensor<?x12x?x64xf32>) {
  // expected-error @+1 {{'tfc.fused_attention' op q must have rank 4 ([batch, heads, len, dim]), got tensor<?x?x64xf32>}}
  %0 = tfc.fused_attention %q, %k, %k {scale = 0.125 : f64} : (tensor<?x?x64xf32>, tensor<?x12x?x64xf32>, tensor<?x12x?x64xf32>) -> tensor<?x12x?x64xf32>
  return
}

// -----

func.func @attention_head_dim(%q: tensor<?x12x?x64xf32>, %k: tensor<?x12x?x32xf32>) {
  // expected-error @+1 {{'tfc.fused_attention' op q tensor<?x12x?x64xf32> and k tensor<?x12x?x32xf32> have different head dims (64 vs 32)}}
  %0 = tfc.fused_attention %q, %k, %k {scale = 0.125 : f64} : (tensor<?x12x?x64xf32>, tensor<?x12x?x32xf32>, tensor<?x12x?x32xf32>) -> tensor<?x12x?x32xf32>
  return
}

// -----

func.func @attention_heads(%q: tensor<?x12x?x64xf32>, %k: tensor<?x8x?x64xf32>) {
  // expected-error @+1 {{'tfc.fused_attention' op q tensor<?x12x?x64xf32> must agree with k tensor<?x8x?x64xf32> and v tensor<?x8x?x64xf32> in batch and heads}}
  %0 = tfc.fused_attention %q, %k, %k {scale = 0.125 : f64} : (tensor<?x12x?x64xf32>, tensor<?x8x?x64xf32>, tensor<?x8x?x64xf32>) -> tensor<?x12x?x64xf32>
  return
}

// -----

func.func @attention_keep(%q: tensor<2x12x7x64xf32>, %keep: tensor<2x1x1x8xi1>) {
  // expected-error @+1 {{'tfc.fused_attention' op keep tensor<2x1x1x8xi1> does not broadcast to the scores [batch, heads, q, k] = [2, 12, 7, 7]}}
  %0 = tfc.fused_attention %q, %q, %q keep(%keep) {scale = 0.125 : f64} : (tensor<2x12x7x64xf32>, tensor<2x12x7x64xf32>, tensor<2x12x7x64xf32>, tensor<2x1x1x8xi1>) -> tensor<2x12x7x64xf32>
  return
}

// -----

func.func @attention_causal(%q: tensor<2x12x9x64xf32>, %k: tensor<2x12x7x64xf32>) {
  // expected-error @+1 {{'tfc.fused_attention' op is causal but has more queries (9) than keys (7)}}
  %0 = tfc.fused_attention %q, %k, %k {scale = 0.125 : f64, causal = true} : (tensor<2x12x9x64xf32>, tensor<2x12x7x64xf32>, tensor<2x12x7x64xf32>) -> tensor<2x12x9x64xf32>
  return
}

// -----

func.func @attention_result(%q: tensor<?x12x?x64xf32>) {
  // expected-error @+1 {{'tfc.fused_attention' op result type tensor<?x12x?x32xf32> differs from the inferred type tensor<?x12x?x64xf32>}}
  %0 = tfc.fused_attention %q, %q, %q {scale = 0.125 : f64} : (tensor<?x12x?x64xf32>, tensor<?x12x?x64xf32>, tensor<?x12x?x64xf32>) -> tensor<?x12x?x32xf32>
  return
}

// -----

func.func @add_layer_norm_gamma(%x: tensor<?x?x768xf32>, %g: tensor<512xf32>) {
  // expected-error @+1 {{'tfc.add_layer_norm' op gamma tensor<512xf32> does not match the last dim of input tensor<?x?x768xf32> (512 vs 768)}}
  %0:2 = tfc.add_layer_norm %x, %x, %g, %g {epsilon = 1.0e-5 : f64, with_sum} : (tensor<?x?x768xf32>, tensor<?x?x768xf32>, tensor<512xf32>, tensor<512xf32>) -> (tensor<?x?x768xf32>, tensor<?x?x768xf32>)
  return
}

// -----

func.func @add_layer_norm_no_sum(%x: tensor<?x?x768xf32>, %g: tensor<768xf32>) {
  // Two results without with_sum.
  // expected-error @+1 {{'tfc.add_layer_norm' op result types (tensor<?x?x768xf32>, tensor<?x?x768xf32>) differ from the inferred types (tensor<?x?x768xf32>)}}
  %0:2 = tfc.add_layer_norm %x, %x, %g, %g {epsilon = 1.0e-5 : f64} : (tensor<?x?x768xf32>, tensor<?x?x768xf32>, tensor<768xf32>, tensor<768xf32>) -> (tensor<?x?x768xf32>, tensor<?x?x768xf32>)
  return
}

// -----

func.func @add_layer_norm_broadcast(%x: tensor<4x768xf32>, %y: tensor<3x768xf32>, %g: tensor<768xf32>) {
  // expected-error @+1 {{'tfc.add_layer_norm' op operand shapes do not broadcast: lhs tensor<4x768xf32> and rhs tensor<3x768xf32>}}
  %0:2 = tfc.add_layer_norm %x, %y, %g, %g {epsilon = 1.0e-5 : f64, with_sum} : (tensor<4x768xf32>, tensor<3x768xf32>, tensor<768xf32>, tensor<768xf32>) -> (tensor<4x768xf32>, tensor<4x768xf32>)
  return
}

// -----

func.func @linear_activation(%x: tensor<?x64xf32>, %w: tensor<64x64xf32>) {
  // expected-error @+1 {{'tfc.linear' op activation must be one of "none", "relu", "gelu", "gelu_tanh", "silu", got "tanh"}}
  %0 = tfc.linear %x, %w {activation = "tanh"} : (tensor<?x64xf32>, tensor<64x64xf32>) -> tensor<?x64xf32>
  return
}

// -----

func.func @linear_contraction(%x: tensor<?x64xf32>, %w: tensor<128x32xf32>) {
  // expected-error @+1 {{'tfc.linear' op contraction dims differ: x tensor<?x64xf32> has K=64, w tensor<128x32xf32> has K=32 (transpose_b)}}
  %0 = tfc.linear %x, %w {transpose_b = true} : (tensor<?x64xf32>, tensor<128x32xf32>) -> tensor<?x128xf32>
  return
}

// -----

func.func @linear_bias(%x: tensor<?x64xf32>, %w: tensor<64x128xf32>, %b: tensor<64xf32>) {
  // expected-error @+1 {{'tfc.linear' op bias tensor<64xf32> does not match N=128 of w tensor<64x128xf32>}}
  %0 = tfc.linear %x, %w, %b : (tensor<?x64xf32>, tensor<64x128xf32>, tensor<64xf32>) -> tensor<?x128xf32>
  return
}

// -----

func.func @linear_weight_rank(%x: tensor<?x64xf32>, %w: tensor<2x64x128xf32>) {
  // expected-error @+1 {{'tfc.linear' op w must have rank 2, got tensor<2x64x128xf32>}}
  %0 = tfc.linear %x, %w : (tensor<?x64xf32>, tensor<2x64x128xf32>) -> tensor<?x128xf32>
  return
}
