// weight-layout: products on weights read them laid out once in column
// panels (tfc.pack_panels, packed_n = N), or, narrower than a panel, as
// [K, N] (tfc.transpose for transpose_b) -- unless a parameter of the
// weight is also read by something else (then a copy would be stored next
// to it); a tied embedding's gathers read the LM head's panels.
// RUN: tfc-opt %s --weight-layout -split-input-file | FileCheck %s

// nn.Linear weights ([N, K], N = 128: 3 panels, the last one padded), one
// pack per weight value, shared by its two products; a matmul and a
// linear. A [K, N] weight narrower than a panel (N = 32) and a batched
// product (attention scores) are left alone.
// CHECK-LABEL: func.func @nn_linear
// CHECK-SAME: (%[[X:.*]]: tensor<?x?x64xf32>, %[[K:.*]]: tensor<?x4x?x16xf32>)
// CHECK: %[[W:.*]] = tfc.param "l.0.weight" : tensor<128x64xf32>
// CHECK-NEXT: %[[WP:.*]] = tfc.pack_panels %[[W]] {transpose_b = true} : tensor<128x64xf32> -> tensor<3x64x48xf32>
// CHECK-NEXT: %[[B:.*]] = tfc.param "l.0.bias"
// CHECK-NEXT: %[[H:.*]] = tfc.linear %[[X]], %[[WP]], %[[B]] {activation = "gelu", packed_n = 128 : i64} : (tensor<?x?x64xf32>, tensor<3x64x48xf32>, tensor<128xf32>) -> tensor<?x?x128xf32>
// CHECK-NEXT: %[[H2:.*]] = tfc.matmul %[[X]], %[[WP]] {packed_n = 128 : i64} : (tensor<?x?x64xf32>, tensor<3x64x48xf32>) -> tensor<?x?x128xf32>
// CHECK-NEXT: %[[V:.*]] = tfc.param "l.1.weight" : tensor<128x32xf32>
// CHECK-NEXT: tfc.matmul %[[H]], %[[V]] : (tensor<?x?x128xf32>, tensor<128x32xf32>) -> tensor<?x?x32xf32>
// CHECK-NEXT: tfc.matmul %[[K]], %[[K]] {transpose_b = true}
// CHECK-NOT: tfc.transpose
// CHECK-NOT: tfc.pack_panels
func.func @nn_linear(%x: tensor<?x?x64xf32>, %k: tensor<?x4x?x16xf32>) -> (tensor<?x?x128xf32>, tensor<?x?x32xf32>, tensor<?x4x?x?xf32>) {
  %w = tfc.param "l.0.weight" : tensor<128x64xf32>
  %b = tfc.param "l.0.bias" : tensor<128xf32>
  %h = tfc.linear %x, %w, %b {transpose_b = true, activation = "gelu"} : (tensor<?x?x64xf32>, tensor<128x64xf32>, tensor<128xf32>) -> tensor<?x?x128xf32>
  %h2 = tfc.matmul %x, %w {transpose_b = true} : (tensor<?x?x64xf32>, tensor<128x64xf32>) -> tensor<?x?x128xf32>
  %v = tfc.param "l.1.weight" : tensor<128x32xf32>
  %y = tfc.matmul %h, %v : (tensor<?x?x128xf32>, tensor<128x32xf32>) -> tensor<?x?x32xf32>
  %s = tfc.matmul %k, %k {transpose_b = true} : (tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>) -> tensor<?x4x?x?xf32>
  return %h, %y, %s : tensor<?x?x128xf32>, tensor<?x?x32xf32>, tensor<?x4x?x?xf32>
}

// -----

