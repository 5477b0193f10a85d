// Every verifier error of the tfc ops. Messages name the shapes involved.
// RUN: tfc-opt %s -split-input-file -verify-diagnostics

func.func @param_empty_name() {
  // expected-error @+1 {{'tfc.param' op requires a non-empty checkpoint tensor name}}
  %0 = tfc.param "" : tensor<768xf32>
  return
}

// -----

func.func @param_dynamic() {
  // expected-error @+1 {{'tfc.param' op parameter "h.0.ln_1.weight" must have a static shape, got tensor<?xf32>}}
  %0 = tfc.param "h.0.ln_1.weight" : tensor<?xf32>
  return
}

// -----

func.func @param_unranked() {
  // expected-error @+1 {{result #0 must be ranked tensor}}
  %0 = "tfc.param"() <{name = "w"}> : () -> tensor<*xf32>
  return
}

// -----

func.func @constant_not_tensor() {
  // expected-error @+1 {{'tfc.constant' op value must be a ranked tensor of f32, i32, i64 or i1, got vector<2xi32>}}
  %0 = tfc.constant dense<1> : vector<2xi32>
  return
}

// -----

func.func @constant_element_type() {
  // expected-error @+1 {{'tfc.constant' op value must be a ranked tensor of f32, i32, i64 or i1, got tensor<2xf16>}}
  %0 = tfc.constant dense<1.0> : tensor<2xf16>
  return
}

// -----

func.func @constant_wrong_result(%a: tensor<2xf32>) {
  // expected-error @+1 {{'tfc.constant' op result type tensor<3xf32> differs from the inferred type tensor<2xf32>}}
  %0 = "tfc.constant"() <{value = dense<1.0> : tensor<2xf32>}> : () -> tensor<3xf32>
  return
}

// -----

func.func @add_no_broadcast(%a: tensor<?x?x768xf32>, %b: tensor<512xf32>) {
  // expected-error @+1 {{'tfc.add' op operand shapes do not broadcast: lhs tensor<?x?x768xf32> and rhs tensor<512xf32> (lhs dim 2 is 768, rhs dim 0 is 512)}}
  %0 = tfc.add %a, %b : (tensor<?x?x768xf32>, tensor<512xf32>) -> tensor<?x?x768xf32>
  return
}

// -----

func.func @mul_no_broadcast_inner(%a: tensor<2x3x4xf32>, %b: tensor<5x1x4xf32>) {
  // expected-error @+1 {{'tfc.mul' op operand shapes do not broadcast: lhs tensor<2x3x4xf32> and rhs tensor<5x1x4xf32> (lhs dim 0 is 2, rhs dim 0 is 5)}}
  %0 = tfc.mul %a, %b : (tensor<2x3x4xf32>, tensor<5x1x4xf32>) -> tensor<2x3x4xf32>
  return
}

// -----

func.func @sub_element_types(%a: tensor<4xf32>, %b: tensor<4xi32>) {
  // expected-error @+1 {{'tfc.sub' op operand element types differ: lhs tensor<4xf32>, rhs tensor<4xi32>}}
  %0 = tfc.sub %a, %b : (tensor<4xf32>, tensor<4xi32>) -> tensor<4xf32>
  return
}

// -----

func.func @pow_integer(%a: tensor<4xi32>) {
  // expected-error @+1 {{'tfc.pow' op operand #0 must be ranked tensor of 32-bit float values}}
  %0 = tfc.pow %a, %a : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return
}

// -----

