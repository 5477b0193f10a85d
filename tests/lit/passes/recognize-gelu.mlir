// recognize-gelu: GELU spelled out in primitives -> tfc.gelu.
// RUN: tfc-opt %s --recognize-gelu -split-input-file | FileCheck %s

// 0.5 * x * (1 + erf(x / sqrt(2))), as the frontend emits it.
// CHECK-LABEL: func.func @erf_form
// CHECK-NEXT: %[[G:.*]] = tfc.gelu %arg0 : tensor<?x?x16xf32>
// CHECK-NEXT: return %[[G]]
func.func @erf_form(%x: tensor<?x?x16xf32>) -> tensor<?x?x16xf32> {
  %half = tfc.constant dense<0.5> : tensor<f32>
  %hx = tfc.mul %half, %x : (tensor<f32>, tensor<?x?x16xf32>) -> tensor<?x?x16xf32>
  %r2 = tfc.constant dense<1.41421354> : tensor<f32>
  %a = tfc.div %x, %r2 : (tensor<?x?x16xf32>, tensor<f32>) -> tensor<?x?x16xf32>
  %e = tfc.erf %a : tensor<?x?x16xf32>
  %one = tfc.constant dense<1.0> : tensor<f32>
  %p = tfc.add %one, %e : (tensor<f32>, tensor<?x?x16xf32>) -> tensor<?x?x16xf32>
  %r = tfc.mul %hx, %p : (tensor<?x?x16xf32>, tensor<?x?x16xf32>) -> tensor<?x?x16xf32>
  return %r : tensor<?x?x16xf32>
}

// -----

// Another association: x * (1 + erf(x * 0.70710678)) / 2, with sqrt(2)
// left as an op on a constant.
// CHECK-LABEL: func.func @erf_other_order
// CHECK-NEXT: %[[G:.*]] = tfc.gelu %arg0 : tensor<8xf32>
// CHECK-NEXT: return %[[G]]
func.func @erf_other_order(%x: tensor<8xf32>) -> tensor<8xf32> {
  %two = tfc.constant dense<2.0> : tensor<f32>
  %half_sqrt = tfc.sqrt %two : tensor<f32>
  %one = tfc.constant dense<1.0> : tensor<f32>
  %k = tfc.div %one, %half_sqrt : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %a = tfc.mul %x, %k : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %e = tfc.erf %a : tensor<8xf32>
  %p = tfc.add %e, %one : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %xp = tfc.mul %x, %p : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %r = tfc.div %xp, %two : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  return %r : tensor<8xf32>
}

// -----

// The tanh form with pow(x, 3), and with x * x * x.
// CHECK-LABEL: func.func @tanh_forms
// CHECK-NEXT: %[[G1:.*]] = tfc.gelu %arg0 {approximate = "tanh"} : tensor<8xf32>
// CHECK-NEXT: %[[G2:.*]] = tfc.gelu %arg1 {approximate = "tanh"} : tensor<8xf32>
// CHECK-NEXT: return %[[G1]], %[[G2]]
func.func @tanh_forms(%x: tensor<8xf32>, %y: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %half = tfc.constant dense<0.5> : tensor<f32>
  %one = tfc.constant dense<1.0> : tensor<f32>
  %three = tfc.constant dense<3.0> : tensor<f32>
  %c = tfc.constant dense<0.044715> : tensor<f32>
  %k = tfc.constant dense<0.797884583> : tensor<f32>
  %hx = tfc.mul %half, %x : (tensor<f32>, tensor<8xf32>) -> tensor<8xf32>
  %x3 = tfc.pow %x, %three : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %cx3 = tfc.mul %c, %x3 : (tensor<f32>, tensor<8xf32>) -> tensor<8xf32>
  %in = tfc.add %x, %cx3 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %a = tfc.mul %k, %in : (tensor<f32>, tensor<8xf32>) -> tensor<8xf32>
  %t = tfc.tanh %a : tensor<8xf32>
  %p = tfc.add %one, %t : (tensor<f32>, tensor<8xf32>) -> tensor<8xf32>
  %r = tfc.mul %hx, %p : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>

  %yy = tfc.mul %y, %y : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %yyy = tfc.mul %yy, %y : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %cy3 = tfc.mul %yyy, %c : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %in2 = tfc.add %cy3, %y : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %a2 = tfc.mul %in2, %k : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %t2 = tfc.tanh %a2 : tensor<8xf32>
  %p2 = tfc.add %t2, %one : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %yp = tfc.mul %y, %p2 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %r2 = tfc.mul %yp, %half : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  return %r, %r2 : tensor<8xf32>, tensor<8xf32>
}

// -----

// Negative: a wrong coefficient (0.6); erf of another tensor; the erf term
// also used elsewhere.
// CHECK-LABEL: func.func @negatives
// CHECK-NOT: tfc.gelu
// CHECK: return
func.func @negatives(%x: tensor<8xf32>, %y: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %c = tfc.constant dense<0.6> : tensor<f32>
  %half = tfc.constant dense<0.5> : tensor<f32>
  %one = tfc.constant dense<1.0> : tensor<f32>
  %r2 = tfc.constant dense<1.41421354> : tensor<f32>
  %a = tfc.div %x, %r2 : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %e = tfc.erf %a : tensor<8xf32>
  %p = tfc.add %e, %one : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %cx = tfc.mul %c, %x : (tensor<f32>, tensor<8xf32>) -> tensor<8xf32>
  %r = tfc.mul %cx, %p : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>

  %ay = tfc.div %y, %r2 : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %ey = tfc.erf %ay : tensor<8xf32>
  %py = tfc.add %ey, %one : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %hx = tfc.mul %half, %x : (tensor<f32>, tensor<8xf32>) -> tensor<8xf32>
  %r3 = tfc.mul %hx, %py : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>

  %a4 = tfc.div %x, %r2 : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %e4 = tfc.erf %a4 : tensor<8xf32>
  %p4 = tfc.add %e4, %one : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %hx4 = tfc.mul %half, %x : (tensor<f32>, tensor<8xf32>) -> tensor<8xf32>
  %r4 = tfc.mul %hx4, %p4 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %r, %r3, %r4, %e4 : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}
