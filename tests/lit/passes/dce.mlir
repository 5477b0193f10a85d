// dce: unused side-effect-free ops are erased, whole chains at once; the
// function and its used values stay.
// RUN: tfc-opt %s --dce | FileCheck %s

// CHECK-LABEL: func.func @dead_chain
// CHECK-NEXT: %[[E:.*]] = tfc.exp %arg0
// CHECK-NEXT: return %[[E]]
func.func @dead_chain(%x: tensor<4xf32>) -> tensor<4xf32> {
  %w = tfc.param "unused" : tensor<4xf32>
  %a = tfc.add %x, %w : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %b = tfc.mul %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %e = tfc.exp %x : tensor<4xf32>
  %n = tfc.neg %b : tensor<4xf32>
  return %e : tensor<4xf32>
}
