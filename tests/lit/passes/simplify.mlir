// tfc-simplify: canonicalization plus the rewrites that put the graph into
// the form the fusion passes match.
// RUN: tfc-opt %s --tfc-simplify -split-input-file | FileCheck %s

// x @ transpose(w) -> matmul {transpose_b} (GPT-2's tied LM head).
// CHECK-LABEL: func.func @matmul_transposed_weight
// CHECK-NEXT: %[[W:.*]] = tfc.param "wte.weight"
// CHECK-NEXT: %[[Y:.*]] = tfc.matmul %arg0, %[[W]] {transpose_b = true} : (tensor<?x?x64xf32>, tensor<512x64xf32>) -> tensor<?x?x512xf32>
// CHECK-NEXT: return %[[Y]]
func.func @matmul_transposed_weight(%x: tensor<?x?x64xf32>) -> tensor<?x?x512xf32> {
  %w = tfc.param "wte.weight" : tensor<512x64xf32>
  %t = tfc.transpose %w {perm = array<i64: 1, 0>} : tensor<512x64xf32> -> tensor<64x512xf32>
  %y = tfc.matmul %x, %t : (tensor<?x?x64xf32>, tensor<64x512xf32>) -> tensor<?x?x512xf32>
  return %y : tensor<?x?x512xf32>
}

// -----

// q @ transpose(k, -2, -1) after the folder composed K's head split with
// K^T: transpose_b on K in [batch, heads, seq, dim] layout. The head split
// of V (last two axes in order) is left alone.
// CHECK-LABEL: func.func @scores
// CHECK-SAME: (%[[Q:.*]]: tensor<?x4x?x16xf32>, %[[KR:.*]]: tensor<?x?x4x16xf32>, %[[P:.*]]: tensor<?x4x?x?xf32>, %[[VR:.*]]: tensor<?x?x4x16xf32>)
// CHECK-NEXT: %[[K:.*]] = tfc.transpose %[[KR]] {perm = array<i64: 0, 2, 1, 3>} : tensor<?x?x4x16xf32> -> tensor<?x4x?x16xf32>
// CHECK-NEXT: %[[S:.*]] = tfc.matmul %[[Q]], %[[K]] {transpose_b = true} : (tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>) -> tensor<?x4x?x?xf32>
// CHECK-NEXT: %[[V:.*]] = tfc.transpose %[[VR]] {perm = array<i64: 0, 2, 1, 3>}
// CHECK-NEXT: %[[O:.*]] = tfc.matmul %[[P]], %[[V]] : (tensor<?x4x?x?xf32>, tensor<?x4x?x16xf32>) -> tensor<?x4x?x16xf32>
func.func @scores(%q: tensor<?x4x?x16xf32>, %kr: tensor<?x?x4x16xf32>, %p: tensor<?x4x?x?xf32>, %vr: tensor<?x?x4x16xf32>) -> (tensor<?x4x?x?xf32>, tensor<?x4x?x16xf32>) {
  %kt = tfc.transpose %kr {perm = array<i64: 0, 2, 3, 1>} : tensor<?x?x4x16xf32> -> tensor<?x4x16x?xf32>
  %s = tfc.matmul %q, %kt : (tensor<?x4x?x16xf32>, tensor<?x4x16x?xf32>) -> tensor<?x4x?x?xf32>
  %v = tfc.transpose %vr {perm = array<i64: 0, 2, 1, 3>} : tensor<?x?x4x16xf32> -> tensor<?x4x?x16xf32>
  %o = tfc.matmul %p, %v : (tensor<?x4x?x?xf32>, tensor<?x4x?x16xf32>) -> tensor<?x4x?x16xf32>
  return %s, %o : tensor<?x4x?x?xf32>, tensor<?x4x?x16xf32>
}

// -----

