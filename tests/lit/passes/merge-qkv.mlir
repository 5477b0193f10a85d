// merge-qkv: projections of one input with same-shaped weights of one layer
// become one linear on the concatenated weights plus one slice each.
// RUN: tfc-opt %s --merge-qkv -split-input-file | FileCheck %s

// BERT's Q, K, V (nn.Linear, transpose_b, biases). The params of K and V
// are defined after Q's linear: they move up.
// CHECK-LABEL: func.func @bert_qkv
// CHECK-SAME: (%[[X:.*]]: tensor<?x?x64xf32>)
// CHECK-DAG: %[[WQ:.*]] = tfc.param "encoder.layer.0.attention.self.query.weight"
// CHECK-DAG: %[[BQ:.*]] = tfc.param "encoder.layer.0.attention.self.query.bias"
// CHECK-DAG: %[[WK:.*]] = tfc.param "encoder.layer.0.attention.self.key.weight"
// CHECK-DAG: %[[BK:.*]] = tfc.param "encoder.layer.0.attention.self.key.bias"
// CHECK-DAG: %[[WV:.*]] = tfc.param "encoder.layer.0.attention.self.value.weight"
// CHECK-DAG: %[[BV:.*]] = tfc.param "encoder.layer.0.attention.self.value.bias"
// CHECK: %[[W:.*]] = tfc.concat %[[WQ]], %[[WK]], %[[WV]] {axis = 0 : i64} : (tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<192x64xf32>
// CHECK-NEXT: %[[B:.*]] = tfc.concat %[[BQ]], %[[BK]], %[[BV]] {axis = 0 : i64} : (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<192xf32>
// CHECK-NEXT: %[[L:.*]] = tfc.linear %[[X]], %[[W]], %[[B]] {transpose_b = true} : (tensor<?x?x64xf32>, tensor<192x64xf32>, tensor<192xf32>) -> tensor<?x?x192xf32>
// CHECK-NEXT: %[[Q:.*]] = tfc.slice %[[L]] {axis = 2 : i64, end = 64 : i64, start = 0 : i64}
// CHECK-NEXT: %[[K:.*]] = tfc.slice %[[L]] {axis = 2 : i64, end = 128 : i64, start = 64 : i64}
// CHECK-NEXT: %[[V:.*]] = tfc.slice %[[L]] {axis = 2 : i64, end = 192 : i64, start = 128 : i64}
// CHECK-NOT: tfc.linear
// CHECK: return %[[Q]], %[[K]], %[[V]]
func.func @bert_qkv(%x: tensor<?x?x64xf32>) -> (tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x?x64xf32>) {
  %wq = tfc.param "encoder.layer.0.attention.self.query.weight" : tensor<64x64xf32>
  %bq = tfc.param "encoder.layer.0.attention.self.query.bias" : tensor<64xf32>
  %q = tfc.linear %x, %wq, %bq {transpose_b = true} : (tensor<?x?x64xf32>, tensor<64x64xf32>, tensor<64xf32>) -> tensor<?x?x64xf32>
  %wk = tfc.param "encoder.layer.0.attention.self.key.weight" : tensor<64x64xf32>
  %bk = tfc.param "encoder.layer.0.attention.self.key.bias" : tensor<64xf32>
  %k = tfc.linear %x, %wk, %bk {transpose_b = true} : (tensor<?x?x64xf32>, tensor<64x64xf32>, tensor<64xf32>) -> tensor<?x?x64xf32>
  %wv = tfc.param "encoder.layer.0.attention.self.value.weight" : tensor<64x64xf32>
  %bv = tfc.param "encoder.layer.0.attention.self.value.bias" : tensor<64xf32>
  %v = tfc.linear %x, %wv, %bv {transpose_b = true} : (tensor<?x?x64xf32>, tensor<64x64xf32>, tensor<64xf32>) -> tensor<?x?x64xf32>
  return %q, %k, %v : tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x?x64xf32>
}

// -----

// Plain matmuls by [in, out] weights concatenate along axis 1.
// CHECK-LABEL: func.func @matmuls
// CHECK: %[[W:.*]] = tfc.concat %{{.*}}, %{{.*}} {axis = 1 : i64} : (tensor<32x16xf32>, tensor<32x16xf32>) -> tensor<32x32xf32>
// CHECK-NEXT: %[[L:.*]] = tfc.linear %arg0, %[[W]] : (tensor<4x32xf32>, tensor<32x32xf32>) -> tensor<4x32xf32>
// CHECK-NEXT: tfc.slice %[[L]] {axis = 1 : i64, end = 16 : i64, start = 0 : i64}
// CHECK-NEXT: tfc.slice %[[L]] {axis = 1 : i64, end = 32 : i64, start = 16 : i64}
func.func @matmuls(%x: tensor<4x32xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>) {
  %wk = tfc.param "layers.1.k" : tensor<32x16xf32>
  %wv = tfc.param "layers.1.v" : tensor<32x16xf32>
  %k = tfc.matmul %x, %wk : (tensor<4x32xf32>, tensor<32x16xf32>) -> tensor<4x16xf32>
  %v = tfc.matmul %x, %wv : (tensor<4x32xf32>, tensor<32x16xf32>) -> tensor<4x16xf32>
  return %k, %v : tensor<4x16xf32>, tensor<4x16xf32>
}

