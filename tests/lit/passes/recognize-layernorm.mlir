// recognize-layernorm: LayerNorm spelled out in primitives -> tfc.layer_norm.
// RUN: tfc-opt %s --recognize-layernorm -split-input-file | FileCheck %s

// mean, sub, pow 2, mean, add eps, sqrt, div, mul gamma, add beta (the
// frontend's output for a hand-written LayerNorm, after CSE).
// CHECK-LABEL: func.func @pow_sqrt_div
// CHECK-SAME: (%[[X:.*]]: tensor<?x?x16xf32>, %[[G:.*]]: tensor<16xf32>, %[[B:.*]]: tensor<16xf32>)
// CHECK-NEXT: %[[N:.*]] = tfc.layer_norm %[[X]], %[[G]], %[[B]] {epsilon = 9.9999997473787516E-6 : f64} : (tensor<?x?x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<?x?x16xf32>
// CHECK-NEXT: return %[[N]]
func.func @pow_sqrt_div(%x: tensor<?x?x16xf32>, %g: tensor<16xf32>, %b: tensor<16xf32>) -> tensor<?x?x16xf32> {
  %mu = tfc.reduce_mean %x {axis = 2 : i64, keepdim = true} : tensor<?x?x16xf32> -> tensor<?x?x1xf32>
  %d = tfc.sub %x, %mu : (tensor<?x?x16xf32>, tensor<?x?x1xf32>) -> tensor<?x?x16xf32>
  %two = tfc.constant dense<2.0> : tensor<f32>
  %sq = tfc.pow %d, %two : (tensor<?x?x16xf32>, tensor<f32>) -> tensor<?x?x16xf32>
  %var = tfc.reduce_mean %sq {axis = 2 : i64, keepdim = true} : tensor<?x?x16xf32> -> tensor<?x?x1xf32>
  %eps = tfc.constant dense<1.0e-5> : tensor<f32>
  %ve = tfc.add %var, %eps : (tensor<?x?x1xf32>, tensor<f32>) -> tensor<?x?x1xf32>
  %s = tfc.sqrt %ve : tensor<?x?x1xf32>
  %n = tfc.div %d, %s : (tensor<?x?x16xf32>, tensor<?x?x1xf32>) -> tensor<?x?x16xf32>
  %t = tfc.mul %n, %g : (tensor<?x?x16xf32>, tensor<16xf32>) -> tensor<?x?x16xf32>
  %r = tfc.add %t, %b : (tensor<?x?x16xf32>, tensor<16xf32>) -> tensor<?x?x16xf32>
  return %r : tensor<?x?x16xf32>
}

// -----

// x*x for the square, rsqrt and mul, gamma and beta first, and the centered
// value computed twice (no CSE ran).
// CHECK-LABEL: func.func @mul_rsqrt_twice
// CHECK-NEXT: %[[N:.*]] = tfc.layer_norm %arg0, %arg1, %arg2 {epsilon = 9.99999{{[0-9]+}}E-13 : f64}
// CHECK-NEXT: return %[[N]]
func.func @mul_rsqrt_twice(%x: tensor<4x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %mu = tfc.reduce_mean %x {axis = 1 : i64, keepdim = true} : tensor<4x8xf32> -> tensor<4x1xf32>
  %d1 = tfc.sub %x, %mu : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %sq = tfc.mul %d1, %d1 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %var = tfc.reduce_mean %sq {axis = 1 : i64, keepdim = true} : tensor<4x8xf32> -> tensor<4x1xf32>
  %eps = tfc.constant dense<1.0e-12> : tensor<f32>
  %ve = tfc.add %eps, %var : (tensor<f32>, tensor<4x1xf32>) -> tensor<4x1xf32>
  %rs = tfc.rsqrt %ve : tensor<4x1xf32>
  %d2 = tfc.sub %x, %mu : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %n = tfc.mul %rs, %d2 : (tensor<4x1xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %t = tfc.mul %g, %n : (tensor<8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %r = tfc.add %b, %t : (tensor<8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

// Without the affine part: gamma = 1 and beta = 0 constants.
// CHECK-LABEL: func.func @no_affine
// CHECK-DAG: %[[ONE:.*]] = tfc.constant dense<1.000000e+00> : tensor<8xf32>
// CHECK-DAG: %[[ZERO:.*]] = tfc.constant dense<0.000000e+00> : tensor<8xf32>
// CHECK: tfc.layer_norm %arg0, %[[ONE]], %[[ZERO]] {epsilon = 9.9999997473787516E-6 : f64}
func.func @no_affine(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %mu = tfc.reduce_mean %x {axis = 1 : i64, keepdim = true} : tensor<4x8xf32> -> tensor<4x1xf32>
  %d = tfc.sub %x, %mu : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %sq = tfc.mul %d, %d : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %var = tfc.reduce_mean %sq {axis = 1 : i64, keepdim = true} : tensor<4x8xf32> -> tensor<4x1xf32>
  %eps = tfc.constant dense<1.0e-5> : tensor<f32>
  %ve = tfc.add %var, %eps : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %s = tfc.sqrt %ve : tensor<4x1xf32>
  %n = tfc.div %d, %s : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  return %n : tensor<4x8xf32>
}

// -----

// Negative: the variance is also returned (an intermediate with a second
// user); the mean is over another axis than the last; sqrt(var) + eps is
// another formula (the annotated transformer's std + eps).
// CHECK-LABEL: func.func @negatives
// CHECK-NOT: tfc.layer_norm
// CHECK: return
func.func @negatives(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x1xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %mu = tfc.reduce_mean %x {axis = 1 : i64, keepdim = true} : tensor<4x8xf32> -> tensor<4x1xf32>
  %d = tfc.sub %x, %mu : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %sq = tfc.mul %d, %d : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %var = tfc.reduce_mean %sq {axis = 1 : i64, keepdim = true} : tensor<4x8xf32> -> tensor<4x1xf32>
  %eps = tfc.constant dense<1.0e-5> : tensor<f32>
  %ve = tfc.add %var, %eps : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %s = tfc.sqrt %ve : tensor<4x1xf32>
  %n = tfc.div %d, %s : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>

  %mu0 = tfc.reduce_mean %x {axis = 0 : i64, keepdim = true} : tensor<4x8xf32> -> tensor<1x8xf32>
  %d0 = tfc.sub %x, %mu0 : (tensor<4x8xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>
  %sq0 = tfc.mul %d0, %d0 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %var0 = tfc.reduce_mean %sq0 {axis = 0 : i64, keepdim = true} : tensor<4x8xf32> -> tensor<1x8xf32>
  %ve0 = tfc.add %var0, %eps : (tensor<1x8xf32>, tensor<f32>) -> tensor<1x8xf32>
  %s0 = tfc.sqrt %ve0 : tensor<1x8xf32>
  %n0 = tfc.div %d0, %s0 : (tensor<4x8xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>

  %mu2 = tfc.reduce_mean %x {axis = 1 : i64, keepdim = true} : tensor<4x8xf32> -> tensor<4x1xf32>
  %d2 = tfc.sub %x, %mu2 : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %sq2 = tfc.mul %d2, %d2 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %var2 = tfc.reduce_mean %sq2 {axis = 1 : i64, keepdim = true} : tensor<4x8xf32> -> tensor<4x1xf32>
  %s2 = tfc.sqrt %var2 : tensor<4x1xf32>
  %se2 = tfc.add %s2, %eps : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %n2 = tfc.div %d2, %se2 : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  return %n, %var, %n0, %n2 : tensor<4x8xf32>, tensor<4x1xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}