// A merged QKV weight (a concatenation of params) is packed as a whole.
// CHECK-LABEL: func.func @merged_qkv
// CHECK: %[[W:.*]] = tfc.concat
// CHECK-NEXT: %[[WP:.*]] = tfc.pack_panels %[[W]] {transpose_b = true} : tensor<96x32xf32> -> tensor<2x32x48xf32>
// CHECK-NEXT: tfc.linear %{{.*}}, %[[WP]] {packed_n = 96 : i64} : (tensor<?x32xf32>, tensor<2x32x48xf32>) -> tensor<?x96xf32>
func.func @merged_qkv(%x: tensor<?x32xf32>) -> tensor<?x96xf32> {
  %wq = tfc.param "h.0.q.weight" : tensor<32x32xf32>
  %wk = tfc.param "h.0.k.weight" : tensor<32x32xf32>
  %wv = tfc.param "h.0.v.weight" : tensor<32x32xf32>
  %w = tfc.concat %wq, %wk, %wv {axis = 0 : i64} : (tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<96x32xf32>
  %y = tfc.linear %x, %w {transpose_b = true} : (tensor<?x32xf32>, tensor<96x32xf32>) -> tensor<?x96xf32>
  return %y : tensor<?x96xf32>
}

// -----

// GPT-2's tied LM head: wte is also gathered by the embedding, in another
// entry function and through another tfc.param op of the same name. The
// head reads its [vocab, d] panels, and every gather of wte reads the same
// panels (packed_rows): one copy. A table only gathered (wpe) stays.
// CHECK-LABEL: func.func @embed
// CHECK: %[[E:.*]] = tfc.param "wte.weight" : tensor<100x16xf32>
// CHECK-NEXT: %[[EP:.*]] = tfc.pack_panels %[[E]] {transpose_b = true} : tensor<100x16xf32> -> tensor<3x16x48xf32>
// CHECK-NEXT: tfc.gather %[[EP]], %{{.*}} {packed_rows = 100 : i64} : (tensor<3x16x48xf32>, tensor<?x?xi32>) -> tensor<?x?x16xf32>
// CHECK-NEXT: %[[P:.*]] = tfc.param "wpe.weight" : tensor<64x16xf32>
// CHECK-NEXT: tfc.gather %[[P]], %{{.*}} : (tensor<64x16xf32>, tensor<?xi32>) -> tensor<?x16xf32>
// CHECK-LABEL: func.func @head
// CHECK: %[[E:.*]] = tfc.param "wte.weight" : tensor<100x16xf32>
// CHECK-NEXT: %[[EP:.*]] = tfc.pack_panels %[[E]] {transpose_b = true} : tensor<100x16xf32> -> tensor<3x16x48xf32>
// CHECK-NEXT: tfc.matmul %{{.*}}, %[[EP]] {packed_n = 100 : i64} : (tensor<?x?x16xf32>, tensor<3x16x48xf32>) -> tensor<?x?x100xf32>
// CHECK-NOT: tfc.transpose
func.func @embed(%ids: tensor<?x?xi32>, %pos: tensor<?xi32>) -> (tensor<?x?x16xf32>, tensor<?x16xf32>) {
  %wte = tfc.param "wte.weight" : tensor<100x16xf32>
  %x = tfc.gather %wte, %ids : (tensor<100x16xf32>, tensor<?x?xi32>) -> tensor<?x?x16xf32>
  %wpe = tfc.param "wpe.weight" : tensor<64x16xf32>
  %p = tfc.gather %wpe, %pos : (tensor<64x16xf32>, tensor<?xi32>) -> tensor<?x16xf32>
  return %x, %p : tensor<?x?x16xf32>, tensor<?x16xf32>
}
func.func @head(%x: tensor<?x?x16xf32>) -> tensor<?x?x100xf32> {
  %wte = tfc.param "wte.weight" : tensor<100x16xf32>
  %y = tfc.matmul %x, %wte {transpose_b = true} : (tensor<?x?x16xf32>, tensor<100x16xf32>) -> tensor<?x?x100xf32>
  return %y : tensor<?x?x100xf32>
}

// -----

// A gathered table that a product reads as [K, N] (its panels could not
// serve the gather), or that is also read some other way, stays as it is.
// CHECK-LABEL: func.func @gathered_kn
// CHECK-NOT: tfc.pack_panels
// CHECK: tfc.gather %{{.*}}, %{{.*}} : (tensor<100x64xf32>
// CHECK: tfc.matmul %{{.*}}, %{{.*}} : (tensor<?x100xf32>, tensor<100x64xf32>)
// CHECK: tfc.gather %{{.*}}, %{{.*}} : (tensor<100x16xf32>
// CHECK: tfc.matmul %{{.*}}, %{{.*}} {transpose_b = true}
// CHECK-NOT: tfc.pack_panels
func.func @gathered_kn(%ids: tensor<?xi32>, %x: tensor<?x100xf32>, %y: tensor<?x16xf32>) -> (tensor<?x64xf32>, tensor<?x64xf32>, tensor<?x16xf32>, tensor<?x100xf32>, tensor<100x16xf32>) {
  %w = tfc.param "kn.weight" : tensor<100x64xf32>
  %g = tfc.gather %w, %ids : (tensor<100x64xf32>, tensor<?xi32>) -> tensor<?x64xf32>
  %h = tfc.matmul %x, %w : (tensor<?x100xf32>, tensor<100x64xf32>) -> tensor<?x64xf32>
  %t = tfc.param "other.weight" : tensor<100x16xf32>
  %g2 = tfc.gather %t, %ids : (tensor<100x16xf32>, tensor<?xi32>) -> tensor<?x16xf32>
  %h2 = tfc.matmul %y, %t {transpose_b = true} : (tensor<?x16xf32>, tensor<100x16xf32>) -> tensor<?x100xf32>
  %n = tfc.neg %t : tensor<100x16xf32>
  return %g, %h, %g2, %h2, %n : tensor<?x64xf32>, tensor<?x64xf32>, tensor<?x16xf32>, tensor<?x100xf32>, tensor<100x16xf32>
}

// A weight also read in [N, K] orientation by a plain product (here through
// a slice) stays as it is for both.
// CHECK-LABEL: func.func @shared_orientation
// CHECK-NOT: tfc.transpose
// CHECK-NOT: tfc.pack_panels
// CHECK: tfc.matmul %{{.*}}, %{{.*}} {transpose_b = true}
func.func @shared_orientation(%x: tensor<?x8xf32>, %y: tensor<?x4xf32>) -> (tensor<?x4xf32>, tensor<?x8xf32>) {
  %w = tfc.param "w" : tensor<4x8xf32>
  %a = tfc.matmul %x, %w {transpose_b = true} : (tensor<?x8xf32>, tensor<4x8xf32>) -> tensor<?x4xf32>
  %s = tfc.slice %w {axis = 0 : i64, start = 0 : i64, end = 4 : i64} : tensor<4x8xf32> -> tensor<4x8xf32>
  %b = tfc.matmul %y, %s : (tensor<?x4xf32>, tensor<4x8xf32>) -> tensor<?x8xf32>
  return %a, %b : tensor<?x4xf32>, tensor<?x8xf32>
}

// -----

// GPT-2's Conv1D weights are [K, N] already: packed without transpose_b,
// N = 100 (3 panels, the last with 4 columns); an [N, K] weight narrower
// than a panel (N = 8) is read through a transpose, as [K, N].
// CHECK-LABEL: func.func @conv1d
// CHECK: %[[W:.*]] = tfc.param "c_fc.weight" : tensor<32x100xf32>
// CHECK-NEXT: %[[WP:.*]] = tfc.pack_panels %[[W]] : tensor<32x100xf32> -> tensor<3x32x48xf32>
// CHECK: %[[S:.*]] = tfc.param "small.weight" : tensor<8x100xf32>
// CHECK-NEXT: %[[ST:.*]] = tfc.transpose %[[S]] {perm = array<i64: 1, 0>} : tensor<8x100xf32> -> tensor<100x8xf32>
// CHECK: tfc.linear %{{.*}}, %[[WP]], %{{.*}} {packed_n = 100 : i64} : (tensor<?x32xf32>, tensor<3x32x48xf32>, tensor<100xf32>) -> tensor<?x100xf32>
// CHECK-NEXT: tfc.matmul %{{.*}}, %[[ST]] : (tensor<?x100xf32>, tensor<100x8xf32>) -> tensor<?x8xf32>
func.func @conv1d(%x: tensor<?x32xf32>) -> tensor<?x8xf32> {
  %w = tfc.param "c_fc.weight" : tensor<32x100xf32>
  %b = tfc.param "c_fc.bias" : tensor<100xf32>
  %s = tfc.param "small.weight" : tensor<8x100xf32>
  %h = tfc.linear %x, %w, %b : (tensor<?x32xf32>, tensor<32x100xf32>, tensor<100xf32>) -> tensor<?x100xf32>
  %y = tfc.matmul %h, %s {transpose_b = true} : (tensor<?x100xf32>, tensor<8x100xf32>) -> tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}
