// fuse-add-layernorm leaves `layer_norm(x + r)` alone when both operands of
// the add broadcast (neither has the sum's shape): the fused op could not be
// planned ("no symbolic shape rule"), so the model failed with fusion on and
// ran with --no-fusion (tests/lit/run/two-way-broadcast-layernorm.test).
// RUN: tfc-opt %s --fuse-add-layernorm | FileCheck %s

// CHECK-LABEL: func.func @two_way
// CHECK: tfc.add
// CHECK: tfc.layer_norm
// CHECK-NOT: tfc.add_layer_norm
func.func @two_way(%x: tensor<1x?x16xf32>, %r: tensor<?x1x16xf32>) -> tensor<?x?x16xf32> {
  %s = tfc.add %x, %r : (tensor<1x?x16xf32>, tensor<?x1x16xf32>) -> tensor<?x?x16xf32>
  %g = tfc.param "g" : tensor<16xf32>
  %b = tfc.param "b" : tensor<16xf32>
  %n = tfc.layer_norm %s, %g, %b {epsilon = 1.0e-5 : f64} : (tensor<?x?x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<?x?x16xf32>
  return %n : tensor<?x?x16xf32>
}

// One operand broadcasts (a bias-like residual): still fused.
// CHECK-LABEL: func.func @one_way
// CHECK: tfc.add_layer_norm
func.func @one_way(%x: tensor<?x?x16xf32>, %r: tensor<16xf32>) -> tensor<?x?x16xf32> {
  %s = tfc.add %x, %r : (tensor<?x?x16xf32>, tensor<16xf32>) -> tensor<?x?x16xf32>
  %g = tfc.param "g" : tensor<16xf32>
  %b = tfc.param "b" : tensor<16xf32>
  %n = tfc.layer_norm %s, %g, %b {epsilon = 1.0e-5 : f64} : (tensor<?x?x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<?x?x16xf32>
  return %n : tensor<?x?x16xf32>
}
