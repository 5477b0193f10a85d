// bf16-weights (--dtype bf16): static rank-2 f32 weights of tfc.matmul and
// tfc.linear (or weight-layout's f32 panels of one) are read through one
// tfc.cast to bf16 and one tfc.pack_panels (pairs of K side by side) per
// weight value and orientation, with packed_n = N; other products, odd
// contraction lengths and non-weights are left alone.
// RUN: tfc-opt %s --bf16-weights -split-input-file | FileCheck %s

// CHECK-LABEL: func.func @products
// CHECK-SAME: (%[[X:.*]]: tensor<?x?x64xf32>, %[[K:.*]]: tensor<?x4x?x16xf32>,
// CHECK: %[[W:.*]] = tfc.param "l.0.weight" : tensor<128x64xf32>
// CHECK-NEXT: %[[WB:.*]] = tfc.cast %[[W]] : tensor<128x64xf32> to tensor<128x64xbf16>
// CHECK-NEXT: %[[WP:.*]] = tfc.pack_panels %[[WB]] {transpose_b = true} : tensor<128x64xbf16> -> tensor<3x32x48x2xbf16>
// CHECK-NEXT: %[[B:.*]] = tfc.param "l.0.bias"
// CHECK-NEXT: %[[H:.*]] = tfc.linear %[[X]], %[[WP]], %[[B]] {activation = "gelu", packed_n = 128 : i64} : (tensor<?x?x64xf32>, tensor<3x32x48x2xbf16>, tensor<128xf32>) -> tensor<?x?x128xf32>
// CHECK-NEXT: tfc.matmul %[[X]], %[[WP]] {packed_n = 128 : i64} : (tensor<?x?x64xf32>, tensor<3x32x48x2xbf16>) -> tensor<?x?x128xf32>
// CHECK-NEXT: %[[V:.*]] = tfc.param "l.1.weight" : tensor<127x32xf32>
// CHECK-NEXT: tfc.matmul %{{.*}}, %[[V]] : (tensor<?x?x127xf32>, tensor<127x32xf32>) -> tensor<?x?x32xf32>
// CHECK-NEXT: tfc.matmul %[[K]], %[[K]] {transpose_b = true} : (tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>)
// CHECK-NOT: tfc.cast
// CHECK-NOT: tfc.pack_panels
func.func @products(%x: tensor<?x?x64xf32>, %k: tensor<?x4x?x16xf32>, %x2: tensor<?x?x127xf32>) -> (tensor<?x?x128xf32>, tensor<?x?x128xf32>, tensor<?x?x32xf32>, tensor<?x4x?x?xf32>) {
  %w = tfc.param "l.0.weight" : tensor<128x64xf32>
  %b = tfc.param "l.0.bias" : tensor<128xf32>
  %h = tfc.linear %x, %w, %b {transpose_b = true, activation = "gelu"} : (tensor<?x?x64xf32>, tensor<128x64xf32>, tensor<128xf32>) -> tensor<?x?x128xf32>
  %h2 = tfc.matmul %x, %w {transpose_b = true} : (tensor<?x?x64xf32>, tensor<128x64xf32>) -> tensor<?x?x128xf32>
  %v = tfc.param "l.1.weight" : tensor<127x32xf32>
  %y = tfc.matmul %x2, %v : (tensor<?x?x127xf32>, tensor<127x32xf32>) -> tensor<?x?x32xf32>
  %s = tfc.matmul %k, %k {transpose_b = true} : (tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>) -> tensor<?x4x?x?xf32>
  return %h, %h2, %y, %s : tensor<?x?x128xf32>, tensor<?x?x128xf32>, tensor<?x?x32xf32>, tensor<?x4x?x?xf32>
}

// -----

