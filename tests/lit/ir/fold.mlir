// Folds of the tfc ops, as canonicalization applies them.
// RUN: tfc-opt %s -canonicalize -split-input-file | FileCheck %s

// Transposes compose; the head split/merge pair of attention cancels.
// CHECK-LABEL: func.func @transpose_chain
// CHECK-SAME: (%[[X:.*]]: tensor<?x?x12x64xf32>)
// CHECK-NEXT: %[[T:.*]] = tfc.transpose %[[X]] {perm = array<i64: 0, 2, 3, 1>} : tensor<?x?x12x64xf32> -> tensor<?x12x64x?xf32>
// CHECK-NEXT: return %[[X]], %[[T]]
func.func @transpose_chain(%x: tensor<?x?x12x64xf32>) -> (tensor<?x?x12x64xf32>, tensor<?x12x64x?xf32>) {
  %0 = tfc.transpose %x {perm = array<i64: 0, 2, 1, 3>} : tensor<?x?x12x64xf32> -> tensor<?x12x?x64xf32>
  %1 = tfc.transpose %0 {perm = array<i64: 0, 2, 1, 3>} : tensor<?x12x?x64xf32> -> tensor<?x?x12x64xf32>
  %2 = tfc.transpose %0 {perm = array<i64: 0, 1, 3, 2>} : tensor<?x12x?x64xf32> -> tensor<?x12x64x?xf32>
  return %1, %2 : tensor<?x?x12x64xf32>, tensor<?x12x64x?xf32>
}

// -----

// CHECK-LABEL: func.func @transpose_identity
// CHECK-NEXT: return %arg0
func.func @transpose_identity(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %0 = tfc.transpose %x {perm = array<i64: 0, 1>} : tensor<?x4xf32> -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

// Reshapes collapse into one; a reshape back to the input shape vanishes.
// CHECK-LABEL: func.func @reshape_chain
// CHECK-SAME: (%[[X:.*]]: tensor<?x?x768xf32>)
// CHECK-NEXT: %[[R:.*]] = tfc.reshape %[[X]] {shape = array<i64: -1, -1, 24, 32>} : tensor<?x?x768xf32> -> tensor<?x?x24x32xf32>
// CHECK-NEXT: return %[[X]], %[[R]]
func.func @reshape_chain(%x: tensor<?x?x768xf32>) -> (tensor<?x?x768xf32>, tensor<?x?x24x32xf32>) {
  %0 = tfc.reshape %x {shape = array<i64: -1, -1, 12, 64>} : tensor<?x?x768xf32> -> tensor<?x?x12x64xf32>
  %1 = tfc.reshape %0 {shape = array<i64: -1, -1, 768>} : tensor<?x?x12x64xf32> -> tensor<?x?x768xf32>
  %2 = tfc.reshape %0 {shape = array<i64: -1, -1, 24, 32>} : tensor<?x?x12x64xf32> -> tensor<?x?x24x32xf32>
  return %1, %2 : tensor<?x?x768xf32>, tensor<?x?x24x32xf32>
}

// -----

// CHECK-LABEL: func.func @cast_identity
// CHECK-NEXT: return %arg0
func.func @cast_identity(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %0 = tfc.cast %x : tensor<?x4xf32> to tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

// Equal constants are uniqued and hoisted; unused ones disappear (all tfc
// ops are pure).
// CHECK-LABEL: func.func @constants
// CHECK-NEXT: %[[C:.*]] = tfc.constant dense<1.250000e-01> : tensor<f32>
// CHECK-NEXT: %[[A:.*]] = tfc.mul %arg0, %[[C]]
// CHECK-NEXT: %[[B:.*]] = tfc.mul %[[A]], %[[C]]
// CHECK-NEXT: return %[[B]]
func.func @constants(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %c0 = tfc.constant dense<0.125> : tensor<f32>
  %0 = tfc.mul %x, %c0 : (tensor<?x4xf32>, tensor<f32>) -> tensor<?x4xf32>
  %unused = tfc.exp %0 : tensor<?x4xf32>
  %c1 = tfc.constant dense<0.125> : tensor<f32>
  %1 = tfc.mul %0, %c1 : (tensor<?x4xf32>, tensor<f32>) -> tensor<?x4xf32>
  return %1 : tensor<?x4xf32>
}

// -----

// A step-1 slice of a whole static axis is its input; one with a step, or of
// part of the axis, stays. A step of 1 is not printed.
// CHECK-LABEL: func.func @slices
// CHECK-NEXT: %[[E:.*]] = tfc.slice %arg0 {axis = 1 : i64, end = 8 : i64, start = 0 : i64, step = 2 : i64}
// CHECK-NEXT: %[[P:.*]] = tfc.slice %arg0 {axis = 1 : i64, end = 8 : i64, start = 1 : i64} :
// CHECK-NEXT: return %arg0, %[[E]], %[[P]]
func.func @slices(%x: tensor<?x8xf32>) -> (tensor<?x8xf32>, tensor<?x4xf32>, tensor<?x7xf32>) {
  %0 = tfc.slice %x {axis = 1 : i64, start = 0 : i64, end = 8 : i64, step = 1 : i64} : tensor<?x8xf32> -> tensor<?x8xf32>
  %1 = tfc.slice %x {axis = 1 : i64, start = 0 : i64, end = 8 : i64, step = 2 : i64} : tensor<?x8xf32> -> tensor<?x4xf32>
  %2 = tfc.slice %x {axis = 1 : i64, start = 1 : i64, end = 8 : i64} : tensor<?x8xf32> -> tensor<?x7xf32>
  return %0, %1, %2 : tensor<?x8xf32>, tensor<?x4xf32>, tensor<?x7xf32>
}