func.func @and_float(%a: tensor<4xf32>) {
  // expected-error @+1 {{'tfc.and' op operand #0 must be ranked tensor of 1-bit signless integer values}}
  %0 = tfc.and %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @add_unranked(%a: tensor<*xf32>) {
  // expected-error @+1 {{'tfc.add' op operand #0 must be ranked tensor}}
  %0 = tfc.add %a, %a : (tensor<*xf32>, tensor<*xf32>) -> tensor<*xf32>
  return
}

// -----

func.func @add_unranked_result(%a: tensor<4xf32>) {
  // expected-error @+1 {{'tfc.add' op result type tensor<*xf32> differs from the inferred type tensor<4xf32>}}
  %0 = tfc.add %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<*xf32>
  return
}

// -----

func.func @cmp_no_broadcast(%a: tensor<?x3xi32>, %b: tensor<4xi32>) {
  // expected-error @+1 {{'tfc.cmp' op operand shapes do not broadcast: lhs tensor<?x3xi32> and rhs tensor<4xi32> (lhs dim 1 is 3, rhs dim 0 is 4)}}
  %0 = tfc.cmp eq, %a, %b : (tensor<?x3xi32>, tensor<4xi32>) -> tensor<?x3xi1>
  return
}

// -----

func.func @cmp_element_types(%a: tensor<4xi32>, %b: tensor<4xi64>) {
  // expected-error @+1 {{'tfc.cmp' op operand element types differ: lhs tensor<4xi32>, rhs tensor<4xi64>}}
  %0 = tfc.cmp eq, %a, %b : (tensor<4xi32>, tensor<4xi64>) -> tensor<4xi1>
  return
}

// -----

func.func @cmp_bad_predicate(%a: tensor<4xi32>) {
  // expected-error @+1 {{'tfc.cmp' op predicate must be one of eq, ne, lt, le, gt, ge, got "lte"}}
  %0 = tfc.cmp lte, %a, %a : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>
  return
}

// -----

func.func @cmp_bad_predicate_generic(%a: tensor<4xi32>) {
  // expected-error @+1 {{'tfc.cmp' op predicate must be one of eq, ne, lt, le, gt, ge, got "less than"}}
  %0 = "tfc.cmp"(%a, %a) <{predicate = "less than"}> : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>
  return
}

// -----

func.func @cmp_predicate_kind(%a: tensor<4xi32>) {
  // expected-error @+1 {{'tfc.cmp' op attribute 'predicate' failed to satisfy constraint: string attribute}}
  %0 = "tfc.cmp"(%a, %a) {predicate = 2 : i64} : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>
  return
}

// -----

func.func @where_element_types(%m: tensor<4xi1>, %a: tensor<4xf32>, %b: tensor<4xi32>) {
  // expected-error @+1 {{'tfc.where' op on_true tensor<4xf32> and on_false tensor<4xi32> have different element types}}
  %0 = tfc.where %m, %a, %b : (tensor<4xi1>, tensor<4xf32>, tensor<4xi32>) -> tensor<4xf32>
  return
}

// -----

func.func @where_no_broadcast(%m: tensor<?x5xi1>, %a: tensor<?x4xf32>, %b: tensor<f32>) {
  // expected-error @+1 {{'tfc.where' op operand shapes do not broadcast: condition tensor<?x5xi1>, on_true tensor<?x4xf32>, on_false tensor<f32>}}
  %0 = tfc.where %m, %a, %b : (tensor<?x5xi1>, tensor<?x4xf32>, tensor<f32>) -> tensor<?x4xf32>
  return
}

// -----

func.func @where_condition_type(%m: tensor<4xi32>, %a: tensor<4xf32>) {
  // expected-error @+1 {{'tfc.where' op operand #0 must be ranked tensor of 1-bit signless integer values}}
  %0 = tfc.where %m, %a, %a : (tensor<4xi32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @not_float(%a: tensor<4xf32>) {
  // expected-error @+1 {{'tfc.not' op operand #0 must be ranked tensor of 1-bit signless integer values}}
  %0 = tfc.not %a : tensor<4xf32>
  return
}

// -----

func.func @exp_integer(%a: tensor<4xi32>) {
  // expected-error @+1 {{'tfc.exp' op operand #0 must be ranked tensor of 32-bit float values}}
  %0 = tfc.exp %a : tensor<4xi32>
  return
}

// -----

func.func @gelu_approximate(%a: tensor<4xf32>) {
  // expected-error @+1 {{'tfc.gelu' op approximate must be "none" or "tanh", got "fast"}}
  %0 = tfc.gelu %a {approximate = "fast"} : tensor<4xf32>
  return
}

// -----

func.func @cast_shape(%a: tensor<?x4xi1>) {
  // expected-error @+1 {{'tfc.cast' op input tensor<?x4xi1> and result tensor<?x5xf32> differ in shape; a cast only changes the element type}}
  %0 = tfc.cast %a : tensor<?x4xi1> to tensor<?x5xf32>
  return
}

// -----

func.func @cast_dynamic_vs_static(%a: tensor<?x4xi1>) {
  // expected-error @+1 {{'tfc.cast' op input tensor<?x4xi1> and result tensor<2x4xf32> differ in shape}}
  %0 = tfc.cast %a : tensor<?x4xi1> to tensor<2x4xf32>
  return
}

// -----

func.func @matmul_k(%a: tensor<?x?x768xf32>, %b: tensor<512x64xf32>) {
  // expected-error @+1 {{'tfc.matmul' op contraction dims differ: lhs tensor<?x?x768xf32> has K=768, rhs tensor<512x64xf32> has K=512}}
  %0 = tfc.matmul %a, %b : (tensor<?x?x768xf32>, tensor<512x64xf32>) -> tensor<?x?x64xf32>
  return
}

// -----

func.func @matmul_k_transposed(%a: tensor<?x?x768xf32>, %b: tensor<768x64xf32>) {
  // expected-error @+1 {{'tfc.matmul' op contraction dims differ: lhs tensor<?x?x768xf32> has K=768, rhs tensor<768x64xf32> has K=64 (transpose_b)}}
  %0 = tfc.matmul %a, %b {transpose_b = true} : (tensor<?x?x768xf32>, tensor<768x64xf32>) -> tensor<?x?x768xf32>
  return
}

// -----

func.func @matmul_rank(%a: tensor<768xf32>, %b: tensor<768x64xf32>) {
  // expected-error @+1 {{'tfc.matmul' op lhs must have rank >= 2, got tensor<768xf32>}}
  %0 = tfc.matmul %a, %b : (tensor<768xf32>, tensor<768x64xf32>) -> tensor<64xf32>
  return
}

// -----

func.func @matmul_rhs_rank(%a: tensor<2x768xf32>, %b: tensor<768xf32>) {
  // expected-error @+1 {{'tfc.matmul' op rhs must have rank >= 2, got tensor<768xf32>}}
  %0 = tfc.matmul %a, %b : (tensor<2x768xf32>, tensor<768xf32>) -> tensor<2xf32>
  return
}

// -----

func.func @matmul_batch(%a: tensor<2x?x8xf32>, %b: tensor<3x8x4xf32>) {
  // expected-error @+1 {{'tfc.matmul' op batch dims do not broadcast: lhs tensor<2x?x8xf32>, rhs tensor<3x8x4xf32>}}
  %0 = tfc.matmul %a, %b : (tensor<2x?x8xf32>, tensor<3x8x4xf32>) -> tensor<2x?x4xf32>
  return
}

// -----

func.func @transpose_length(%a: tensor<?x?x768xf32>) {
  // expected-error @+1 {{'tfc.transpose' op perm array<i64: 1, 0> has 2 entries but input tensor<?x?x768xf32> has rank 3}}
  %0 = tfc.transpose %a {perm = array<i64: 1, 0>} : tensor<?x?x768xf32> -> tensor<?x?xf32>
  return
}

// -----

func.func @transpose_duplicate(%a: tensor<?x?x768xf32>) {
  // expected-error @+1 {{'tfc.transpose' op perm array<i64: 0, 0, 2> is not a permutation of 0..2 (input tensor<?x?x768xf32>)}}
  %0 = tfc.transpose %a {perm = array<i64: 0, 0, 2>} : tensor<?x?x768xf32> -> tensor<?x?x768xf32>
  return
}

// -----

func.func @transpose_out_of_range(%a: tensor<?x?x768xf32>) {
  // expected-error @+1 {{'tfc.transpose' op perm array<i64: 0, 3, 1> is not a permutation of 0..2}}
  %0 = tfc.transpose %a {perm = array<i64: 0, 3, 1>} : tensor<?x?x768xf32> -> tensor<?x?x768xf32>
  return
}

// -----

func.func @transpose_missing_perm(%a: tensor<?x?x768xf32>) {
  // expected-error @+1 {{'tfc.transpose' op requires attribute 'perm'}}
  %0 = "tfc.transpose"(%a) : (tensor<?x?x768xf32>) -> tensor<?x?x768xf32>
  return
}

// -----

func.func @reshape_entry(%a: tensor<?x?x768xf32>) {
  // expected-error @+1 {{'tfc.reshape' op shape array<i64: -1, -1, 0, 64> has entry 0 at index 2; entries are -1 (dynamic) or positive}}
  %0 = tfc.reshape %a {shape = array<i64: -1, -1, 0, 64>} : tensor<?x?x768xf32> -> tensor<?x?x0x64xf32>
  return
}

// -----

func.func @reshape_dynamic_count(%a: tensor<?x?x768xf32>) {
  // expected-error @+1 {{'tfc.reshape' op shape array<i64: -1, 768> has 1 dynamic (-1) entries but input tensor<?x?x768xf32> has 2 dynamic dims (they are carried over one to one)}}
  %0 = tfc.reshape %a {shape = array<i64: -1, 768>} : tensor<?x?x768xf32> -> tensor<?x768xf32>
  return
}

// -----

func.func @reshape_product(%a: tensor<?x?x768xf32>) {
  // expected-error @+1 {{'tfc.reshape' op product of static dims differs: input tensor<?x?x768xf32> has 768, shape array<i64: -1, -1, 12, 32> has 384}}
  %0 = tfc.reshape %a {shape = array<i64: -1, -1, 12, 32>} : tensor<?x?x768xf32> -> tensor<?x?x12x32xf32>
  return
}

// -----

func.func @reshape_overflow(%a: tensor<?x768xf32>) {
  // expected-error @+1 {{'tfc.reshape' op static sizes overflow}}
  %0 = tfc.reshape %a {shape = array<i64: -1, 4611686018427387904, 4>} : tensor<?x768xf32> -> tensor<?x4611686018427387904x4xf32>
  return
}

// -----

func.func @slice_axis(%a: tensor<?x?x768xf32>) {
  // expected-error @+1 {{'tfc.slice' op axis 3 is out of range for tensor<?x?x768xf32> (rank 3)}}
  %0 = tfc.slice %a {axis = 3 : i64, start = 0 : i64, end = 1 : i64} : tensor<?x?x768xf32> -> tensor<?x?x768xf32>
  return
}

// -----

func.func @slice_negative_axis(%a: tensor<?x?x768xf32>) {
  // expected-error @+1 {{'tfc.slice' op axis -1 is out of range for tensor<?x?x768xf32> (rank 3)}}
  %0 = tfc.slice %a {axis = -1 : i64, start = 0 : i64, end = 1 : i64} : tensor<?x?x768xf32> -> tensor<?x?x1xf32>
  return
}

// -----

func.func @slice_empty(%a: tensor<?x?x768xf32>) {
  // expected-error @+1 {{'tfc.slice' op slice [5, 5) of dim 2 of tensor<?x?x768xf32> is empty or negative; need 0 <= start < end}}
  %0 = tfc.slice %a {axis = 2 : i64, start = 5 : i64, end = 5 : i64} : tensor<?x?x768xf32> -> tensor<?x?x0xf32>
  return
}

// -----

func.func @slice_negative_start(%a: tensor<?x?x768xf32>) {
  // expected-error @+1 {{'tfc.slice' op slice [-1, 5) of dim 1 of tensor<?x?x768xf32> is empty or negative}}
  %0 = tfc.slice %a {axis = 1 : i64, start = -1 : i64, end = 5 : i64} : tensor<?x?x768xf32> -> tensor<?x6x768xf32>
  return
}

// -----

func.func @slice_bounds(%a: tensor<?x?x768xf32>) {
  // expected-error @+1 {{'tfc.slice' op slice [0, 800) is out of bounds for dim 2 (size 768) of tensor<?x?x768xf32>}}
  %0 = tfc.slice %a {axis = 2 : i64, start = 0 : i64, end = 800 : i64} : tensor<?x?x768xf32> -> tensor<?x?x800xf32>
  return
}

// -----

func.func @slice_step(%a: tensor<?x?x768xf32>) {
  // expected-error @+1 {{'tfc.slice' op slice step 0 must be at least 1}}
  %0 = tfc.slice %a {axis = 2 : i64, start = 0 : i64, end = 8 : i64, step = 0 : i64} : tensor<?x?x768xf32> -> tensor<?x?x8xf32>
  return
}

// -----

func.func @slice_negative_step(%a: tensor<?x?x768xf32>) {
  // expected-error @+1 {{'tfc.slice' op slice step -2 must be at least 1}}
  %0 = tfc.slice %a {axis = 2 : i64, start = 0 : i64, end = 8 : i64, step = -2 : i64} : tensor<?x?x768xf32> -> tensor<?x?x4xf32>
  return
}

// -----

func.func @slice_missing_end(%a: tensor<?x?x768xf32>) {
  // expected-error @+1 {{'tfc.slice' op requires attribute 'end'}}
  %0 = "tfc.slice"(%a) <{axis = 2 : i64, start = 0 : i64}> : (tensor<?x?x768xf32>) -> tensor<?x?x768xf32>
  return
}

// -----

func.func @concat_dims(%a: tensor<?x12x?x64xf32>, %b: tensor<?x8x1x64xf32>) {
  // expected-error @+1 {{'tfc.concat' op input #1 tensor<?x8x1x64xf32> differs from input #0 tensor<?x12x?x64xf32> in dim 1 (8 vs 12); only dim 2 may differ}}
  %0 = tfc.concat %a, %b {axis = 2 : i64} : (tensor<?x12x?x64xf32>, tensor<?x8x1x64xf32>) -> tensor<?x12x?x64xf32>
  return
}

// -----

func.func @concat_dims_later(%a: tensor<?x2xf32>, %b: tensor<4x2xf32>, %c: tensor<5x2xf32>) {
  // expected-error @+1 {{'tfc.concat' op input #2 tensor<5x2xf32> differs from input #1 tensor<4x2xf32> in dim 0 (5 vs 4); only dim 1 may differ}}
  %0 = tfc.concat %a, %b, %c {axis = 1 : i64} : (tensor<?x2xf32>, tensor<4x2xf32>, tensor<5x2xf32>) -> tensor<4x6xf32>
  return
}

// -----

func.func @concat_rank(%a: tensor<2x3xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{'tfc.concat' op input #1 tensor<3xf32> has rank 1 but input #0 tensor<2x3xf32> has rank 2}}
  %0 = tfc.concat %a, %b {axis = 0 : i64} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<3x3xf32>
  return
}

// -----

func.func @concat_element_types(%a: tensor<2xf32>, %b: tensor<2xi32>) {
  // expected-error @+1 {{'tfc.concat' op element types differ: input #0 tensor<2xf32>, input #1 tensor<2xi32>}}
  %0 = tfc.concat %a, %b {axis = 0 : i64} : (tensor<2xf32>, tensor<2xi32>) -> tensor<4xf32>
  return
}

// -----

func.func @concat_axis(%a: tensor<2xf32>) {
  // expected-error @+1 {{'tfc.concat' op axis 1 is out of range for tensor<2xf32> (rank 1)}}
  %0 = tfc.concat %a, %a {axis = 1 : i64} : (tensor<2xf32>, tensor<2xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @concat_nothing() {
  // expected-error @+1 {{'tfc.concat' op requires at least one input}}
  %0 = "tfc.concat"() <{axis = 0 : i64}> : () -> tensor<4xf32>
  return
}

// -----

func.func @gather_scalar_table(%t: tensor<f32>, %ids: tensor<4xi32>) {
  // expected-error @+1 {{'tfc.gather' op table must have rank >= 1, got tensor<f32>}}
  %0 = tfc.gather %t, %ids : (tensor<f32>, tensor<4xi32>) -> tensor<4xf32>
  return
}

// -----

func.func @gather_panels_shape(%p: tensor<2x16x48xf32>, %ids: tensor<4xi32>) {
  // expected-error @+1 {{'tfc.gather' op packed_rows = 100 needs the f32 panels of a [100, D] table (tfc.pack_panels), got tensor<2x16x48xf32>}}
  %0 = tfc.gather %p, %ids {packed_rows = 100 : i64} : (tensor<2x16x48xf32>, tensor<4xi32>) -> tensor<4x16xf32>
  return
}

// -----

func.func @gather_float_ids(%t: tensor<10x4xf32>, %ids: tensor<4xf32>) {
  // expected-error @+1 {{'tfc.gather' op operand #1 must be ranked tensor of 32-bit signless integer or 64-bit signless integer values}}
  %0 = tfc.gather %t, %ids : (tensor<10x4xf32>, tensor<4xf32>) -> tensor<4x4xf32>
  return
}

// -----

func.func @reduce_axis(%a: tensor<?x?x768xf32>) {
  // expected-error @+1 {{'tfc.reduce_sum' op axis 3 is out of range for tensor<?x?x768xf32> (rank 3)}}
  %0 = tfc.reduce_sum %a {axis = 3 : i64} : tensor<?x?x768xf32> -> tensor<?x?xf32>
  return
}

// -----

func.func @reduce_negative_axis(%a: tensor<?x?x768xf32>) {
  // expected-error @+1 {{'tfc.reduce_max' op axis -1 is out of range for tensor<?x?x768xf32> (rank 3)}}
  %0 = tfc.reduce_max %a {axis = -1 : i64} : tensor<?x?x768xf32> -> tensor<?x?xf32>
  return
}

// -----

func.func @reduce_mean_integer(%a: tensor<4xi32>) {
  // expected-error @+1 {{'tfc.reduce_mean' op operand #0 must be ranked tensor of 32-bit float values}}
  %0 = tfc.reduce_mean %a {axis = 0 : i64} : tensor<4xi32> -> tensor<i32>
  return
}

// -----

func.func @softmax_axis(%a: tensor<?x12x?x?xf32>) {
  // expected-error @+1 {{'tfc.softmax' op axis 4 is out of range for tensor<?x12x?x?xf32> (rank 4)}}
  %0 = tfc.softmax %a {axis = 4 : i64} : tensor<?x12x?x?xf32>
  return
}

// -----

func.func @layer_norm_gamma(%x: tensor<?x?x768xf32>, %g: tensor<512xf32>, %b: tensor<768xf32>) {
  // expected-error @+1 {{'tfc.layer_norm' op gamma tensor<512xf32> does not match the last dim of input tensor<?x?x768xf32> (512 vs 768)}}
  %0 = tfc.layer_norm %x, %g, %b {epsilon = 1.0e-5 : f64} : (tensor<?x?x768xf32>, tensor<512xf32>, tensor<768xf32>) -> tensor<?x?x768xf32>
  return
}

// -----

func.func @layer_norm_beta(%x: tensor<?x?x768xf32>, %g: tensor<768xf32>, %b: tensor<769xf32>) {
  // expected-error @+1 {{'tfc.layer_norm' op beta tensor<769xf32> does not match the last dim of input tensor<?x?x768xf32> (769 vs 768)}}
  %0 = tfc.layer_norm %x, %g, %b {epsilon = 1.0e-5 : f64} : (tensor<?x?x768xf32>, tensor<768xf32>, tensor<769xf32>) -> tensor<?x?x768xf32>
  return
}

// -----

func.func @layer_norm_gamma_rank(%x: tensor<?x?x768xf32>, %g: tensor<1x768xf32>, %b: tensor<768xf32>) {
  // expected-error @+1 {{'tfc.layer_norm' op gamma must have rank 1, got tensor<1x768xf32>}}
  %0 = tfc.layer_norm %x, %g, %b {epsilon = 1.0e-5 : f64} : (tensor<?x?x768xf32>, tensor<1x768xf32>, tensor<768xf32>) -> tensor<?x?x768xf32>
  return
}

// -----

func.func @layer_norm_epsilon(%x: tensor<?x?x768xf32>, %g: tensor<768xf32>) {
  // expected-error @+1 {{'tfc.layer_norm' op epsilon must be a finite number >= 0, got -1}}
  %0 = tfc.layer_norm %x, %g, %g {epsilon = -1.0 : f64} : (tensor<?x?x768xf32>, tensor<768xf32>, tensor<768xf32>) -> tensor<?x?x768xf32>
  return
}

// -----

func.func @layer_norm_scalar(%x: tensor<f32>, %g: tensor<1xf32>) {
  // expected-error @+1 {{'tfc.layer_norm' op input must have rank >= 1 (the last axis is normalized), got tensor<f32>}}
  %0 = tfc.layer_norm %x, %g, %g {epsilon = 1.0e-5 : f64} : (tensor<f32>, tensor<1xf32>, tensor<1xf32>) -> tensor<f32>
  return
}

// -----

func.func @layer_norm_no_epsilon(%x: tensor<?x768xf32>, %g: tensor<768xf32>) {
  // expected-error @+1 {{'tfc.layer_norm' op requires attribute 'epsilon'}}
  %0 = "tfc.layer_norm"(%x, %g, %g) : (tensor<?x768xf32>, tensor<768xf32>, tensor<768xf32>) -> tensor<?x768xf32>
  return
}

// -----

func.func @rms_norm_gamma(%x: tensor<?x?x512xf32>, %g: tensor<768xf32>) {
  // expected-error @+1 {{'tfc.rms_norm' op gamma tensor<768xf32> does not match the last dim of input tensor<?x?x512xf32> (768 vs 512)}}
  %0 = tfc.rms_norm %x, %g {epsilon = 1.0e-6 : f64} : (tensor<?x?x512xf32>, tensor<768xf32>) -> tensor<?x?x512xf32>
  return
}

// -----

func.func @positions_axis(%ids: tensor<?x?xi32>) {
  // expected-error @+1 {{'tfc.positions' op axis 2 is out of range for tensor<?x?xi32> (rank 2)}}
  %0 = tfc.positions %ids {axis = 2 : i64} : tensor<?x?xi32> -> tensor<?xi32>
  return
}

// -----

func.func @positions_offset_without_axis(%ids: tensor<?x?xi32>, %k: tensor<?x12x?x64xf32>) {
  // expected-error @+1 {{'tfc.positions' op has an offset_ref operand but no 'offset_axis'}}
  %0 = tfc.positions %ids, %k {axis = 1 : i64} : tensor<?x?xi32>, tensor<?x12x?x64xf32> -> tensor<?xi32>
  return
}

// -----

func.func @positions_axis_without_offset(%ids: tensor<?x?xi32>) {
  // expected-error @+1 {{'tfc.positions' op has 'offset_axis' but no offset_ref operand}}
  %0 = tfc.positions %ids {axis = 1 : i64, offset_axis = 2 : i64} : tensor<?x?xi32> -> tensor<?xi32>
  return
}

// -----

func.func @positions_offset_axis(%ids: tensor<?x?xi32>, %k: tensor<?x12x?x64xf32>) {
  // expected-error @+1 {{'tfc.positions' op offset_axis 4 is out of range for tensor<?x12x?x64xf32> (rank 4)}}
  %0 = tfc.positions %ids, %k {axis = 1 : i64, offset_axis = 4 : i64} : tensor<?x?xi32>, tensor<?x12x?x64xf32> -> tensor<?xi32>
  return
}

// -----

func.func @causal_mask_axis(%q: tensor<?x12x?x64xf32>) {
  // expected-error @+1 {{'tfc.causal_mask' op k_axis 4 is out of range for tensor<?x12x?x64xf32> (rank 4)}}
  %0 = tfc.causal_mask %q, %q {q_axis = 2 : i64, k_axis = 4 : i64} : (tensor<?x12x?x64xf32>, tensor<?x12x?x64xf32>) -> tensor<?x?xi1>
  return
}

// -----

func.func @causal_mask_more_queries(%q: tensor<1x8xf32>, %k: tensor<1x4xf32>) {
  // expected-error @+1 {{'tfc.causal_mask' op has more queries (8, dim 1 of tensor<1x8xf32>) than keys (4, dim 1 of tensor<1x4xf32>)}}
  %0 = tfc.causal_mask %q, %k {q_axis = 1 : i64, k_axis = 1 : i64} : (tensor<1x8xf32>, tensor<1x4xf32>) -> tensor<8x4xi1>
  return
}

// -----

func.func @argmax_axis(%x: tensor<?x12xf32>) {
  // expected-error @+1 {{'tfc.argmax' op axis 2 is out of range}}
  %0 = tfc.argmax %x {axis = 2 : i64} : tensor<?x12xf32> -> tensor<?xi32>
  return
}

// -----

func.func @argmax_result_type(%x: tensor<?x12xf32>) {
  // expected-error @+1 {{'tfc.argmax' op}}
  %0 = tfc.argmax %x {axis = 1 : i64} : tensor<?x12xf32> -> tensor<?xf32>
  return
}

// -----

func.func @topk_k_too_large(%x: tensor<?x12xf32>) {
  // expected-error @+1 {{'tfc.topk' op k = 13 must be in 1..12 (the last dim of tensor<?x12xf32>)}}
  %0:2 = tfc.topk %x {k = 13 : i64} : tensor<?x12xf32> -> (tensor<?x13xf32>, tensor<?x13xi32>)
  return
}

// -----

func.func @cumsum_axis(%x: tensor<?x12xi32>) {
  // expected-error @+1 {{'tfc.cumsum' op axis -1 is out of range}}
  %0 = tfc.cumsum %x {axis = -1 : i64} : tensor<?x12xi32>
  return
}

// -----

func.func @arange_both(%x: tensor<?xi32>) {
  // expected-error @+1 {{'tfc.arange' op with a ref operand takes 'axis' and no 'length'}}
  %0 = tfc.arange %x : tensor<?xi32> {axis = 0 : i64, length = 3 : i64} -> tensor<?xi32>
  return
}

// -----

func.func @arange_neither() {
  // expected-error @+1 {{'tfc.arange' op without a ref operand takes 'length' and no 'axis'}}
  %0 = tfc.arange {start = 1 : i64} -> tensor<3xi32>
  return
}

// -----

func.func @arange_overflow() {
  // expected-error @+1 {{'tfc.arange' op start 2147483647 and step 1 give values outside i32}}
  %0 = tfc.arange {length = 2 : i64, start = 2147483647 : i64} -> tensor<2xi32>
  return
}

// -----

func.func @matmul_bf16_batched_rhs(%a: tensor<2x4x8xf32>, %b: tensor<2x8x4xbf16>) {
  // expected-error @+1 {{'tfc.matmul' op operand element types differ: lhs tensor<2x4x8xf32>, rhs tensor<2x8x4xbf16> (only a rank-2 rhs may be bf16, with an f32 lhs)}}
  %0 = tfc.matmul %a, %b : (tensor<2x4x8xf32>, tensor<2x8x4xbf16>) -> tensor<2x4x4xf32>
  return
}

// -----

func.func @cast_bf16_to_int(%a: tensor<4xbf16>) {
  // expected-error @+1 {{'tfc.cast' op casts to or from bf16 must be from or to f32, got tensor<4xbf16> to tensor<4xi32>}}
  %0 = tfc.cast %a : tensor<4xbf16> to tensor<4xi32>
  return
}

// -----

func.func @pack_panels_odd_bf16(%w: tensor<33x96xbf16>) {
  // expected-error @+1 {{'tfc.pack_panels' op a bf16 weight needs an even K (pairs of K), got tensor<33x96xbf16>}}
  %0 = tfc.pack_panels %w : tensor<33x96xbf16> -> tensor<2x16x48x2xbf16>
  return
}

// -----

func.func @pack_panels_dynamic(%w: tensor<?x96xf32>) {
  // expected-error @+1 {{'tfc.pack_panels' op input must be a static rank-2 weight, got tensor<?x96xf32>}}
  %0 = tfc.pack_panels %w : tensor<?x96xf32> -> tensor<2x?x48xf32>
  return
}

// -----

func.func @packed_n_mismatch(%x: tensor<?x64xf32>, %p: tensor<3x64x48xf32>) {
  // expected-error @+1 {{'tfc.matmul' op weight tensor<3x64x48xf32> is not a panel layout of N = 96 columns (tfc.pack_panels)}}
  %0 = tfc.matmul %x, %p {packed_n = 96 : i64} : (tensor<?x64xf32>, tensor<3x64x48xf32>) -> tensor<?x96xf32>
  return
}

// -----

func.func @packed_n_transpose(%x: tensor<?x64xf32>, %p: tensor<3x64x48xf32>) {
  // expected-error @+1 {{'tfc.linear' op packed_n = 100 needs a positive N, no transpose_b and a static rank-3 panel weight (tfc.pack_panels), got tensor<3x64x48xf32>}}
  %0 = tfc.linear %x, %p {packed_n = 100 : i64, transpose_b = true} : (tensor<?x64xf32>, tensor<3x64x48xf32>) -> tensor<?x100xf32>
  return
}

// -----

func.func @packed_k_mismatch(%x: tensor<?x32xf32>, %p: tensor<3x64x48xf32>) {
  // expected-error @+1 {{'tfc.matmul' op contraction dims differ: lhs tensor<?x32xf32> has K=32, packed weight tensor<3x64x48xf32> has K=64}}
  %0 = tfc.matmul %x, %p {packed_n = 100 : i64} : (tensor<?x32xf32>, tensor<3x64x48xf32>) -> tensor<?x100xf32>
  return
}
