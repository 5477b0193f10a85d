// kv-cache: a decoder entry that returns stack([concat([past[i], new_i]) for
// each layer], 0) of its cache argument grows the cache in place: one
// tfc.kv_append per layer, where the concat was (the attention of that
// layer reads it), and one tfc.kv_stack where the stack was. The old
// slices, reshapes and concats go.
// RUN: tfc-opt %s --kv-cache | FileCheck %s

// CHECK-LABEL: func.func @decode
// CHECK-SAME: (%[[NEW0:[^:]*]]: tensor<?x4x?x16xf32>, %[[NEW1:[^:]*]]: tensor<?x4x?x16xf32>, %[[PAST:[^:]*]]: tensor<2x?x4x?x16xf32>)
// CHECK-NOT: tfc.slice
// CHECK-NOT: tfc.concat
// CHECK: %[[A0:.*]] = tfc.kv_append %[[PAST]], %[[NEW0]] {axis = 3 : i64, layer = 0 : i64} : (tensor<2x?x4x?x16xf32>, tensor<?x4x?x16xf32>) -> tensor<?x4x?x16xf32>
// CHECK-NEXT: %[[E0:.*]] = tfc.exp %[[A0]]
// CHECK: %[[A1:.*]] = tfc.kv_append %[[PAST]], %[[NEW1]] {axis = 3 : i64, layer = 1 : i64}
// CHECK-NEXT: tfc.exp %[[A1]]
// CHECK-NOT: tfc.reshape
// CHECK: %[[S:.*]] = tfc.kv_stack %[[PAST]], %[[A0]], %[[A1]] {axis = 3 : i64} : (tensor<2x?x4x?x16xf32>, tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>) -> tensor<2x?x4x?x16xf32>
// CHECK-NEXT: return %[[E0]], %[[S]]
func.func @decode(%n0: tensor<?x4x?x16xf32>, %n1: tensor<?x4x?x16xf32>,
                  %past: tensor<2x?x4x?x16xf32>)
    -> (tensor<?x4x?x16xf32>, tensor<2x?x4x?x16xf32>) {
  %s0 = tfc.slice %past {axis = 0 : i64, end = 1 : i64, start = 0 : i64} : tensor<2x?x4x?x16xf32> -> tensor<1x?x4x?x16xf32>
  %p0 = tfc.reshape %s0 {shape = array<i64: -1, 4, -1, 16>} : tensor<1x?x4x?x16xf32> -> tensor<?x4x?x16xf32>
  %c0 = tfc.concat %p0, %n0 {axis = 2 : i64} : (tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>) -> tensor<?x4x?x16xf32>
  %e0 = tfc.exp %c0 : tensor<?x4x?x16xf32>
  %s1 = tfc.slice %past {axis = 0 : i64, end = 2 : i64, start = 1 : i64} : tensor<2x?x4x?x16xf32> -> tensor<1x?x4x?x16xf32>
  %p1 = tfc.reshape %s1 {shape = array<i64: -1, 4, -1, 16>} : tensor<1x?x4x?x16xf32> -> tensor<?x4x?x16xf32>
  %c1 = tfc.concat %p1, %n1 {axis = 2 : i64} : (tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>) -> tensor<?x4x?x16xf32>
  %e1 = tfc.exp %c1 : tensor<?x4x?x16xf32>
  %u0 = tfc.reshape %c0 {shape = array<i64: 1, -1, 4, -1, 16>} : tensor<?x4x?x16xf32> -> tensor<1x?x4x?x16xf32>
  %u1 = tfc.reshape %c1 {shape = array<i64: 1, -1, 4, -1, 16>} : tensor<?x4x?x16xf32> -> tensor<1x?x4x?x16xf32>
  %out = tfc.concat %u0, %u1 {axis = 0 : i64} : (tensor<1x?x4x?x16xf32>, tensor<1x?x4x?x16xf32>) -> tensor<2x?x4x?x16xf32>
  return %e0, %out : tensor<?x4x?x16xf32>, tensor<2x?x4x?x16xf32>
}

