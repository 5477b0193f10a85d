// fuse-add-layernorm: layer_norm(a + b) -> tfc.add_layer_norm, post-LN and
// pre-LN (the sum feeds the next residual).
// RUN: tfc-opt %s --fuse-add-layernorm -split-input-file | FileCheck %s

// Post-LN (BERT): only the normalized output is used; the fused op has no
// sum result (its kernel writes one tensor), and the add is gone.
// CHECK-LABEL: func.func @post_ln
// CHECK-SAME: (%[[X:.*]]: tensor<?x?x768xf32>, %[[Y:.*]]: tensor<?x?x768xf32>)
// CHECK-NOT: tfc.add %
// CHECK: %[[G:.*]] = tfc.param "ln.weight"
// CHECK: %[[B:.*]] = tfc.param "ln.bias"
// CHECK-NEXT: %[[OUT:.*]] = tfc.add_layer_norm %[[X]], %[[Y]], %[[G]], %[[B]] {epsilon = 9.9999999999999998E-13 : f64} : (tensor<?x?x768xf32>, tensor<?x?x768xf32>, tensor<768xf32>, tensor<768xf32>) -> tensor<?x?x768xf32>
// CHECK-NEXT: return %[[OUT]]
func.func @post_ln(%x: tensor<?x?x768xf32>, %y: tensor<?x?x768xf32>) -> tensor<?x?x768xf32> {
  %s = tfc.add %x, %y : (tensor<?x?x768xf32>, tensor<?x?x768xf32>) -> tensor<?x?x768xf32>
  %g = tfc.param "ln.weight" : tensor<768xf32>
  %b = tfc.param "ln.bias" : tensor<768xf32>
  %n = tfc.layer_norm %s, %g, %b {epsilon = 1.0e-12 : f64} : (tensor<?x?x768xf32>, tensor<768xf32>, tensor<768xf32>) -> tensor<?x?x768xf32>
  return %n : tensor<?x?x768xf32>
}

// -----

// Pre-LN (GPT-2): x = x + attn; h = ln(x); ... x + mlp(h). The fused op
// takes the add's place (the params move up) and its `sum` result feeds
// the next residual, which here even comes before the layer_norm's own
// position.
// CHECK-LABEL: func.func @pre_ln
// CHECK-SAME: (%[[X:.*]]: tensor<?x?x64xf32>, %[[A:.*]]: tensor<?x?x64xf32>, %[[M:.*]]: tensor<?x?x64xf32>)
// CHECK-NEXT: %[[G:.*]] = tfc.param "h.0.ln_2.weight"
// CHECK-NEXT: %[[B:.*]] = tfc.param "h.0.ln_2.bias"
// CHECK-NEXT: %[[OUT:.*]], %[[SUM:.*]] = tfc.add_layer_norm %[[X]], %[[A]], %[[G]], %[[B]] {epsilon = 1.000000e-05 : f64, with_sum} : (tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<64xf32>, tensor<64xf32>) -> (tensor<?x?x64xf32>, tensor<?x?x64xf32>)
// CHECK-NEXT: %[[R:.*]] = tfc.add %[[SUM]], %[[M]]
// CHECK-NEXT: return %[[OUT]], %[[R]]
func.func @pre_ln(%x: tensor<?x?x64xf32>, %attn: tensor<?x?x64xf32>, %mlp: tensor<?x?x64xf32>) -> (tensor<?x?x64xf32>, tensor<?x?x64xf32>) {
  %s = tfc.add %x, %attn : (tensor<?x?x64xf32>, tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
  %r = tfc.add %s, %mlp : (tensor<?x?x64xf32>, tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
  %g = tfc.param "h.0.ln_2.weight" : tensor<64xf32>
  %b = tfc.param "h.0.ln_2.bias" : tensor<64xf32>
  %n = tfc.layer_norm %s, %g, %b {epsilon = 1.0e-5 : f64} : (tensor<?x?x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<?x?x64xf32>
  return %n, %r : tensor<?x?x64xf32>, tensor<?x?x64xf32>
}

// -----

// Broadcasting adds fuse too (BERT's embeddings + token type row).
// CHECK-LABEL: func.func @broadcast_add
// CHECK: tfc.add_layer_norm %arg0, %arg1, %arg2, %arg2 {epsilon = 1.000000e-05 : f64} : (tensor<?x?x32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<?x?x32xf32>
func.func @broadcast_add(%x: tensor<?x?x32xf32>, %t: tensor<32xf32>, %g: tensor<32xf32>) -> tensor<?x?x32xf32> {
  %s = tfc.add %x, %t : (tensor<?x?x32xf32>, tensor<32xf32>) -> tensor<?x?x32xf32>
  %n = tfc.layer_norm %s, %g, %g {epsilon = 1.0e-5 : f64} : (tensor<?x?x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<?x?x32xf32>
  return %n : tensor<?x?x32xf32>
}

// -----

// Negative: the input is not an add (the first LN of a pre-LN model that
// reads an embedding directly, or a function argument).
// CHECK-LABEL: func.func @not_an_add
// CHECK-NOT: tfc.add_layer_norm
// CHECK: tfc.layer_norm
// CHECK: tfc.layer_norm
func.func @not_an_add(%x: tensor<?x?x32xf32>, %g: tensor<32xf32>) -> (tensor<?x?x32xf32>, tensor<?x?x32xf32>) {
  %n = tfc.layer_norm %x, %g, %g {epsilon = 1.0e-5 : f64} : (tensor<?x?x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<?x?x32xf32>
  %e = tfc.exp %x : tensor<?x?x32xf32>
  %n2 = tfc.layer_norm %e, %g, %g {epsilon = 1.0e-5 : f64} : (tensor<?x?x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<?x?x32xf32>
  return %n, %n2 : tensor<?x?x32xf32>, tensor<?x?x32xf32>
}

// -----

// Negative: gamma is computed from an activation after the add, and the sum
// has a user before the layer_norm; neither position works.
// CHECK-LABEL: func.func @gamma_after_use
// CHECK-NOT: tfc.add_layer_norm
// CHECK: tfc.layer_norm
func.func @gamma_after_use(%x: tensor<4x32xf32>, %y: tensor<4x32xf32>, %v: tensor<32xf32>) -> (tensor<4x32xf32>, tensor<4x32xf32>) {
  %s = tfc.add %x, %y : (tensor<4x32xf32>, tensor<4x32xf32>) -> tensor<4x32xf32>
  %u = tfc.exp %s : tensor<4x32xf32>
  %g = tfc.exp %v : tensor<32xf32>
  %n = tfc.layer_norm %s, %g, %g {epsilon = 1.0e-5 : f64} : (tensor<4x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<4x32xf32>
  return %n, %u : tensor<4x32xf32>, tensor<4x32xf32>
}
