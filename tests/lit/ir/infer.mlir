// Result type inference. The verifier requires each declared result type to
// equal the inferred one, so each positive case below is accepted only with
// exactly the inferred type, and each negative case prints the inferred type.
// RUN: tfc-opt %s -split-input-file -verify-diagnostics | FileCheck %s

// Broadcasting: `?` with 1 stays `?`, `?` with a static n > 1 becomes n,
// `?` with `?` stays `?`, missing leading dims count as 1.
// CHECK-LABEL: func.func @broadcast
func.func @broadcast(%a: tensor<?x1xf32>, %b: tensor<1x?xf32>, %c: tensor<?x768xf32>,
                     %d: tensor<4x768xf32>, %e: tensor<768xf32>, %f: tensor<2x3x768xf32>,
                     %s: tensor<f32>, %g: tensor<?x?xf32>) {
  // CHECK: -> tensor<?x?xf32>
  %0 = tfc.add %a, %b : (tensor<?x1xf32>, tensor<1x?xf32>) -> tensor<?x?xf32>
  // CHECK: -> tensor<4x768xf32>
  %1 = tfc.sub %c, %d : (tensor<?x768xf32>, tensor<4x768xf32>) -> tensor<4x768xf32>
  // CHECK: -> tensor<?x?xf32>
  %2 = tfc.mul %g, %g : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  // CHECK: -> tensor<2x3x768xf32>
  %3 = tfc.div %e, %f : (tensor<768xf32>, tensor<2x3x768xf32>) -> tensor<2x3x768xf32>
  // CHECK: -> tensor<?x768xf32>
  %4 = tfc.maximum %s, %c : (tensor<f32>, tensor<?x768xf32>) -> tensor<?x768xf32>
  // CHECK: -> tensor<?x768xi1>
  %5 = tfc.cmp lt, %c, %e : (tensor<?x768xf32>, tensor<768xf32>) -> tensor<?x768xi1>
  return
}

// -----

func.func @broadcast_dynamic_with_static(%c: tensor<?x768xf32>, %d: tensor<4x768xf32>) {
  // expected-error @+1 {{result type tensor<?x768xf32> differs from the inferred type tensor<4x768xf32>}}
  %0 = tfc.add %c, %d : (tensor<?x768xf32>, tensor<4x768xf32>) -> tensor<?x768xf32>
  return
}

// -----