// -----

// nn.MultiheadAttention's packed in_proj_weight, sliced: the pieces are
// concatenated again (tfc-simplify then folds the concat of adjacent
// slices back into the packed tensor).
// CHECK-LABEL: func.func @packed_slices
// CHECK: %[[W:.*]] = tfc.concat %{{.*}}, %{{.*}}, %{{.*}} {axis = 0 : i64} : (tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<96x32xf32>
// CHECK: tfc.linear %arg0, %[[W]], %{{.*}} {transpose_b = true}
func.func @packed_slices(%x: tensor<?x?x32xf32>) -> (tensor<?x?x32xf32>, tensor<?x?x32xf32>, tensor<?x?x32xf32>) {
  %w = tfc.param "layers.0.self_attn.in_proj_weight" : tensor<96x32xf32>
  %b = tfc.param "layers.0.self_attn.in_proj_bias" : tensor<96xf32>
  %wq = tfc.slice %w {axis = 0 : i64, start = 0 : i64, end = 32 : i64} : tensor<96x32xf32> -> tensor<32x32xf32>
  %bq = tfc.slice %b {axis = 0 : i64, start = 0 : i64, end = 32 : i64} : tensor<96xf32> -> tensor<32xf32>
  %q = tfc.linear %x, %wq, %bq {transpose_b = true} : (tensor<?x?x32xf32>, tensor<32x32xf32>, tensor<32xf32>) -> tensor<?x?x32xf32>
  %wk = tfc.slice %w {axis = 0 : i64, start = 32 : i64, end = 64 : i64} : tensor<96x32xf32> -> tensor<32x32xf32>
  %bk = tfc.slice %b {axis = 0 : i64, start = 32 : i64, end = 64 : i64} : tensor<96xf32> -> tensor<32xf32>
  %k = tfc.linear %x, %wk, %bk {transpose_b = true} : (tensor<?x?x32xf32>, tensor<32x32xf32>, tensor<32xf32>) -> tensor<?x?x32xf32>
  %wv = tfc.slice %w {axis = 0 : i64, start = 64 : i64, end = 96 : i64} : tensor<96x32xf32> -> tensor<32x32xf32>
  %bv = tfc.slice %b {axis = 0 : i64, start = 64 : i64, end = 96 : i64} : tensor<96xf32> -> tensor<32xf32>
  %v = tfc.linear %x, %wv, %bv {transpose_b = true} : (tensor<?x?x32xf32>, tensor<32x32xf32>, tensor<32xf32>) -> tensor<?x?x32xf32>
  return %q, %k, %v : tensor<?x?x32xf32>, tensor<?x?x32xf32>, tensor<?x?x32xf32>
}

// -----

// Negative: different layers (the cross-attention K/V of two decoder layers
// read the same encoder output), different activations, different weight
// shapes, and weights that are activations.
// CHECK-LABEL: func.func @not_merged
// CHECK-NOT: tfc.concat
// CHECK-NOT: tfc.slice
// CHECK: return
func.func @not_merged(%x: tensor<4x32xf32>, %a: tensor<32x32xf32>, %b: tensor<32x32xf32>) -> (tensor<4x32xf32>, tensor<4x32xf32>, tensor<4x32xf32>, tensor<4x16xf32>, tensor<4x32xf32>, tensor<4x32xf32>) {
  %w0 = tfc.param "decoder.layers.0.k" : tensor<32x32xf32>
  %w1 = tfc.param "decoder.layers.1.k" : tensor<32x32xf32>
  %l0 = tfc.linear %x, %w0 : (tensor<4x32xf32>, tensor<32x32xf32>) -> tensor<4x32xf32>
  %l1 = tfc.linear %x, %w1 : (tensor<4x32xf32>, tensor<32x32xf32>) -> tensor<4x32xf32>
  %w2 = tfc.param "decoder.layers.2.fc" : tensor<32x32xf32>
  %w3 = tfc.param "decoder.layers.2.gate" : tensor<32x16xf32>
  %l2 = tfc.linear %x, %w2 {activation = "relu"} : (tensor<4x32xf32>, tensor<32x32xf32>) -> tensor<4x32xf32>
  %l3 = tfc.linear %x, %w3 : (tensor<4x32xf32>, tensor<32x16xf32>) -> tensor<4x16xf32>
  %l4 = tfc.matmul %x, %a : (tensor<4x32xf32>, tensor<32x32xf32>) -> tensor<4x32xf32>
  %l5 = tfc.matmul %x, %b : (tensor<4x32xf32>, tensor<32x32xf32>) -> tensor<4x32xf32>
  return %l0, %l1, %l2, %l3, %l4, %l5 : tensor<4x32xf32>, tensor<4x32xf32>, tensor<4x32xf32>, tensor<4x16xf32>, tensor<4x32xf32>, tensor<4x32xf32>
}
