// Round trip of every primitive op through the custom assembly format.
// RUN: tfc-opt %s | tfc-opt | FileCheck %s

// CHECK-LABEL: func.func @values
func.func @values() -> (tensor<768xf32>, tensor<f32>, tensor<2x2xi32>, tensor<3xi1>) {
  // CHECK: tfc.param "h.0.ln_1.weight" : tensor<768xf32>
  %0 = tfc.param "h.0.ln_1.weight" : tensor<768xf32>
  // CHECK: tfc.constant dense<1.250000e-01> : tensor<f32>
  %1 = tfc.constant dense<0.125> : tensor<f32>
  // CHECK: tfc.constant dense<{{\[}}[1, 2], [3, 4]]> : tensor<2x2xi32>
  %2 = tfc.constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi32>
  // CHECK: tfc.constant dense<[true, false, true]> : tensor<3xi1>
  %3 = tfc.constant dense<[true, false, true]> : tensor<3xi1>
  return %0, %1, %2, %3 : tensor<768xf32>, tensor<f32>, tensor<2x2xi32>, tensor<3xi1>
}

// CHECK-LABEL: func.func @binary
func.func @binary(%x: tensor<?x?x768xf32>, %b: tensor<768xf32>, %s: tensor<f32>,
                  %i: tensor<?x?xi32>, %m: tensor<?x?xi1>, %n: tensor<?x1xi1>) {
  // CHECK: tfc.add %{{.*}}, %{{.*}} : (tensor<?x?x768xf32>, tensor<768xf32>) -> tensor<?x?x768xf32>
  %0 = tfc.add %x, %b : (tensor<?x?x768xf32>, tensor<768xf32>) -> tensor<?x?x768xf32>
  // CHECK: tfc.sub %{{.*}}, %{{.*}} : (tensor<?x?x768xf32>, tensor<768xf32>) -> tensor<?x?x768xf32>
  %1 = tfc.sub %x, %b : (tensor<?x?x768xf32>, tensor<768xf32>) -> tensor<?x?x768xf32>
  // CHECK: tfc.mul %{{.*}}, %{{.*}} : (tensor<?x?x768xf32>, tensor<f32>) -> tensor<?x?x768xf32>
  %2 = tfc.mul %x, %s : (tensor<?x?x768xf32>, tensor<f32>) -> tensor<?x?x768xf32>
  // CHECK: tfc.div %{{.*}}, %{{.*}} : (tensor<f32>, tensor<?x?x768xf32>) -> tensor<?x?x768xf32>
  %3 = tfc.div %s, %x : (tensor<f32>, tensor<?x?x768xf32>) -> tensor<?x?x768xf32>
  // CHECK: tfc.pow %{{.*}}, %{{.*}} : (tensor<?x?x768xf32>, tensor<f32>) -> tensor<?x?x768xf32>
  %4 = tfc.pow %x, %s : (tensor<?x?x768xf32>, tensor<f32>) -> tensor<?x?x768xf32>
  // CHECK: tfc.maximum %{{.*}}, %{{.*}} : (tensor<?x?x768xf32>, tensor<?x?x768xf32>) -> tensor<?x?x768xf32>
  %5 = tfc.maximum %x, %x : (tensor<?x?x768xf32>, tensor<?x?x768xf32>) -> tensor<?x?x768xf32>
  // CHECK: tfc.minimum %{{.*}}, %{{.*}} : (tensor<?x?xi32>, tensor<?x?xi32>) -> tensor<?x?xi32>
  %6 = tfc.minimum %i, %i : (tensor<?x?xi32>, tensor<?x?xi32>) -> tensor<?x?xi32>
  // CHECK: tfc.and %{{.*}}, %{{.*}} : (tensor<?x?xi1>, tensor<?x1xi1>) -> tensor<?x?xi1>
  %7 = tfc.and %m, %n : (tensor<?x?xi1>, tensor<?x1xi1>) -> tensor<?x?xi1>
  // CHECK: tfc.or %{{.*}}, %{{.*}} : (tensor<?x?xi1>, tensor<?x?xi1>) -> tensor<?x?xi1>
  %8 = tfc.or %m, %m : (tensor<?x?xi1>, tensor<?x?xi1>) -> tensor<?x?xi1>
  return
}