// One layer: the stack is a single reshape.
// CHECK-LABEL: func.func @one_layer
// CHECK-NEXT: %[[A:.*]] = tfc.kv_append %arg1, %arg0 {axis = 2 : i64, layer = 0 : i64}
// CHECK-NEXT: %[[S:.*]] = tfc.kv_stack %arg1, %[[A]] {axis = 2 : i64}
// CHECK-NEXT: return %[[S]]
func.func @one_layer(%n: tensor<?x3x8xf32>, %past: tensor<1x?x?x8xf32>) -> tensor<1x?x?x8xf32> {
  %s = tfc.slice %past {axis = 0 : i64, end = 1 : i64, start = 0 : i64} : tensor<1x?x?x8xf32> -> tensor<1x?x?x8xf32>
  %p = tfc.reshape %s {shape = array<i64: -1, -1, 8>} : tensor<1x?x?x8xf32> -> tensor<?x?x8xf32>
  %c = tfc.concat %p, %n {axis = 1 : i64} : (tensor<?x?x8xf32>, tensor<?x3x8xf32>) -> tensor<?x?x8xf32>
  %u = tfc.reshape %c {shape = array<i64: 1, -1, -1, 8>} : tensor<?x?x8xf32> -> tensor<1x?x?x8xf32>
  return %u : tensor<1x?x?x8xf32>
}

// Left alone: the layers come from two different arguments, the new keys
// come first, and a layer is out of order.
// CHECK-LABEL: func.func @mixed_arguments
// CHECK-NOT: tfc.kv_
// CHECK: return
func.func @mixed_arguments(%n: tensor<?x8xf32>, %a: tensor<2x?x8xf32>, %b: tensor<2x?x8xf32>) -> tensor<2x?x8xf32> {
  %s0 = tfc.slice %a {axis = 0 : i64, end = 1 : i64, start = 0 : i64} : tensor<2x?x8xf32> -> tensor<1x?x8xf32>
  %p0 = tfc.reshape %s0 {shape = array<i64: -1, 8>} : tensor<1x?x8xf32> -> tensor<?x8xf32>
  %c0 = tfc.concat %p0, %n {axis = 0 : i64} : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  %s1 = tfc.slice %b {axis = 0 : i64, end = 2 : i64, start = 1 : i64} : tensor<2x?x8xf32> -> tensor<1x?x8xf32>
  %p1 = tfc.reshape %s1 {shape = array<i64: -1, 8>} : tensor<1x?x8xf32> -> tensor<?x8xf32>
  %c1 = tfc.concat %p1, %n {axis = 0 : i64} : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  %u0 = tfc.reshape %c0 {shape = array<i64: 1, -1, 8>} : tensor<?x8xf32> -> tensor<1x?x8xf32>
  %u1 = tfc.reshape %c1 {shape = array<i64: 1, -1, 8>} : tensor<?x8xf32> -> tensor<1x?x8xf32>
  %out = tfc.concat %u0, %u1 {axis = 0 : i64} : (tensor<1x?x8xf32>, tensor<1x?x8xf32>) -> tensor<2x?x8xf32>
  return %out : tensor<2x?x8xf32>
}

// CHECK-LABEL: func.func @new_first
// CHECK-NOT: tfc.kv_
// CHECK: return
func.func @new_first(%n: tensor<?x8xf32>, %a: tensor<1x?x8xf32>) -> tensor<1x?x8xf32> {
  %s0 = tfc.slice %a {axis = 0 : i64, end = 1 : i64, start = 0 : i64} : tensor<1x?x8xf32> -> tensor<1x?x8xf32>
  %p0 = tfc.reshape %s0 {shape = array<i64: -1, 8>} : tensor<1x?x8xf32> -> tensor<?x8xf32>
  %c0 = tfc.concat %n, %p0 {axis = 0 : i64} : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  %u0 = tfc.reshape %c0 {shape = array<i64: 1, -1, 8>} : tensor<?x8xf32> -> tensor<1x?x8xf32>
  return %u0 : tensor<1x?x8xf32>
}
