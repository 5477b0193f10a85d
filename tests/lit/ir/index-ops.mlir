// Round trip of the index ops (argmax, topk, cumsum, arange) and of abs, the
// worked example of docs/ir.md; their verifier errors are in invalid.mlir.
// RUN: tfc-opt %s | tfc-opt | FileCheck %s

// CHECK-LABEL: func.func @index_ops
func.func @index_ops(%x: tensor<?x?x12xf32>, %m: tensor<?x?xi32>) {
  // CHECK: tfc.argmax %{{.*}} {axis = 2 : i64} : tensor<?x?x12xf32> -> tensor<?x?xi32>
  %0 = tfc.argmax %x {axis = 2 : i64} : tensor<?x?x12xf32> -> tensor<?x?xi32>
  // CHECK: tfc.argmax %{{.*}} {axis = 1 : i64, keepdim = true} : tensor<?x?x12xf32> -> tensor<?x1x12xi32>
  %1 = tfc.argmax %x {axis = 1 : i64, keepdim = true} : tensor<?x?x12xf32> -> tensor<?x1x12xi32>
  // CHECK: tfc.topk %{{.*}} {k = 3 : i64} : tensor<?x?x12xf32> -> (tensor<?x?x3xf32>, tensor<?x?x3xi32>)
  %2:2 = tfc.topk %x {k = 3 : i64} : tensor<?x?x12xf32> -> (tensor<?x?x3xf32>, tensor<?x?x3xi32>)
  // CHECK: tfc.cumsum %{{.*}} {axis = 1 : i64} : tensor<?x?xi32>
  %3 = tfc.cumsum %m {axis = 1 : i64} : tensor<?x?xi32>
  // CHECK: tfc.arange {length = 5 : i64, start = 3 : i64, step = -2 : i64} -> tensor<5xi32>
  %4 = tfc.arange {length = 5 : i64, start = 3 : i64, step = -2 : i64} -> tensor<5xi32>
  // CHECK: tfc.arange %{{.*}} : tensor<?x?xi32> {axis = 1 : i64} -> tensor<?xi32>
  %5 = tfc.arange %m : tensor<?x?xi32> {axis = 1 : i64} -> tensor<?xi32>
  // CHECK: tfc.abs %{{.*}} : tensor<?x?x12xf32>
  %6 = tfc.abs %x : tensor<?x?x12xf32>
  return
}