// CHECK-LABEL: func.func @compare
func.func @compare(%x: tensor<?x?x768xf32>, %s: tensor<f32>, %i: tensor<?x?xi32>, %p: tensor<i32>) {
  // CHECK: tfc.cmp eq, %{{.*}}, %{{.*}} : (tensor<?x?xi32>, tensor<i32>) -> tensor<?x?xi1>
  %0 = tfc.cmp eq, %i, %p : (tensor<?x?xi32>, tensor<i32>) -> tensor<?x?xi1>
  // CHECK: tfc.cmp ne, %{{.*}}, %{{.*}} : (tensor<?x?xi32>, tensor<i32>) -> tensor<?x?xi1>
  %1 = tfc.cmp ne, %i, %p : (tensor<?x?xi32>, tensor<i32>) -> tensor<?x?xi1>
  // CHECK: tfc.cmp lt, %{{.*}}, %{{.*}} : (tensor<?x?x768xf32>, tensor<f32>) -> tensor<?x?x768xi1>
  %2 = tfc.cmp lt, %x, %s : (tensor<?x?x768xf32>, tensor<f32>) -> tensor<?x?x768xi1>
  // CHECK: tfc.cmp le, %{{.*}}, %{{.*}} : (tensor<?x?x768xf32>, tensor<f32>) -> tensor<?x?x768xi1>
  %3 = tfc.cmp le, %x, %s : (tensor<?x?x768xf32>, tensor<f32>) -> tensor<?x?x768xi1>
  // CHECK: tfc.cmp gt, %{{.*}}, %{{.*}} : (tensor<?x?x768xf32>, tensor<f32>) -> tensor<?x?x768xi1>
  %4 = tfc.cmp gt, %x, %s : (tensor<?x?x768xf32>, tensor<f32>) -> tensor<?x?x768xi1>
  // CHECK: tfc.cmp ge, %{{.*}}, %{{.*}} : (tensor<?x?x768xf32>, tensor<f32>) -> tensor<?x?x768xi1>
  %5 = tfc.cmp ge, %x, %s : (tensor<?x?x768xf32>, tensor<f32>) -> tensor<?x?x768xi1>
  // The predicate may also be quoted, as the generic form stores it.
  // CHECK: tfc.cmp le, %{{.*}}, %{{.*}} : (tensor<?x?xi32>, tensor<i32>) -> tensor<?x?xi1>
  %le = tfc.cmp "le", %i, %p : (tensor<?x?xi32>, tensor<i32>) -> tensor<?x?xi1>
  // CHECK: tfc.where %{{.*}}, %{{.*}}, %{{.*}} : (tensor<?x?xi1>, tensor<?x12x?x?xf32>, tensor<f32>) -> tensor<?x12x?x?xf32>
  %scores = tfc.param "scores" : tensor<1x12x1x1xf32>
  %mask = tfc.cmp eq, %i, %p : (tensor<?x?xi32>, tensor<i32>) -> tensor<?x?xi1>
  %x4 = tfc.reshape %x {shape = array<i64: -1, -1, 12, 64>} : tensor<?x?x768xf32> -> tensor<?x?x12x64xf32>
  %q = tfc.transpose %x4 {perm = array<i64: 0, 2, 1, 3>} : tensor<?x?x12x64xf32> -> tensor<?x12x?x64xf32>
  %sc = tfc.matmul %q, %q {transpose_b = true} : (tensor<?x12x?x64xf32>, tensor<?x12x?x64xf32>) -> tensor<?x12x?x?xf32>
  %6 = tfc.where %mask, %sc, %s : (tensor<?x?xi1>, tensor<?x12x?x?xf32>, tensor<f32>) -> tensor<?x12x?x?xf32>
  return
}

