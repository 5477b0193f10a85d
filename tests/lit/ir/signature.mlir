// Modules and entry points as the frontend emits them: tfc.* attributes on
// the module and on function arguments and results.
// RUN: tfc-opt %s -split-input-file -verify-diagnostics | FileCheck %s

// CHECK: module attributes {tfc.dim_bounds = {batch = 64 : i64, seq = 512 : i64}, tfc.model = "bert_base"}
// CHECK: func.func @encode(%{{.*}}: tensor<?x?xi32> {tfc.dims = ["batch", "seq"]}, %{{.*}}: tensor<?x?xi1> {tfc.dims = ["batch", "seq"], tfc.name = "attention_mask"}) -> (tensor<?x?x768xf32> {tfc.name = "last_hidden_state"})
// CHECK: func.func private @declared(tensor<?x768xf32> {tfc.dims = ["seq", ""]}) -> (tensor<?x768xf32> {tfc.dims = ["seq", "768"]})
module attributes {tfc.model = "bert_base", tfc.dim_bounds = {seq = 512 : i64, batch = 64 : i64}} {
  func.func @encode(%ids: tensor<?x?xi32> {tfc.dims = ["batch", "seq"]},
                    %mask: tensor<?x?xi1> {tfc.dims = ["batch", "seq"], tfc.name = "attention_mask"})
      -> (tensor<?x?x768xf32> {tfc.name = "last_hidden_state"}) {
    %wte = tfc.param "embeddings.word_embeddings.weight" : tensor<30522x768xf32>
    %0 = tfc.gather %wte, %ids : (tensor<30522x768xf32>, tensor<?x?xi32>) -> tensor<?x?x768xf32>
    return %0 : tensor<?x?x768xf32>
  }
  // Declarations have no region arguments; their signature still checks.
  func.func private @declared(tensor<?x768xf32> {tfc.dims = ["seq", ""]}) -> (tensor<?x768xf32> {tfc.dims = ["seq", "768"]})
}

// -----

// expected-error @+1 {{'tfc.model' must be a string, got 3 : i64}}
module attributes {tfc.model = 3} {
}

// -----

// expected-error @+1 {{'tfc.dim_bounds' must be a dictionary from dimension name to maximum size, got [512]}}
module attributes {tfc.dim_bounds = [512]} {
}

// -----

// expected-error @+1 {{'tfc.dim_bounds' entry 'seq' must be a positive integer, got 0 : i64}}
module attributes {tfc.dim_bounds = {seq = 0 : i64}} {
}

// -----

// expected-error @+1 {{'func.func' op 'tfc.dims' of argument #0 has 1 names for tensor<?x?xi32> (rank 2)}}
func.func @dims_count(%ids: tensor<?x?xi32> {tfc.dims = ["batch"]}) {
  return
}

// -----

// expected-error @+1 {{'func.func' op 'tfc.dims' of argument #1 must be an array of strings, got [1, 2]}}
func.func @dims_kind(%a: tensor<4xf32>, %ids: tensor<?x?xi32> {tfc.dims = [1, 2]}) {
  return
}

// -----

// expected-error @+1 {{'func.func' op 'tfc.dims' of result #0 has 3 names for tensor<?x768xf32> (rank 2)}}
func.func private @result_dims() -> (tensor<?x768xf32> {tfc.dims = ["a", "b", "c"]})

// -----

// expected-error @+1 {{'func.func' op 'tfc.name' of result #0 must be a non-empty string, got ""}}
func.func @result_name(%a: tensor<4xf32>) -> (tensor<4xf32> {tfc.name = ""}) {
  return %a : tensor<4xf32>
}
