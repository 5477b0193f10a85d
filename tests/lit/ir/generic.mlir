// The generic form prints attributes as properties and parses back to the
// same custom form; hand-written generic IR (inherent attributes in the
// attribute dictionary, as older MLIR printed them) parses too.
// RUN: tfc-opt %s -mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC
// RUN: tfc-opt %s -mlir-print-op-generic | tfc-opt | FileCheck %s
// RUN: tfc-opt %s | tfc-opt -mlir-print-op-generic | tfc-opt -mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// GENERIC-LABEL: "func.func"
// GENERIC: "tfc.param"() <{name = "wte.weight"}> : () -> tensor<50257x768xf32>
// GENERIC: "tfc.gather"(%{{.*}}, %{{.*}}) : (tensor<50257x768xf32>, tensor<?x?xi32>) -> tensor<?x?x768xf32>
// GENERIC: "tfc.constant"() <{value = dense<1.250000e-01> : tensor<f32>}> : () -> tensor<f32>
// GENERIC: "tfc.mul"(%{{.*}}, %{{.*}}) : (tensor<?x?x768xf32>, tensor<f32>) -> tensor<?x?x768xf32>
// GENERIC: "tfc.cmp"(%{{.*}}, %{{.*}}) <{predicate = "eq"}> : (tensor<?x?xi32>, tensor<?x?xi32>) -> tensor<?x?xi1>
// GENERIC: "tfc.matmul"(%{{.*}}, %{{.*}}) <{transpose_b = true}> : (tensor<?x?x768xf32>, tensor<768x768xf32>) -> tensor<?x?x768xf32>
// GENERIC: "tfc.reshape"(%{{.*}}) <{shape = array<i64: -1, -1, 12, 64>}> : (tensor<?x?x768xf32>) -> tensor<?x?x12x64xf32>
// GENERIC: "tfc.softmax"(%{{.*}}) <{axis = 3 : i64}> : (tensor<?x?x12x64xf32>) -> tensor<?x?x12x64xf32>
// GENERIC: "tfc.positions"(%{{.*}}, %{{.*}}) <{axis = 1 : i64, offset_axis = 1 : i64}> : (tensor<?x?xi32>, tensor<?x?xi32>) -> tensor<?xi32>
// GENERIC: "tfc.gelu"(%{{.*}}) <{approximate = "tanh"}> : (tensor<?x?x768xf32>) -> tensor<?x?x768xf32>

// CHECK-LABEL: func.func @generic
// CHECK: %[[W:.*]] = tfc.param "wte.weight" : tensor<50257x768xf32>
// CHECK: %[[E:.*]] = tfc.gather %[[W]], %arg0 : (tensor<50257x768xf32>, tensor<?x?xi32>) -> tensor<?x?x768xf32>
// CHECK: %[[C:.*]] = tfc.constant dense<1.250000e-01> : tensor<f32>
// CHECK: %[[M:.*]] = tfc.mul %[[E]], %[[C]] : (tensor<?x?x768xf32>, tensor<f32>) -> tensor<?x?x768xf32>
// CHECK: tfc.cmp eq, %arg0, %arg0 : (tensor<?x?xi32>, tensor<?x?xi32>) -> tensor<?x?xi1>
// CHECK: %[[Q:.*]] = tfc.matmul %[[M]], %{{.*}} {transpose_b = true} : (tensor<?x?x768xf32>, tensor<768x768xf32>) -> tensor<?x?x768xf32>
// CHECK: %[[R:.*]] = tfc.reshape %[[Q]] {shape = array<i64: -1, -1, 12, 64>} : tensor<?x?x768xf32> -> tensor<?x?x12x64xf32>
// CHECK: tfc.softmax %[[R]] {axis = 3 : i64} : tensor<?x?x12x64xf32>
// CHECK: tfc.positions %arg0, %arg0 {axis = 1 : i64, offset_axis = 1 : i64} : tensor<?x?xi32>, tensor<?x?xi32> -> tensor<?xi32>
// CHECK: tfc.gelu %[[M]] {approximate = "tanh"} : tensor<?x?x768xf32>
func.func @generic(%ids: tensor<?x?xi32>) {
  %w = "tfc.param"() <{name = "wte.weight"}> : () -> tensor<50257x768xf32>
  %e = "tfc.gather"(%w, %ids) : (tensor<50257x768xf32>, tensor<?x?xi32>) -> tensor<?x?x768xf32>
  %c = "tfc.constant"() <{value = dense<0.125> : tensor<f32>}> : () -> tensor<f32>
  %m = "tfc.mul"(%e, %c) : (tensor<?x?x768xf32>, tensor<f32>) -> tensor<?x?x768xf32>
  %k = "tfc.cmp"(%ids, %ids) <{predicate = "eq"}> : (tensor<?x?xi32>, tensor<?x?xi32>) -> tensor<?x?xi1>
  %wq = "tfc.param"() {name = "query.weight"} : () -> tensor<768x768xf32>
  %q = "tfc.matmul"(%m, %wq) {transpose_b = true} : (tensor<?x?x768xf32>, tensor<768x768xf32>) -> tensor<?x?x768xf32>
  %r = "tfc.reshape"(%q) {shape = array<i64: -1, -1, 12, 64>} : (tensor<?x?x768xf32>) -> tensor<?x?x12x64xf32>
  %s = "tfc.softmax"(%r) {axis = 3 : i64} : (tensor<?x?x12x64xf32>) -> tensor<?x?x12x64xf32>
  %p = "tfc.positions"(%ids, %ids) <{axis = 1 : i64, offset_axis = 1 : i64}> : (tensor<?x?xi32>, tensor<?x?xi32>) -> tensor<?xi32>
  %g = "tfc.gelu"(%m) <{approximate = "tanh"}> : (tensor<?x?x768xf32>) -> tensor<?x?x768xf32>
  return
}