// CHECK-LABEL: func.func @unary
func.func @unary(%x: tensor<?x?x768xf32>, %i: tensor<?x?xi32>, %m: tensor<?x?xi1>) {
  // CHECK: tfc.neg %{{.*}} : tensor<?x?x768xf32>
  %0 = tfc.neg %x : tensor<?x?x768xf32>
  // CHECK: tfc.neg %{{.*}} : tensor<?x?xi32>
  %1 = tfc.neg %i : tensor<?x?xi32>
  // CHECK: tfc.exp %{{.*}} : tensor<?x?x768xf32>
  %2 = tfc.exp %x : tensor<?x?x768xf32>
  // CHECK: tfc.log %{{.*}} : tensor<?x?x768xf32>
  %3 = tfc.log %x : tensor<?x?x768xf32>
  // CHECK: tfc.sqrt %{{.*}} : tensor<?x?x768xf32>
  %4 = tfc.sqrt %x : tensor<?x?x768xf32>
  // CHECK: tfc.rsqrt %{{.*}} : tensor<?x?x768xf32>
  %5 = tfc.rsqrt %x : tensor<?x?x768xf32>
  // CHECK: tfc.tanh %{{.*}} : tensor<?x?x768xf32>
  %6 = tfc.tanh %x : tensor<?x?x768xf32>
  // CHECK: tfc.erf %{{.*}} : tensor<?x?x768xf32>
  %7 = tfc.erf %x : tensor<?x?x768xf32>
  // CHECK: tfc.relu %{{.*}} : tensor<?x?x768xf32>
  %8 = tfc.relu %x : tensor<?x?x768xf32>
  // CHECK: tfc.silu %{{.*}} : tensor<?x?x768xf32>
  %9 = tfc.silu %x : tensor<?x?x768xf32>
  // CHECK: tfc.sigmoid %{{.*}} : tensor<?x?x768xf32>
  %10 = tfc.sigmoid %x : tensor<?x?x768xf32>
  // CHECK: tfc.sin %{{.*}} : tensor<?x?x768xf32>
  %s = tfc.sin %x : tensor<?x?x768xf32>
  // CHECK: tfc.cos %{{.*}} : tensor<?x?x768xf32>
  %c = tfc.cos %x : tensor<?x?x768xf32>
  // CHECK: tfc.not %{{.*}} : tensor<?x?xi1>
  %11 = tfc.not %m : tensor<?x?xi1>
  // The default approximation is not printed.
  // CHECK: tfc.gelu %{{.*}} : tensor<?x?x768xf32>
  %12 = tfc.gelu %x : tensor<?x?x768xf32>
  // CHECK: tfc.gelu %{{.*}} : tensor<?x?x768xf32>
  %13 = tfc.gelu %x {approximate = "none"} : tensor<?x?x768xf32>
  // CHECK: tfc.gelu %{{.*}} {approximate = "tanh"} : tensor<?x?x768xf32>
  %14 = tfc.gelu %x {approximate = "tanh"} : tensor<?x?x768xf32>
  // CHECK: tfc.cast %{{.*}} : tensor<?x?xi1> to tensor<?x?xf32>
  %15 = tfc.cast %m : tensor<?x?xi1> to tensor<?x?xf32>
  // CHECK: tfc.cast %{{.*}} : tensor<?x?xi32> to tensor<?x?xi64>
  %16 = tfc.cast %i : tensor<?x?xi32> to tensor<?x?xi64>
  return
}

// CHECK-LABEL: func.func @linear
func.func @linear(%x: tensor<?x?x768xf32>, %q: tensor<?x12x?x64xf32>) {
  %w = tfc.param "h.0.attn.c_attn.weight" : tensor<768x2304xf32>
  %wt = tfc.param "encoder.layer.0.attention.self.query.weight" : tensor<768x768xf32>
  // CHECK: tfc.matmul %{{.*}}, %{{.*}} : (tensor<?x?x768xf32>, tensor<768x2304xf32>) -> tensor<?x?x2304xf32>
  %0 = tfc.matmul %x, %w : (tensor<?x?x768xf32>, tensor<768x2304xf32>) -> tensor<?x?x2304xf32>
  // CHECK: tfc.matmul %{{.*}}, %{{.*}} {transpose_b = true} : (tensor<?x?x768xf32>, tensor<768x768xf32>) -> tensor<?x?x768xf32>
  %1 = tfc.matmul %x, %wt {transpose_b = true} : (tensor<?x?x768xf32>, tensor<768x768xf32>) -> tensor<?x?x768xf32>
  // The default is not printed.
  // CHECK: tfc.matmul %{{.*}}, %{{.*}} : (tensor<?x12x?x64xf32>, tensor<?x12x64x?xf32>) -> tensor<?x12x?x?xf32>
  %kt = tfc.transpose %q {perm = array<i64: 0, 1, 3, 2>} : tensor<?x12x?x64xf32> -> tensor<?x12x64x?xf32>
  %2 = tfc.matmul %q, %kt {transpose_b = false} : (tensor<?x12x?x64xf32>, tensor<?x12x64x?xf32>) -> tensor<?x12x?x?xf32>
  return
}

