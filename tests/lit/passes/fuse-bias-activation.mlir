// fuse-bias-activation: act(x @ W + b) -> tfc.linear.
// RUN: tfc-opt %s --fuse-bias-activation -split-input-file | FileCheck %s

// nn.Linear ([out, in], transpose_b) with bias and exact GELU (BERT's FFN).
// CHECK-LABEL: func.func @bias_gelu
// CHECK-SAME: (%[[X:.*]]: tensor<?x?x64xf32>)
// CHECK: %[[W:.*]] = tfc.param "fc.weight"
// CHECK: %[[B:.*]] = tfc.param "fc.bias"
// CHECK-NEXT: %[[Y:.*]] = tfc.linear %[[X]], %[[W]], %[[B]] {activation = "gelu", transpose_b = true} : (tensor<?x?x64xf32>, tensor<128x64xf32>, tensor<128xf32>) -> tensor<?x?x128xf32>
// CHECK-NEXT: return %[[Y]]
func.func @bias_gelu(%x: tensor<?x?x64xf32>) -> tensor<?x?x128xf32> {
  %w = tfc.param "fc.weight" : tensor<128x64xf32>
  %b = tfc.param "fc.bias" : tensor<128xf32>
  %m = tfc.matmul %x, %w {transpose_b = true} : (tensor<?x?x64xf32>, tensor<128x64xf32>) -> tensor<?x?x128xf32>
  %a = tfc.add %m, %b : (tensor<?x?x128xf32>, tensor<128xf32>) -> tensor<?x?x128xf32>
  %g = tfc.gelu %a : tensor<?x?x128xf32>
  return %g : tensor<?x?x128xf32>
}

// -----

// GPT-2's Conv1D ([in, out]): bias first in the add, tanh GELU.
// CHECK-LABEL: func.func @conv1d_gelu_tanh
// CHECK: tfc.linear %arg0, %{{.*}}, %{{.*}} {activation = "gelu_tanh"} : (tensor<?x?x64xf32>, tensor<64x256xf32>, tensor<256xf32>) -> tensor<?x?x256xf32>
// CHECK-NOT: tfc.add
func.func @conv1d_gelu_tanh(%x: tensor<?x?x64xf32>) -> tensor<?x?x256xf32> {
  %w = tfc.param "c_fc.weight" : tensor<64x256xf32>
  %b = tfc.param "c_fc.bias" : tensor<256xf32>
  %m = tfc.matmul %x, %w : (tensor<?x?x64xf32>, tensor<64x256xf32>) -> tensor<?x?x256xf32>
  %a = tfc.add %b, %m : (tensor<256xf32>, tensor<?x?x256xf32>) -> tensor<?x?x256xf32>
  %g = tfc.gelu %a {approximate = "tanh"} : tensor<?x?x256xf32>
  return %g : tensor<?x?x256xf32>
}

// -----

// Bias only; relu and silu; an activation without a bias.
// CHECK-LABEL: func.func @variants
// CHECK: tfc.linear %arg0, %{{.*}}, %{{.*}} {transpose_b = true} : (tensor<8x32xf32>, tensor<16x32xf32>, tensor<16xf32>) -> tensor<8x16xf32>
// CHECK: tfc.linear %arg0, %{{.*}}, %{{.*}} {activation = "relu", transpose_b = true}
// CHECK: tfc.linear %arg0, %{{.*}} {activation = "silu", transpose_b = true} : (tensor<8x32xf32>, tensor<16x32xf32>) -> tensor<8x16xf32>
// CHECK-NOT: tfc.matmul
func.func @variants(%x: tensor<8x32xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>) {
  %w = tfc.param "w" : tensor<16x32xf32>
  %b = tfc.param "b" : tensor<16xf32>
  %m0 = tfc.matmul %x, %w {transpose_b = true} : (tensor<8x32xf32>, tensor<16x32xf32>) -> tensor<8x16xf32>
  %a0 = tfc.add %m0, %b : (tensor<8x16xf32>, tensor<16xf32>) -> tensor<8x16xf32>
  %m1 = tfc.matmul %x, %w {transpose_b = true} : (tensor<8x32xf32>, tensor<16x32xf32>) -> tensor<8x16xf32>
  %a1 = tfc.add %m1, %b : (tensor<8x16xf32>, tensor<16xf32>) -> tensor<8x16xf32>
  %r1 = tfc.relu %a1 : tensor<8x16xf32>
  %m2 = tfc.matmul %x, %w {transpose_b = true} : (tensor<8x32xf32>, tensor<16x32xf32>) -> tensor<8x16xf32>
  %s2 = tfc.silu %m2 : tensor<8x16xf32>
  return %a0, %r1, %s2 : tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>
}

// -----

// The biased result has a second user: the bias fuses, the activation stays.
// CHECK-LABEL: func.func @biased_result_reused
// CHECK: %[[L:.*]] = tfc.linear %arg0, %{{.*}}, %{{.*}} {transpose_b = true}
// CHECK-NEXT: %[[R:.*]] = tfc.relu %[[L]]
// CHECK-NEXT: return %[[R]], %[[L]]
func.func @biased_result_reused(%x: tensor<8x32xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>) {
  %w = tfc.param "w" : tensor<16x32xf32>
  %b = tfc.param "b" : tensor<16xf32>
  %m = tfc.matmul %x, %w {transpose_b = true} : (tensor<8x32xf32>, tensor<16x32xf32>) -> tensor<8x16xf32>
  %a = tfc.add %m, %b : (tensor<8x16xf32>, tensor<16xf32>) -> tensor<8x16xf32>
  %r = tfc.relu %a : tensor<8x16xf32>
  return %r, %a : tensor<8x16xf32>, tensor<8x16xf32>
}

// -----

// Negative: the matmul result has two users; a residual add (not a rank-1
// bias); a plain matmul (GPT-2's tied LM head); a batched matmul.
// CHECK-LABEL: func.func @negatives
// CHECK-NOT: tfc.linear
// CHECK: return
func.func @negatives(%x: tensor<8x32xf32>, %res: tensor<8x16xf32>, %q: tensor<2x8x32xf32>, %k: tensor<2x16x32xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<2x8x16xf32>) {
  %w = tfc.param "w" : tensor<16x32xf32>
  %b = tfc.param "b" : tensor<16xf32>
  %m0 = tfc.matmul %x, %w {transpose_b = true} : (tensor<8x32xf32>, tensor<16x32xf32>) -> tensor<8x16xf32>
  %a0 = tfc.add %m0, %b : (tensor<8x16xf32>, tensor<16xf32>) -> tensor<8x16xf32>
  %m1 = tfc.matmul %x, %w {transpose_b = true} : (tensor<8x32xf32>, tensor<16x32xf32>) -> tensor<8x16xf32>
  %a1 = tfc.add %m1, %res : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %m2 = tfc.matmul %x, %w {transpose_b = true} : (tensor<8x32xf32>, tensor<16x32xf32>) -> tensor<8x16xf32>
  %m3 = tfc.matmul %q, %k {transpose_b = true} : (tensor<2x8x32xf32>, tensor<2x16x32xf32>) -> tensor<2x8x16xf32>
  %r3 = tfc.relu %m3 : tensor<2x8x16xf32>
  return %a0, %m0, %a1, %m2, %r3 : tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<2x8x16xf32>
}