// A weight computed from params (merged QKV, transposed) is cast once, after
// its last weight-only step.
// CHECK-LABEL: func.func @merged_qkv
// CHECK: %[[WT:.*]] = tfc.transpose
// CHECK-NEXT: %[[WB:.*]] = tfc.cast %[[WT]] : tensor<32x96xf32> to tensor<32x96xbf16>
// CHECK-NEXT: %[[WP:.*]] = tfc.pack_panels %[[WB]] : tensor<32x96xbf16> -> tensor<2x16x48x2xbf16>
// CHECK-NEXT: tfc.linear %{{.*}}, %[[WP]] {packed_n = 96 : i64} : (tensor<?x32xf32>, tensor<2x16x48x2xbf16>) -> tensor<?x96xf32>
func.func @merged_qkv(%x: tensor<?x32xf32>) -> tensor<?x96xf32> {
  %wq = tfc.param "h.0.q.weight" : tensor<32x32xf32>
  %wk = tfc.param "h.0.k.weight" : tensor<32x32xf32>
  %wv = tfc.param "h.0.v.weight" : tensor<32x32xf32>
  %w = tfc.concat %wq, %wk, %wv {axis = 0 : i64} : (tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<96x32xf32>
  %wt = tfc.transpose %w {perm = array<i64: 1, 0>} : tensor<96x32xf32> -> tensor<32x96xf32>
  %y = tfc.linear %x, %wt : (tensor<?x32xf32>, tensor<32x96xf32>) -> tensor<?x96xf32>
  return %y : tensor<?x96xf32>
}

// -----

// Fewer than 48 columns (one column tile of the bf16 kernel): stays f32.
// CHECK-LABEL: func.func @narrow
// CHECK-NOT: tfc.cast
// CHECK: tfc.matmul %{{.*}}, %{{.*}} : (tensor<?x64xf32>, tensor<64x32xf32>)
func.func @narrow(%x: tensor<?x64xf32>) -> tensor<?x32xf32> {
  %w = tfc.param "narrow.weight" : tensor<64x32xf32>
  %y = tfc.matmul %x, %w : (tensor<?x64xf32>, tensor<64x32xf32>) -> tensor<?x32xf32>
  return %y : tensor<?x32xf32>
}

// -----

// weight-layout's f32 panels (N = 100, a padded last panel): the bf16
// panels are packed from the f32 weight they were packed from, and the f32
// pack, left without readers, is erased.
// CHECK-LABEL: func.func @f32_panels
// CHECK: %[[W:.*]] = tfc.param "fc.weight" : tensor<100x64xf32>
// CHECK-NEXT: %[[WB:.*]] = tfc.cast %[[W]] : tensor<100x64xf32> to tensor<100x64xbf16>
// CHECK-NEXT: %[[WP:.*]] = tfc.pack_panels %[[WB]] {transpose_b = true} : tensor<100x64xbf16> -> tensor<3x32x48x2xbf16>
// CHECK-NEXT: tfc.linear %{{.*}}, %[[WP]] {packed_n = 100 : i64} : (tensor<?x64xf32>, tensor<3x32x48x2xbf16>) -> tensor<?x100xf32>
// CHECK-NOT: tfc.pack_panels
func.func @f32_panels(%x: tensor<?x64xf32>) -> tensor<?x100xf32> {
  %w = tfc.param "fc.weight" : tensor<100x64xf32>
  %p = tfc.pack_panels %w {transpose_b = true} : tensor<100x64xf32> -> tensor<3x64x48xf32>
  %y = tfc.linear %x, %p {packed_n = 100 : i64} : (tensor<?x64xf32>, tensor<3x64x48xf32>) -> tensor<?x100xf32>
  return %y : tensor<?x100xf32>
}

// -----

// A tied embedding (weight-layout: the LM head and the gather read the same
// f32 panels): the head reads bf16 panels, and the gather, the f32 panels'
// last reader, reads the f32 table as stored again (one f32 copy, rows in
// one line); the f32 panels are erased.
// CHECK-LABEL: func.func @tied_embedding
// CHECK: %[[E:.*]] = tfc.param "wte.weight" : tensor<100x64xf32>
// CHECK-NEXT: %[[EB:.*]] = tfc.cast %[[E]] : tensor<100x64xf32> to tensor<100x64xbf16>
// CHECK-NEXT: %[[EP:.*]] = tfc.pack_panels %[[EB]] {transpose_b = true} : tensor<100x64xbf16> -> tensor<3x32x48x2xbf16>
// CHECK-NEXT: tfc.gather %[[E]], %{{.*}} : (tensor<100x64xf32>, tensor<?xi32>) -> tensor<?x64xf32>
// CHECK-NEXT: tfc.matmul %{{.*}}, %[[EP]] {packed_n = 100 : i64} : (tensor<?x64xf32>, tensor<3x32x48x2xbf16>) -> tensor<?x100xf32>
// CHECK-NOT: tfc.pack_panels
func.func @tied_embedding(%ids: tensor<?xi32>) -> tensor<?x100xf32> {
  %e = tfc.param "wte.weight" : tensor<100x64xf32>
  %p = tfc.pack_panels %e {transpose_b = true} : tensor<100x64xf32> -> tensor<3x64x48xf32>
  %x = tfc.gather %p, %ids {packed_rows = 100 : i64} : (tensor<3x64x48xf32>, tensor<?xi32>) -> tensor<?x64xf32>
  %y = tfc.matmul %x, %p {packed_n = 100 : i64} : (tensor<?x64xf32>, tensor<3x64x48xf32>) -> tensor<?x100xf32>
  return %y : tensor<?x100xf32>
}