// CHECK-LABEL: func.func @movement
func.func @movement(%x: tensor<?x?x2304xf32>, %past: tensor<?x12x?x64xf32>,
                    %new: tensor<?x12x1x64xf32>, %ids: tensor<?x?xi32>) {
  // CHECK: tfc.slice %{{.*}} {axis = 2 : i64, end = 1536 : i64, start = 768 : i64} : tensor<?x?x2304xf32> -> tensor<?x?x768xf32>
  %0 = tfc.slice %x {axis = 2 : i64, start = 768 : i64, end = 1536 : i64} : tensor<?x?x2304xf32> -> tensor<?x?x768xf32>
  // CHECK: tfc.reshape %{{.*}} {shape = array<i64: -1, -1, 12, 64>} : tensor<?x?x768xf32> -> tensor<?x?x12x64xf32>
  %1 = tfc.reshape %0 {shape = array<i64: -1, -1, 12, 64>} : tensor<?x?x768xf32> -> tensor<?x?x12x64xf32>
  // CHECK: tfc.transpose %{{.*}} {perm = array<i64: 0, 2, 1, 3>} : tensor<?x?x12x64xf32> -> tensor<?x12x?x64xf32>
  %2 = tfc.transpose %1 {perm = array<i64: 0, 2, 1, 3>} : tensor<?x?x12x64xf32> -> tensor<?x12x?x64xf32>
  // CHECK: tfc.concat %{{.*}}, %{{.*}} {axis = 2 : i64} : (tensor<?x12x?x64xf32>, tensor<?x12x1x64xf32>) -> tensor<?x12x?x64xf32>
  %3 = tfc.concat %past, %new {axis = 2 : i64} : (tensor<?x12x?x64xf32>, tensor<?x12x1x64xf32>) -> tensor<?x12x?x64xf32>
  // CHECK: tfc.concat %{{.*}} {axis = 0 : i64} : (tensor<?x12x1x64xf32>) -> tensor<?x12x1x64xf32>
  %4 = tfc.concat %new {axis = 0 : i64} : (tensor<?x12x1x64xf32>) -> tensor<?x12x1x64xf32>
  %wte = tfc.param "wte.weight" : tensor<50257x768xf32>
  // CHECK: tfc.gather %{{.*}}, %{{.*}} : (tensor<50257x768xf32>, tensor<?x?xi32>) -> tensor<?x?x768xf32>
  %5 = tfc.gather %wte, %ids : (tensor<50257x768xf32>, tensor<?x?xi32>) -> tensor<?x?x768xf32>
  return
}

// CHECK-LABEL: func.func @reductions
func.func @reductions(%x: tensor<?x?x768xf32>, %i: tensor<?x?xi64>) {
  // CHECK: tfc.reduce_sum %{{.*}} {axis = 2 : i64} : tensor<?x?x768xf32> -> tensor<?x?xf32>
  %0 = tfc.reduce_sum %x {axis = 2 : i64} : tensor<?x?x768xf32> -> tensor<?x?xf32>
  // CHECK: tfc.reduce_mean %{{.*}} {axis = 2 : i64, keepdim = true} : tensor<?x?x768xf32> -> tensor<?x?x1xf32>
  %1 = tfc.reduce_mean %x {axis = 2 : i64, keepdim = true} : tensor<?x?x768xf32> -> tensor<?x?x1xf32>
  // CHECK: tfc.reduce_max %{{.*}} {axis = 0 : i64} : tensor<?x?xi64> -> tensor<?xi64>
  %2 = tfc.reduce_max %i {axis = 0 : i64, keepdim = false} : tensor<?x?xi64> -> tensor<?xi64>
  // CHECK: tfc.softmax %{{.*}} {axis = 2 : i64} : tensor<?x?x768xf32>
  %3 = tfc.softmax %x {axis = 2 : i64} : tensor<?x?x768xf32>
  %g = tfc.param "ln.weight" : tensor<768xf32>
  %b = tfc.param "ln.bias" : tensor<768xf32>
  // CHECK: tfc.layer_norm %{{.*}}, %{{.*}}, %{{.*}} {epsilon = 9.9999999999999998E-13 : f64} : (tensor<?x?x768xf32>, tensor<768xf32>, tensor<768xf32>) -> tensor<?x?x768xf32>
  %4 = tfc.layer_norm %x, %g, %b {epsilon = 1.0e-12 : f64} : (tensor<?x?x768xf32>, tensor<768xf32>, tensor<768xf32>) -> tensor<?x?x768xf32>
  // CHECK: tfc.rms_norm %{{.*}}, %{{.*}} {epsilon = 9.9999999999999995E-7 : f64} : (tensor<?x?x768xf32>, tensor<768xf32>) -> tensor<?x?x768xf32>
  %5 = tfc.rms_norm %x, %g {epsilon = 1.0e-6 : f64} : (tensor<?x?x768xf32>, tensor<768xf32>) -> tensor<?x?x768xf32>
  return
}