// masked_fill(s, not keep, v) = where(not keep, v, s) -> where(keep, s, v).
// CHECK-LABEL: func.func @where_of_not
// CHECK-NEXT: %[[F:.*]] = tfc.constant dense<-1.000000e+09>
// CHECK-NEXT: %[[W:.*]] = tfc.where %arg0, %arg1, %[[F]] : (tensor<?x1x1x?xi1>, tensor<?x4x?x?xf32>, tensor<f32>) -> tensor<?x4x?x?xf32>
// CHECK-NEXT: return %[[W]]
func.func @where_of_not(%keep: tensor<?x1x1x?xi1>, %s: tensor<?x4x?x?xf32>) -> tensor<?x4x?x?xf32> {
  %n = tfc.not %keep : tensor<?x1x1x?xi1>
  %f = tfc.constant dense<-1.0e9> : tensor<f32>
  %w = tfc.where %n, %f, %s : (tensor<?x1x1x?xi1>, tensor<f32>, tensor<?x4x?x?xf32>) -> tensor<?x4x?x?xf32>
  return %w : tensor<?x4x?x?xf32>
}

// -----

// Adjacent slices of one tensor, concatenated: the tensor itself, or one
// slice.
// CHECK-LABEL: func.func @concat_of_slices
// CHECK-SAME: (%[[W:.*]]: tensor<96x32xf32>)
// CHECK-NEXT: %[[S:.*]] = tfc.slice %[[W]] {axis = 0 : i64, end = 64 : i64, start = 32 : i64} : tensor<96x32xf32> -> tensor<32x32xf32>
// CHECK-NEXT: %[[P:.*]] = tfc.slice %[[W]] {axis = 0 : i64, end = 96 : i64, start = 32 : i64} : tensor<96x32xf32> -> tensor<64x32xf32>
// CHECK-NEXT: %[[C:.*]] = tfc.concat %[[P]], %[[S]] {axis = 0 : i64}
// CHECK-NEXT: return %[[W]], %[[C]]
func.func @concat_of_slices(%w: tensor<96x32xf32>) -> (tensor<96x32xf32>, tensor<96x32xf32>) {
  %a = tfc.slice %w {axis = 0 : i64, start = 0 : i64, end = 32 : i64} : tensor<96x32xf32> -> tensor<32x32xf32>
  %b = tfc.slice %w {axis = 0 : i64, start = 32 : i64, end = 64 : i64} : tensor<96x32xf32> -> tensor<32x32xf32>
  %c = tfc.slice %w {axis = 0 : i64, start = 64 : i64, end = 96 : i64} : tensor<96x32xf32> -> tensor<32x32xf32>
  %all = tfc.concat %a, %b, %c {axis = 0 : i64} : (tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<96x32xf32>
  %mixed = tfc.concat %b, %c, %b {axis = 0 : i64} : (tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<96x32xf32>
  return %all, %mixed : tensor<96x32xf32>, tensor<96x32xf32>
}

// -----

// Slices with a step are not adjacent ranges: their concat stays.
// CHECK-LABEL: func.func @concat_of_step_slices
// CHECK: %[[A:.*]] = tfc.slice %{{.*}} {axis = 0 : i64, end = 32 : i64, start = 0 : i64, step = 2 : i64}
// CHECK: %[[B:.*]] = tfc.slice %{{.*}} {axis = 0 : i64, end = 64 : i64, start = 32 : i64, step = 2 : i64}
// CHECK: tfc.concat %[[A]], %[[B]] {axis = 0 : i64}
func.func @concat_of_step_slices(%w: tensor<64x32xf32>) -> tensor<32x32xf32> {
  %a = tfc.slice %w {axis = 0 : i64, start = 0 : i64, end = 32 : i64, step = 2 : i64} : tensor<64x32xf32> -> tensor<16x32xf32>
  %b = tfc.slice %w {axis = 0 : i64, start = 32 : i64, end = 64 : i64, step = 2 : i64} : tensor<64x32xf32> -> tensor<16x32xf32>
  %c = tfc.concat %a, %b {axis = 0 : i64} : (tensor<16x32xf32>, tensor<16x32xf32>) -> tensor<32x32xf32>
  return %c : tensor<32x32xf32>
}

// -----

// The head split after a merged Q/K/V projection: each slice of the last
// axis, split into heads, becomes a slice of whole heads of one reshape of
// the projection (CSE makes the reshapes one); the innermost axis stays
// dense, so the executor binds the slices as strided views.
// CHECK-LABEL: func.func @reshape_of_slice
// CHECK-SAME: (%[[X:.*]]: tensor<?x?x192xf32>)
// CHECK-NEXT: %[[R0:.*]] = tfc.reshape %[[X]] {shape = array<i64: -1, -1, 12, 16>} : tensor<?x?x192xf32> -> tensor<?x?x12x16xf32>
// CHECK-NEXT: %[[Q:.*]] = tfc.slice %[[R0]] {axis = 2 : i64, end = 4 : i64, start = 0 : i64} : tensor<?x?x12x16xf32> -> tensor<?x?x4x16xf32>
// CHECK-NEXT: %[[R1:.*]] = tfc.reshape %[[X]] {shape = array<i64: -1, -1, 12, 16>}
// CHECK-NEXT: %[[K:.*]] = tfc.slice %[[R1]] {axis = 2 : i64, end = 12 : i64, start = 8 : i64} : tensor<?x?x12x16xf32> -> tensor<?x?x4x16xf32>
// CHECK-NEXT: return %[[Q]], %[[K]]
func.func @reshape_of_slice(%x: tensor<?x?x192xf32>) -> (tensor<?x?x4x16xf32>, tensor<?x?x4x16xf32>) {
  %q = tfc.slice %x {axis = 2 : i64, start = 0 : i64, end = 64 : i64} : tensor<?x?x192xf32> -> tensor<?x?x64xf32>
  %k = tfc.slice %x {axis = 2 : i64, start = 128 : i64, end = 192 : i64} : tensor<?x?x192xf32> -> tensor<?x?x64xf32>
  %qh = tfc.reshape %q {shape = array<i64: -1, -1, 4, 16>} : tensor<?x?x64xf32> -> tensor<?x?x4x16xf32>
  %kh = tfc.reshape %k {shape = array<i64: -1, -1, 4, 16>} : tensor<?x?x64xf32> -> tensor<?x?x4x16xf32>
  return %qh, %kh : tensor<?x?x4x16xf32>, tensor<?x?x4x16xf32>
}

// -----

// Left alone: a slice start that is not a multiple of the head size, a
// reshape that regroups more than the sliced axis, a slice of an inner axis.
// CHECK-LABEL: func.func @reshape_of_slice_kept
// CHECK-NEXT: %[[A:.*]] = tfc.slice %arg0 {axis = 2 : i64, end = 72 : i64, start = 8 : i64}
// CHECK-NEXT: tfc.reshape %[[A]] {shape = array<i64: -1, 2, 4, 16>}
// CHECK-NEXT: %[[B:.*]] = tfc.slice %arg0 {axis = 2 : i64, end = 64 : i64, start = 0 : i64}
// CHECK-NEXT: tfc.reshape %[[B]] {shape = array<i64: -1, 4, 2, 16>}
// CHECK-NEXT: %[[C:.*]] = tfc.slice %arg1 {axis = 1 : i64, end = 2 : i64, start = 0 : i64}
// CHECK-NEXT: tfc.reshape %[[C]] {shape = array<i64: -1, 2, 4, 16>}
func.func @reshape_of_slice_kept(%x: tensor<?x2x192xf32>, %y: tensor<?x4x64xf32>) -> (tensor<?x2x4x16xf32>, tensor<?x4x2x16xf32>, tensor<?x2x4x16xf32>) {
  %a = tfc.slice %x {axis = 2 : i64, start = 8 : i64, end = 72 : i64} : tensor<?x2x192xf32> -> tensor<?x2x64xf32>
  %ah = tfc.reshape %a {shape = array<i64: -1, 2, 4, 16>} : tensor<?x2x64xf32> -> tensor<?x2x4x16xf32>
  %b = tfc.slice %x {axis = 2 : i64, start = 0 : i64, end = 64 : i64} : tensor<?x2x192xf32> -> tensor<?x2x64xf32>
  %bh = tfc.reshape %b {shape = array<i64: -1, 4, 2, 16>} : tensor<?x2x64xf32> -> tensor<?x4x2x16xf32>
  %c = tfc.slice %y {axis = 1 : i64, start = 0 : i64, end = 2 : i64} : tensor<?x4x64xf32> -> tensor<?x2x64xf32>
  %ch = tfc.reshape %c {shape = array<i64: -1, 2, 4, 16>} : tensor<?x2x64xf32> -> tensor<?x2x4x16xf32>
  return %ah, %bh, %ch : tensor<?x2x4x16xf32>, tensor<?x4x2x16xf32>, tensor<?x2x4x16xf32>
}