func.func @broadcast_dynamic_with_one(%a: tensor<?x1xf32>, %b: tensor<1x1xf32>) {
  // expected-error @+1 {{differs from the inferred type tensor<?x1xf32>}}
  %0 = tfc.add %a, %b : (tensor<?x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  return
}

// -----

func.func @cmp_gives_i1(%a: tensor<?x4xi32>) {
  // expected-error @+1 {{differs from the inferred type tensor<?x4xi1>}}
  %0 = tfc.cmp eq, %a, %a : (tensor<?x4xi32>, tensor<?x4xi32>) -> tensor<?x4xi32>
  return
}

// -----

func.func @where_three_way(%m: tensor<?x1x?xi1>, %a: tensor<12x1xf32>, %b: tensor<f32>) {
  // expected-error @+1 {{differs from the inferred type tensor<?x12x?xf32>}}
  %0 = tfc.where %m, %a, %b : (tensor<?x1x?xi1>, tensor<12x1xf32>, tensor<f32>) -> tensor<?x?x?xf32>
  return
}

// -----

func.func @unary_keeps_type(%a: tensor<?x4xf32>) {
  // expected-error @+1 {{differs from the inferred type tensor<?x4xf32>}}
  %0 = "tfc.exp"(%a) : (tensor<?x4xf32>) -> tensor<3x4xf32>
  return
}

// -----

// CHECK-LABEL: func.func @matmul
func.func @matmul(%q: tensor<?x12x?x64xf32>, %w: tensor<64x32xf32>, %a: tensor<1x?x64xf32>,
                  %b: tensor<5x64x7xf32>, %wt: tensor<7x64xf32>) {
  // A rank-2 rhs multiplies every batch.
  // CHECK: -> tensor<?x12x?x32xf32>
  %0 = tfc.matmul %q, %w : (tensor<?x12x?x64xf32>, tensor<64x32xf32>) -> tensor<?x12x?x32xf32>
  // Batch dims broadcast.
  // CHECK: -> tensor<5x?x7xf32>
  %1 = tfc.matmul %a, %b : (tensor<1x?x64xf32>, tensor<5x64x7xf32>) -> tensor<5x?x7xf32>
  // transpose_b: rhs is [N, K].
  // CHECK: -> tensor<1x?x7xf32>
  %2 = tfc.matmul %a, %wt {transpose_b = true} : (tensor<1x?x64xf32>, tensor<7x64xf32>) -> tensor<1x?x7xf32>
  // Scores: [b, h, q, d] x [b, h, k, d]^T.
  // CHECK: -> tensor<?x12x?x?xf32>
  %3 = tfc.matmul %q, %q {transpose_b = true} : (tensor<?x12x?x64xf32>, tensor<?x12x?x64xf32>) -> tensor<?x12x?x?xf32>
  return
}

// -----

func.func @matmul_transpose_b(%a: tensor<2x3xf32>, %b: tensor<4x3xf32>) {
  // expected-error @+1 {{differs from the inferred type tensor<2x4xf32>}}
  %0 = tfc.matmul %a, %b {transpose_b = true} : (tensor<2x3xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  return
}

// -----

// CHECK-LABEL: func.func @movement
func.func @movement(%x: tensor<2x?x3x?x4xf32>, %h: tensor<?x12x?x64xf32>, %y: tensor<?x?x768xf32>,
                    %c0: tensor<?x12xf32>, %c1: tensor<4x12xf32>, %c2: tensor<4x5xf32>) {
  // Static dims are regrouped around the dynamic ones, which keep their order.
  // CHECK: -> tensor<6x?x?x4xf32>
  %0 = tfc.reshape %x {shape = array<i64: 6, -1, -1, 4>} : tensor<2x?x3x?x4xf32> -> tensor<6x?x?x4xf32>
  // CHECK: -> tensor<?x?x768xf32>
  %1 = tfc.transpose %h {perm = array<i64: 0, 2, 1, 3>} : tensor<?x12x?x64xf32> -> tensor<?x?x12x64xf32>
  %2 = tfc.reshape %1 {shape = array<i64: -1, -1, 768>} : tensor<?x?x12x64xf32> -> tensor<?x?x768xf32>
  // A slice of a dynamic dim has the static size end - start.
  // CHECK: -> tensor<?x5x768xf32>
  %3 = tfc.slice %y {axis = 1 : i64, start = 3 : i64, end = 8 : i64} : tensor<?x?x768xf32> -> tensor<?x5x768xf32>
  // With a step: ceil((end - start) / step) elements, 3, 5, 7 here.
  // CHECK: -> tensor<?x3x768xf32>
  %s = tfc.slice %y {axis = 1 : i64, start = 3 : i64, end = 8 : i64, step = 2 : i64} : tensor<?x?x768xf32> -> tensor<?x3x768xf32>
  // CHECK: -> tensor<?x?x384xf32>
  %e = tfc.slice %y {axis = 2 : i64, start = 0 : i64, end = 768 : i64, step = 2 : i64} : tensor<?x?x768xf32> -> tensor<?x?x384xf32>
  // concat: the axis dims add up, other dims take the static size.
  // CHECK: -> tensor<4x24xf32>
  %4 = tfc.concat %c0, %c1 {axis = 1 : i64} : (tensor<?x12xf32>, tensor<4x12xf32>) -> tensor<4x24xf32>
  // CHECK: -> tensor<?x12xf32>
  %5 = tfc.concat %c0, %c1 {axis = 0 : i64} : (tensor<?x12xf32>, tensor<4x12xf32>) -> tensor<?x12xf32>
  // CHECK: -> tensor<8x5xf32>
  %6 = tfc.concat %c2, %c2 {axis = 0 : i64} : (tensor<4x5xf32>, tensor<4x5xf32>) -> tensor<8x5xf32>
  return
}

// -----

func.func @slice_dynamic(%y: tensor<?x?x768xf32>) {
  // expected-error @+1 {{differs from the inferred type tensor<?x5x768xf32>}}
  %0 = tfc.slice %y {axis = 1 : i64, start = 3 : i64, end = 8 : i64} : tensor<?x?x768xf32> -> tensor<?x?x768xf32>
  return
}

// -----

// CHECK-LABEL: func.func @others
func.func @others(%t: tensor<100x16x4xf32>, %ids: tensor<?xi64>, %x: tensor<?x?x768xf32>,
                  %s: tensor<2x16xi32>, %k: tensor<?x12x?x64xf32>) {
  // CHECK: -> tensor<?x16x4xf32>
  %0 = tfc.gather %t, %ids : (tensor<100x16x4xf32>, tensor<?xi64>) -> tensor<?x16x4xf32>
  // CHECK: -> tensor<?x1x768xf32>
  %1 = tfc.reduce_max %x {axis = 1 : i64, keepdim = true} : tensor<?x?x768xf32> -> tensor<?x1x768xf32>
  // CHECK: -> tensor<?x768xf32>
  %2 = tfc.reduce_mean %x {axis = 1 : i64} : tensor<?x?x768xf32> -> tensor<?x768xf32>
  // CHECK: -> tensor<16xi32>
  %3 = tfc.positions %s {axis = 1 : i64} : tensor<2x16xi32> -> tensor<16xi32>
  // The offset does not change the length.
  // CHECK: -> tensor<16xi32>
  %4 = tfc.positions %s, %k {axis = 1 : i64, offset_axis = 2 : i64} : tensor<2x16xi32>, tensor<?x12x?x64xf32> -> tensor<16xi32>
  // CHECK: -> tensor<16x?xi1>
  %5 = tfc.causal_mask %s, %k {q_axis = 1 : i64, k_axis = 2 : i64} : (tensor<2x16xi32>, tensor<?x12x?x64xf32>) -> tensor<16x?xi1>
  return
}

// -----

// A gather from the [N, K] panels of a tied table: rows of D = 16.
// CHECK-LABEL: func.func @gather_panels
func.func @gather_panels(%p: tensor<3x16x48xf32>, %ids: tensor<2x?xi32>) {
  // CHECK: -> tensor<2x?x16xf32>
  %0 = tfc.gather %p, %ids {packed_rows = 100 : i64} : (tensor<3x16x48xf32>, tensor<2x?xi32>) -> tensor<2x?x16xf32>
  return
}

// -----

func.func @gather_shape(%t: tensor<100x16xf32>, %ids: tensor<2x?xi32>) {
  // expected-error @+1 {{differs from the inferred type tensor<2x?x16xf32>}}
  %0 = tfc.gather %t, %ids : (tensor<100x16xf32>, tensor<2x?xi32>) -> tensor<?x16xf32>
  return
}

// -----

func.func @positions_length(%ids: tensor<?x?xi32>) {
  // expected-error @+1 {{differs from the inferred type tensor<?xi32>}}
  %0 = tfc.positions %ids {axis = 1 : i64} : tensor<?x?xi32> -> tensor<?xi64>
  return
}