// CHECK-LABEL: func.func @indices
func.func @indices(%ids: tensor<?x?xi32>, %past: tensor<?x12x?x64xf32>, %q: tensor<?x12x?x64xf32>, %s: tensor<2x16xi32>) {
  // CHECK: tfc.positions %{{.*}} {axis = 1 : i64} : tensor<?x?xi32> -> tensor<?xi32>
  %0 = tfc.positions %ids {axis = 1 : i64} : tensor<?x?xi32> -> tensor<?xi32>
  // CHECK: tfc.positions %{{.*}} {axis = 1 : i64} : tensor<2x16xi32> -> tensor<16xi32>
  %1 = tfc.positions %s {axis = 1 : i64} : tensor<2x16xi32> -> tensor<16xi32>
  // CHECK: tfc.positions %{{.*}}, %{{.*}} {axis = 1 : i64, offset_axis = 2 : i64} : tensor<?x?xi32>, tensor<?x12x?x64xf32> -> tensor<?xi32>
  %2 = tfc.positions %ids, %past {axis = 1 : i64, offset_axis = 2 : i64} : tensor<?x?xi32>, tensor<?x12x?x64xf32> -> tensor<?xi32>
  // CHECK: tfc.causal_mask %{{.*}}, %{{.*}} {k_axis = 2 : i64, q_axis = 2 : i64} : (tensor<?x12x?x64xf32>, tensor<?x12x?x64xf32>) -> tensor<?x?xi1>
  %3 = tfc.causal_mask %q, %past {q_axis = 2 : i64, k_axis = 2 : i64} : (tensor<?x12x?x64xf32>, tensor<?x12x?x64xf32>) -> tensor<?x?xi1>
  // CHECK: tfc.causal_mask %{{.*}}, %{{.*}} {k_axis = 1 : i64, q_axis = 1 : i64} : (tensor<2x16xi32>, tensor<2x16xi32>) -> tensor<16x16xi1>
  %4 = tfc.causal_mask %s, %s {q_axis = 1 : i64, k_axis = 1 : i64} : (tensor<2x16xi32>, tensor<2x16xi32>) -> tensor<16x16xi1>
  return
}

// Weights in column panels (weight-layout, bf16-weights) and a product
// reading them.
// CHECK-LABEL: func.func @panels
// CHECK: tfc.pack_panels %{{.*}} {transpose_b = true} : tensor<100x64xf32> -> tensor<3x64x48xf32>
// CHECK: tfc.linear %{{.*}}, %{{.*}} {packed_n = 100 : i64} : (tensor<?x64xf32>, tensor<3x64x48xf32>) -> tensor<?x100xf32>
// CHECK: tfc.pack_panels %{{.*}} : tensor<64x100xbf16> -> tensor<3x32x48x2xbf16>
// CHECK: tfc.matmul %{{.*}}, %{{.*}} {packed_n = 100 : i64} : (tensor<?x64xf32>, tensor<3x32x48x2xbf16>) -> tensor<?x100xf32>
func.func @panels(%x: tensor<?x64xf32>, %w: tensor<100x64xf32>, %v: tensor<64x100xbf16>) -> (tensor<?x100xf32>, tensor<?x100xf32>) {
  %p = tfc.pack_panels %w {transpose_b = true} : tensor<100x64xf32> -> tensor<3x64x48xf32>
  %y = tfc.linear %x, %p {packed_n = 100 : i64} : (tensor<?x64xf32>, tensor<3x64x48xf32>) -> tensor<?x100xf32>
  %q = tfc.pack_panels %v : tensor<64x100xbf16> -> tensor<3x32x48x2xbf16>
  %z = tfc.matmul %x, %q {packed_n = 100 : i64} : (tensor<?x64xf32>, tensor<3x32x48x2xbf16>) -> tensor<?x100xf32>
  return %y, %z : tensor<?x100xf32>, tensor<?x100xf32>
}
