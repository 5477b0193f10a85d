// Generic IR that no builder would produce: wrong operand counts, missing or
// mistyped attributes, unranked operands. tfc-opt must report an error for
// each, never crash.
// RUN: tfc-opt %s -split-input-file -verify-diagnostics

func.func @no_operands() {
  // expected-error @+1 {{'tfc.add' op expected 2 operands, but found 0}}
  %0 = "tfc.add"() : () -> tensor<f32>
  return
}

// -----

func.func @too_many_operands(%a: tensor<4xf32>) {
  // expected-error @+1 {{'tfc.exp' op requires a single operand}}
  %0 = "tfc.exp"(%a, %a) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @positions_three_operands(%a: tensor<4xf32>) {
  // expected-error @+1 {{'tfc.positions' op operand group starting at #1 requires 0 or 1 element, but found 2}}
  %0 = "tfc.positions"(%a, %a, %a) <{axis = 0 : i64, offset_axis = 0 : i64}> : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xi32>
  return
}

// -----

func.func @mistyped_attribute(%a: tensor<2x2xf32>) {
  // expected-error @+1 {{invalid properties {transpose_b = 1 : i64} for op tfc.matmul}}
  %0 = "tfc.matmul"(%a, %a) <{transpose_b = 1 : i64}> : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  return
}

// -----

func.func @narrow_integer_attribute(%a: tensor<4x4xf32>) {
  // expected-error @+1 {{'tfc.slice' op attribute 'axis' failed to satisfy constraint: 64-bit signless integer attribute}}
  %0 = "tfc.slice"(%a) <{axis = 1 : i32, start = 0 : i64, end = 2 : i64}> : (tensor<4x4xf32>) -> tensor<4x2xf32>
  return
}

// -----

func.func @missing_axis(%a: tensor<4xf32>) {
  // expected-error @+1 {{'tfc.reduce_sum' op requires attribute 'axis'}}
  %0 = "tfc.reduce_sum"(%a) : (tensor<4xf32>) -> tensor<f32>
  return
}

// -----

func.func @unranked_operand(%a: tensor<*xf32>) {
  // expected-error @+1 {{'tfc.transpose' op operand #0 must be ranked tensor}}
  %0 = "tfc.transpose"(%a) <{perm = array<i64: 0>}> : (tensor<*xf32>) -> tensor<*xf32>
  return
}

// -----

func.func @non_tensor_operand(%a: f32) {
  // expected-error @+1 {{'tfc.neg' op operand #0 must be ranked tensor}}
  %0 = "tfc.neg"(%a) : (f32) -> f32
  return
}

// -----

func.func @two_results(%a: tensor<4xf32>) {
  // expected-error @+1 {{'tfc.exp' op requires one result}}
  %0:2 = "tfc.exp"(%a) : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  return
}

// -----

func.func @custom_form_missing_attribute(%a: tensor<4xf32>) {
  // expected-error @+1 {{'tfc.softmax' op requires attribute 'axis'}}
  %0 = tfc.softmax %a : tensor<4xf32>
  return
}
