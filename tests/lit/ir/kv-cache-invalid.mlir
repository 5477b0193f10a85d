// Verifier errors of tfc.kv_append and tfc.kv_stack (ir/TfcCacheOps.td).
// RUN: tfc-opt %s -split-input-file -verify-diagnostics

func.func @append_layer_axis(%c: tensor<2x?x8xf32>, %n: tensor<?x8xf32>) {
  // expected-error @+1 {{'tfc.kv_append' op axis 0 must be in [1, 3) for cache tensor<2x?x8xf32>}}
  %0 = tfc.kv_append %c, %n {axis = 0 : i64, layer = 0 : i64} : (tensor<2x?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  return
}

// -----

func.func @append_layer_out_of_range(%c: tensor<2x?x8xf32>, %n: tensor<?x8xf32>) {
  // expected-error @+1 {{'tfc.kv_append' op layer 2 is outside cache tensor<2x?x8xf32>}}
  %0 = tfc.kv_append %c, %n {axis = 1 : i64, layer = 2 : i64} : (tensor<2x?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  return
}

// -----

func.func @append_wrong_width(%c: tensor<2x?x8xf32>, %n: tensor<?x4xf32>) {
  // expected-error @+1 {{'tfc.kv_append' op new positions tensor<?x4xf32> differ from a layer of cache tensor<2x?x8xf32> in dim 1}}
  %0 = tfc.kv_append %c, %n {axis = 1 : i64, layer = 0 : i64} : (tensor<2x?x8xf32>, tensor<?x4xf32>) -> tensor<?x8xf32>
  return
}

// -----

func.func @stack_not_a_chain(%c: tensor<2x?x8xf32>, %n: tensor<?x8xf32>) {
  %0 = tfc.kv_append %c, %n {axis = 1 : i64, layer = 0 : i64} : (tensor<2x?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  // expected-error @+1 {{'tfc.kv_stack' op operand #2 must be the tfc.kv_append of layer 1 to the same cache on axis 1}}
  %1 = tfc.kv_stack %c, %0, %0 {axis = 1 : i64} : (tensor<2x?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<2x?x8xf32>
  return
}

// -----

func.func @stack_missing_layer(%c: tensor<2x?x8xf32>, %n: tensor<?x8xf32>) {
  %0 = tfc.kv_append %c, %n {axis = 1 : i64, layer = 0 : i64} : (tensor<2x?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  // expected-error @+1 {{'tfc.kv_stack' op needs one appended operand per layer of cache tensor<2x?x8xf32>, got 1}}
  %1 = tfc.kv_stack %c, %0 {axis = 1 : i64} : (tensor<2x?x8xf32>, tensor<?x8xf32>) -> tensor<2x?x8xf32>
  return
}
