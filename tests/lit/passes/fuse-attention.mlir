// fuse-attention: scaled dot-product attention spelled out in primitives
// becomes tfc.fused_attention; a second user of an intermediate blocks it.
// RUN: tfc-opt %s --fuse-attention -split-input-file | FileCheck %s

// The prelude's `sdpa`: q @ transpose(k) / sqrt(dh), softmax, @ v.
// CHECK-LABEL: func.func @sdpa
// CHECK-SAME: (%[[Q:.*]]: tensor<?x4x?x16xf32>, %[[K:.*]]: tensor<?x4x?x16xf32>, %[[V:.*]]: tensor<?x4x?x16xf32>)
// CHECK-NEXT: %[[O:.*]] = tfc.fused_attention %[[Q]], %[[K]], %[[V]] {scale = 2.500000e-01 : f64} : (tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>) -> tensor<?x4x?x16xf32>
// CHECK-NEXT: return %[[O]]
func.func @sdpa(%q: tensor<?x4x?x16xf32>, %k: tensor<?x4x?x16xf32>, %v: tensor<?x4x?x16xf32>) -> tensor<?x4x?x16xf32> {
  %kt = tfc.transpose %k {perm = array<i64: 0, 1, 3, 2>} : tensor<?x4x?x16xf32> -> tensor<?x4x16x?xf32>
  %s = tfc.matmul %q, %kt : (tensor<?x4x?x16xf32>, tensor<?x4x16x?xf32>) -> tensor<?x4x?x?xf32>
  %c = tfc.constant dense<4.0> : tensor<f32>
  %d = tfc.div %s, %c : (tensor<?x4x?x?xf32>, tensor<f32>) -> tensor<?x4x?x?xf32>
  %p = tfc.softmax %d {axis = 3 : i64} : tensor<?x4x?x?xf32>
  %o = tfc.matmul %p, %v : (tensor<?x4x?x?xf32>, tensor<?x4x?x16xf32>) -> tensor<?x4x?x16xf32>
  return %o : tensor<?x4x?x16xf32>
}

// -----

// The prelude's `sdpa_masked` with a padding mask: masked_fill(s, not keep,
// -1e9) is where(not keep, -1e9, s); keep becomes the operand.
// CHECK-LABEL: func.func @sdpa_masked
// CHECK-SAME: (%[[Q:.*]]: tensor<?x12x?x64xf32>, %[[K:.*]]: tensor<?x12x?x64xf32>, %[[V:.*]]: tensor<?x12x?x64xf32>, %[[KEEP:.*]]: tensor<?x1x1x?xi1>)
// CHECK-NEXT: %[[O:.*]] = tfc.fused_attention %[[Q]], %[[K]], %[[V]] keep(%[[KEEP]]) {scale = 1.250000e-01 : f64}
// CHECK-NEXT: return %[[O]]
func.func @sdpa_masked(%q: tensor<?x12x?x64xf32>, %k: tensor<?x12x?x64xf32>, %v: tensor<?x12x?x64xf32>, %keep: tensor<?x1x1x?xi1>) -> tensor<?x12x?x64xf32> {
  %kt = tfc.transpose %k {perm = array<i64: 0, 1, 3, 2>} : tensor<?x12x?x64xf32> -> tensor<?x12x64x?xf32>
  %s = tfc.matmul %q, %kt : (tensor<?x12x?x64xf32>, tensor<?x12x64x?xf32>) -> tensor<?x12x?x?xf32>
  %c = tfc.constant dense<8.0> : tensor<f32>
  %d = tfc.div %s, %c : (tensor<?x12x?x?xf32>, tensor<f32>) -> tensor<?x12x?x?xf32>
  %not = tfc.not %keep : tensor<?x1x1x?xi1>
  %fill = tfc.constant dense<-1.0e9> : tensor<f32>
  %m = tfc.where %not, %fill, %d : (tensor<?x1x1x?xi1>, tensor<f32>, tensor<?x12x?x?xf32>) -> tensor<?x12x?x?xf32>
  %p = tfc.softmax %m {axis = 3 : i64} : tensor<?x12x?x?xf32>
  %o = tfc.matmul %p, %v : (tensor<?x12x?x?xf32>, tensor<?x12x?x64xf32>) -> tensor<?x12x?x64xf32>
  return %o : tensor<?x12x?x64xf32>
}

// -----

// The prelude's `sdpa_causal` (GPT-2): the causal mask of q and k becomes
// the causal flag; no keep operand is left.
// CHECK-LABEL: func.func @sdpa_causal
// CHECK-SAME: (%[[Q:.*]]: tensor<?x4x?x16xf32>, %[[K:.*]]: tensor<?x4x?x16xf32>, %[[V:.*]]: tensor<?x4x?x16xf32>)
// CHECK-NEXT: %[[O:.*]] = tfc.fused_attention %[[Q]], %[[K]], %[[V]] {causal = true, scale = 2.500000e-01 : f64} : (tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>) -> tensor<?x4x?x16xf32>
// CHECK-NEXT: return %[[O]]
func.func @sdpa_causal(%q: tensor<?x4x?x16xf32>, %k: tensor<?x4x?x16xf32>, %v: tensor<?x4x?x16xf32>) -> tensor<?x4x?x16xf32> {
  %cm = tfc.causal_mask %q, %k {k_axis = 2 : i64, q_axis = 2 : i64} : (tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>) -> tensor<?x?xi1>
  %kt = tfc.transpose %k {perm = array<i64: 0, 1, 3, 2>} : tensor<?x4x?x16xf32> -> tensor<?x4x16x?xf32>
  %s = tfc.matmul %q, %kt : (tensor<?x4x?x16xf32>, tensor<?x4x16x?xf32>) -> tensor<?x4x?x?xf32>
  %c = tfc.constant dense<4.0> : tensor<f32>
  %d = tfc.div %s, %c : (tensor<?x4x?x?xf32>, tensor<f32>) -> tensor<?x4x?x?xf32>
  %not = tfc.not %cm : tensor<?x?xi1>
  %fill = tfc.constant dense<-1.0e9> : tensor<f32>
  %m = tfc.where %not, %fill, %d : (tensor<?x?xi1>, tensor<f32>, tensor<?x4x?x?xf32>) -> tensor<?x4x?x?xf32>
  %p = tfc.softmax %m {axis = 3 : i64} : tensor<?x4x?x?xf32>
  %o = tfc.matmul %p, %v : (tensor<?x4x?x?xf32>, tensor<?x4x?x16xf32>) -> tensor<?x4x?x16xf32>
  return %o : tensor<?x4x?x16xf32>
}

// -----

// `sdpa_causal_padded`: not (pad and causal) splits into keep = pad and the
// causal flag. After canonicalization the where has the keep polarity and
// K^T is transpose_b; both forms fuse.
// CHECK-LABEL: func.func @causal_and_padding
// CHECK-SAME: (%[[Q:.*]]: tensor<?x4x?x16xf32>, %[[K:.*]]: tensor<?x4x?x16xf32>, %[[V:.*]]: tensor<?x4x?x16xf32>, %[[PAD:.*]]: tensor<?x1x1x?xi1>)
// CHECK-NEXT: %[[O:.*]] = tfc.fused_attention %[[Q]], %[[K]], %[[V]] keep(%[[PAD]]) {causal = true, scale = 2.500000e-01 : f64}
// CHECK-NEXT: return %[[O]]
func.func @causal_and_padding(%q: tensor<?x4x?x16xf32>, %k: tensor<?x4x?x16xf32>, %v: tensor<?x4x?x16xf32>, %pad: tensor<?x1x1x?xi1>) -> tensor<?x4x?x16xf32> {
  %cm = tfc.causal_mask %q, %k {k_axis = 2 : i64, q_axis = 2 : i64} : (tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>) -> tensor<?x?xi1>
  %both = tfc.and %pad, %cm : (tensor<?x1x1x?xi1>, tensor<?x?xi1>) -> tensor<?x1x?x?xi1>
  %s = tfc.matmul %q, %k {transpose_b = true} : (tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>) -> tensor<?x4x?x?xf32>
  %c = tfc.constant dense<4.0> : tensor<f32>
  %d = tfc.div %s, %c : (tensor<?x4x?x?xf32>, tensor<f32>) -> tensor<?x4x?x?xf32>
  %fill = tfc.constant dense<-1.0e9> : tensor<f32>
  %m = tfc.where %both, %d, %fill : (tensor<?x1x?x?xi1>, tensor<?x4x?x?xf32>, tensor<f32>) -> tensor<?x4x?x?xf32>
  %p = tfc.softmax %m {axis = 3 : i64} : tensor<?x4x?x?xf32>
  %o = tfc.matmul %p, %v : (tensor<?x4x?x?xf32>, tensor<?x4x?x16xf32>) -> tensor<?x4x?x16xf32>
  return %o : tensor<?x4x?x16xf32>
}

// -----

// A KV-cache decode step: K and V hold the cached and the new positions;
// the causal mask of (q, k) is still the causal flag (j <= i + Sk - Sq).
// CHECK-LABEL: func.func @decode_step
// CHECK: %[[K:.*]] = tfc.concat
// CHECK: %[[V:.*]] = tfc.concat
// CHECK-NEXT: %[[O:.*]] = tfc.fused_attention %arg0, %[[K]], %[[V]] {causal = true, scale = 2.500000e-01 : f64}
// CHECK-NEXT: return %[[O]]
func.func @decode_step(%q: tensor<?x4x?x16xf32>, %pk: tensor<?x4x?x16xf32>, %nk: tensor<?x4x?x16xf32>, %pv: tensor<?x4x?x16xf32>, %nv: tensor<?x4x?x16xf32>) -> tensor<?x4x?x16xf32> {
  %k = tfc.concat %pk, %nk {axis = 2 : i64} : (tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>) -> tensor<?x4x?x16xf32>
  %v = tfc.concat %pv, %nv {axis = 2 : i64} : (tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>) -> tensor<?x4x?x16xf32>
  %cm = tfc.causal_mask %q, %k {k_axis = 2 : i64, q_axis = 2 : i64} : (tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>) -> tensor<?x?xi1>
  %s = tfc.matmul %q, %k {transpose_b = true} : (tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>) -> tensor<?x4x?x?xf32>
  %c = tfc.constant dense<0.25> : tensor<f32>
  %d = tfc.mul %s, %c : (tensor<?x4x?x?xf32>, tensor<f32>) -> tensor<?x4x?x?xf32>
  %fill = tfc.constant dense<-1.0e9> : tensor<f32>
  %m = tfc.where %cm, %d, %fill : (tensor<?x?xi1>, tensor<?x4x?x?xf32>, tensor<f32>) -> tensor<?x4x?x?xf32>
  %p = tfc.softmax %m {axis = 3 : i64} : tensor<?x4x?x?xf32>
  %o = tfc.matmul %p, %v : (tensor<?x4x?x?xf32>, tensor<?x4x?x16xf32>) -> tensor<?x4x?x16xf32>
  return %o : tensor<?x4x?x16xf32>
}

// -----

// The seed's hand-written MultiHeadAttention after canonicalization (the
// folder composed the head split with K^T; tfc-simplify turned it into
// transpose_b): the caller's mask is a plain keep operand.
// CHECK-LABEL: func.func @seed_mha_scores
// CHECK: %[[Q:.*]] = tfc.transpose %{{.*}} {perm = array<i64: 0, 2, 1, 3>}
// CHECK: %[[K:.*]] = tfc.transpose %{{.*}} {perm = array<i64: 0, 2, 1, 3>}
// CHECK: %[[V:.*]] = tfc.transpose %{{.*}} {perm = array<i64: 0, 2, 1, 3>}
// CHECK-NEXT: %[[O:.*]] = tfc.fused_attention %[[Q]], %[[K]], %[[V]] keep(%arg3) {scale = 0.3535533{{[0-9]+}} : f64}
// CHECK-NOT: tfc.softmax
func.func @seed_mha_scores(%xq: tensor<?x?x32xf32>, %xk: tensor<?x?x32xf32>, %xv: tensor<?x?x32xf32>, %mask: tensor<?x1x?x?xi1>) -> tensor<?x4x?x8xf32> {
  %rq = tfc.reshape %xq {shape = array<i64: -1, -1, 4, 8>} : tensor<?x?x32xf32> -> tensor<?x?x4x8xf32>
  %q = tfc.transpose %rq {perm = array<i64: 0, 2, 1, 3>} : tensor<?x?x4x8xf32> -> tensor<?x4x?x8xf32>
  %rk = tfc.reshape %xk {shape = array<i64: -1, -1, 4, 8>} : tensor<?x?x32xf32> -> tensor<?x?x4x8xf32>
  %k = tfc.transpose %rk {perm = array<i64: 0, 2, 1, 3>} : tensor<?x?x4x8xf32> -> tensor<?x4x?x8xf32>
  %rv = tfc.reshape %xv {shape = array<i64: -1, -1, 4, 8>} : tensor<?x?x32xf32> -> tensor<?x?x4x8xf32>
  %v = tfc.transpose %rv {perm = array<i64: 0, 2, 1, 3>} : tensor<?x?x4x8xf32> -> tensor<?x4x?x8xf32>
  %s = tfc.matmul %q, %k {transpose_b = true} : (tensor<?x4x?x8xf32>, tensor<?x4x?x8xf32>) -> tensor<?x4x?x?xf32>
  %c = tfc.constant dense<2.82842708> : tensor<f32>
  %d = tfc.div %s, %c : (tensor<?x4x?x?xf32>, tensor<f32>) -> tensor<?x4x?x?xf32>
  %fill = tfc.constant dense<-1.0e9> : tensor<f32>
  %m = tfc.where %mask, %d, %fill : (tensor<?x1x?x?xi1>, tensor<?x4x?x?xf32>, tensor<f32>) -> tensor<?x4x?x?xf32>
  %p = tfc.softmax %m {axis = 3 : i64} : tensor<?x4x?x?xf32>
  %o = tfc.matmul %p, %v : (tensor<?x4x?x?xf32>, tensor<?x4x?x8xf32>) -> tensor<?x4x?x8xf32>
  return %o : tensor<?x4x?x8xf32>
}

// -----

// Hugging Face's additive mask (scores * c + m) and a scale pre-applied to
// Q; `bias` holds the additive mask.
// CHECK-LABEL: func.func @additive_mask_prescaled_q
// CHECK-SAME: (%[[Q:.*]]: tensor<2x4x8x16xf32>, %[[K:.*]]: tensor<2x4x8x16xf32>, %[[V:.*]]: tensor<2x4x8x16xf32>, %[[M:.*]]: tensor<2x1x1x8xf32>)
// CHECK-NEXT: %[[O:.*]] = tfc.fused_attention %[[Q]], %[[K]], %[[V]] bias(%[[M]]) {scale = 1.250000e-01 : f64}
// CHECK-NEXT: return %[[O]]
func.func @additive_mask_prescaled_q(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x8x16xf32>, %v: tensor<2x4x8x16xf32>, %m: tensor<2x1x1x8xf32>) -> tensor<2x4x8x16xf32> {
  %half = tfc.constant dense<0.5> : tensor<f32>
  %qs = tfc.mul %q, %half : (tensor<2x4x8x16xf32>, tensor<f32>) -> tensor<2x4x8x16xf32>
  %s = tfc.matmul %qs, %k {transpose_b = true} : (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x8x8xf32>
  %c = tfc.constant dense<0.25> : tensor<f32>
  %d = tfc.mul %c, %s : (tensor<f32>, tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
  %a = tfc.add %d, %m : (tensor<2x4x8x8xf32>, tensor<2x1x1x8xf32>) -> tensor<2x4x8x8xf32>
  %p = tfc.softmax %a {axis = 3 : i64} : tensor<2x4x8x8xf32>
  %o = tfc.matmul %p, %v : (tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32>
  return %o : tensor<2x4x8x16xf32>
}

// -----

// A scale after the masked fill scales the fill value too.
// CHECK-LABEL: func.func @scale_after_fill
// CHECK: tfc.fused_attention %arg0, %arg1, %arg2 keep(%arg3) {fill = -2.500000e+08 : f64, scale = 2.500000e-01 : f64}
func.func @scale_after_fill(%q: tensor<?x4x?x16xf32>, %k: tensor<?x4x?x16xf32>, %v: tensor<?x4x?x16xf32>, %keep: tensor<?x1x1x?xi1>) -> tensor<?x4x?x16xf32> {
  %s = tfc.matmul %q, %k {transpose_b = true} : (tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>) -> tensor<?x4x?x?xf32>
  %fill = tfc.constant dense<-1.0e9> : tensor<f32>
  %m = tfc.where %keep, %s, %fill : (tensor<?x1x1x?xi1>, tensor<?x4x?x?xf32>, tensor<f32>) -> tensor<?x4x?x?xf32>
  %c = tfc.constant dense<4.0> : tensor<f32>
  %d = tfc.div %m, %c : (tensor<?x4x?x?xf32>, tensor<f32>) -> tensor<?x4x?x?xf32>
  %p = tfc.softmax %d {axis = 3 : i64} : tensor<?x4x?x?xf32>
  %o = tfc.matmul %p, %v : (tensor<?x4x?x?xf32>, tensor<?x4x?x16xf32>) -> tensor<?x4x?x16xf32>
  return %o : tensor<?x4x?x16xf32>
}

// -----

// A where with the scores on the false side keeps `not c`.
// CHECK-LABEL: func.func @negated_condition
// CHECK: %[[N:.*]] = tfc.not %arg3
// CHECK-NEXT: tfc.fused_attention %arg0, %arg1, %arg2 keep(%[[N]]) {fill = -1.000000e+04 : f64, scale = 1.000000e+00 : f64}
func.func @negated_condition(%q: tensor<?x4x?x16xf32>, %k: tensor<?x4x?x16xf32>, %v: tensor<?x4x?x16xf32>, %masked: tensor<?x1x1x?xi1>) -> tensor<?x4x?x16xf32> {
  %s = tfc.matmul %q, %k {transpose_b = true} : (tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>) -> tensor<?x4x?x?xf32>
  %fill = tfc.constant dense<-1.0e4> : tensor<f32>
  %m = tfc.where %masked, %fill, %s : (tensor<?x1x1x?xi1>, tensor<f32>, tensor<?x4x?x?xf32>) -> tensor<?x4x?x?xf32>
  %p = tfc.softmax %m {axis = 3 : i64} : tensor<?x4x?x?xf32>
  %o = tfc.matmul %p, %v : (tensor<?x4x?x?xf32>, tensor<?x4x?x16xf32>) -> tensor<?x4x?x16xf32>
  return %o : tensor<?x4x?x16xf32>
}

// -----

// Negative: the scores have a second user (they are also returned).
// CHECK-LABEL: func.func @scores_second_user
// CHECK-NOT: tfc.fused_attention
// CHECK: tfc.softmax
func.func @scores_second_user(%q: tensor<?x4x?x16xf32>, %k: tensor<?x4x?x16xf32>, %v: tensor<?x4x?x16xf32>) -> (tensor<?x4x?x16xf32>, tensor<?x4x?x?xf32>) {
  %s = tfc.matmul %q, %k {transpose_b = true} : (tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>) -> tensor<?x4x?x?xf32>
  %c = tfc.constant dense<4.0> : tensor<f32>
  %d = tfc.div %s, %c : (tensor<?x4x?x?xf32>, tensor<f32>) -> tensor<?x4x?x?xf32>
  %p = tfc.softmax %d {axis = 3 : i64} : tensor<?x4x?x?xf32>
  %o = tfc.matmul %p, %v : (tensor<?x4x?x?xf32>, tensor<?x4x?x16xf32>) -> tensor<?x4x?x16xf32>
  return %o, %d : tensor<?x4x?x16xf32>, tensor<?x4x?x?xf32>
}

// -----

// Negative: the attention probabilities are also returned.
// CHECK-LABEL: func.func @probs_second_user
// CHECK-NOT: tfc.fused_attention
// CHECK: tfc.softmax
func.func @probs_second_user(%q: tensor<?x4x?x16xf32>, %k: tensor<?x4x?x16xf32>, %v: tensor<?x4x?x16xf32>) -> (tensor<?x4x?x16xf32>, tensor<?x4x?x?xf32>) {
  %s = tfc.matmul %q, %k {transpose_b = true} : (tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>) -> tensor<?x4x?x?xf32>
  %p = tfc.softmax %s {axis = 3 : i64} : tensor<?x4x?x?xf32>
  %o = tfc.matmul %p, %v : (tensor<?x4x?x?xf32>, tensor<?x4x?x16xf32>) -> tensor<?x4x?x16xf32>
  return %o, %p : tensor<?x4x?x16xf32>, tensor<?x4x?x?xf32>
}

// -----

// Negative: the scale is a tensor, not a constant; and a softmax over
// another axis than the last.
// CHECK-LABEL: func.func @not_attention
// CHECK-NOT: tfc.fused_attention
// CHECK: return
func.func @not_attention(%q: tensor<?x4x?x16xf32>, %k: tensor<?x4x?x16xf32>, %v: tensor<?x4x?x16xf32>, %t: tensor<?x4x?x?xf32>) -> (tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>) {
  %s = tfc.matmul %q, %k {transpose_b = true} : (tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>) -> tensor<?x4x?x?xf32>
  %d = tfc.mul %s, %t : (tensor<?x4x?x?xf32>, tensor<?x4x?x?xf32>) -> tensor<?x4x?x?xf32>
  %p = tfc.softmax %d {axis = 3 : i64} : tensor<?x4x?x?xf32>
  %o = tfc.matmul %p, %v : (tensor<?x4x?x?xf32>, tensor<?x4x?x16xf32>) -> tensor<?x4x?x16xf32>
  %s2 = tfc.matmul %q, %k {transpose_b = true} : (tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>) -> tensor<?x4x?x?xf32>
  %p2 = tfc.softmax %s2 {axis = 2 : i64} : tensor<?x4x?x?xf32>
  %o2 = tfc.matmul %p2, %v : (tensor<?x4x?x?xf32>, tensor<?x4x?x16xf32>) -> tensor<?x4x?x16xf32>
  return %o, %o2 : tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>
}

// -----

// Negative: an additive mask after the masked fill (the fused op adds the
// bias before masking, which differs at masked positions).
// CHECK-LABEL: func.func @bias_after_fill
// CHECK-NOT: tfc.fused_attention
// CHECK: tfc.softmax
func.func @bias_after_fill(%q: tensor<?x4x?x16xf32>, %k: tensor<?x4x?x16xf32>, %v: tensor<?x4x?x16xf32>, %keep: tensor<?x1x1x?xi1>, %bias: tensor<?x1x1x?xf32>) -> tensor<?x4x?x16xf32> {
  %s = tfc.matmul %q, %k {transpose_b = true} : (tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>) -> tensor<?x4x?x?xf32>
  %fill = tfc.constant dense<-1.0e9> : tensor<f32>
  %m = tfc.where %keep, %s, %fill : (tensor<?x1x1x?xi1>, tensor<?x4x?x?xf32>, tensor<f32>) -> tensor<?x4x?x?xf32>
  %a = tfc.add %m, %bias : (tensor<?x4x?x?xf32>, tensor<?x1x1x?xf32>) -> tensor<?x4x?x?xf32>
  %p = tfc.softmax %a {axis = 3 : i64} : tensor<?x4x?x?xf32>
  %o = tfc.matmul %p, %v : (tensor<?x4x?x?xf32>, tensor<?x4x?x16xf32>) -> tensor<?x4x?x16xf32>
  return %o : tensor<?x4x?x16xf32>
}

// -----

// A causal mask whose lengths cannot be proven to be those of Q and K (it
// is built from other tensors) stays an ordinary keep mask: still correct.
// CHECK-LABEL: func.func @causal_mask_of_other_tensors
// CHECK: %[[CM:.*]] = tfc.causal_mask %arg3, %arg3
// CHECK-NEXT: tfc.fused_attention %arg0, %arg1, %arg2 keep(%[[CM]]) {scale = 1.000000e+00 : f64}
func.func @causal_mask_of_other_tensors(%q: tensor<?x4x?x16xf32>, %k: tensor<?x4x?x16xf32>, %v: tensor<?x4x?x16xf32>, %ids: tensor<?x?xi32>) -> tensor<?x4x?x16xf32> {
  %cm = tfc.causal_mask %ids, %ids {k_axis = 1 : i64, q_axis = 1 : i64} : (tensor<?x?xi32>, tensor<?x?xi32>) -> tensor<?x?xi1>
  %s = tfc.matmul %q, %k {transpose_b = true} : (tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>) -> tensor<?x4x?x?xf32>
  %fill = tfc.constant dense<-1.0e9> : tensor<f32>
  %m = tfc.where %cm, %s, %fill : (tensor<?x?xi1>, tensor<?x4x?x?xf32>, tensor<f32>) -> tensor<?x4x?x?xf32>
  %p = tfc.softmax %m {axis = 3 : i64} : tensor<?x4x?x?xf32>
  %o = tfc.matmul %p, %v : (tensor<?x4x?x?xf32>, tensor<?x4x?x16xf32>) -> tensor<?x4x?x16xf32>
  return %o : tensor<?x4x?x16xf32>
}

// -----

// masked_fill with -inf (PyTorch's float('-inf')) fuses with fill = -inf.
// CHECK-LABEL: func.func @minus_inf_fill
// CHECK: tfc.fused_attention %arg0, %arg1, %arg2 keep(%arg3) {fill = 0xFFF0000000000000 : f64, scale = 1.000000e+00 : f64}
func.func @minus_inf_fill(%q: tensor<?x4x?x16xf32>, %k: tensor<?x4x?x16xf32>, %v: tensor<?x4x?x16xf32>, %keep: tensor<?x1x1x?xi1>) -> tensor<?x4x?x16xf32> {
  %s = tfc.matmul %q, %k {transpose_b = true} : (tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>) -> tensor<?x4x?x?xf32>
  %fill = tfc.constant dense<0xFF800000> : tensor<f32>
  %m = tfc.where %keep, %s, %fill : (tensor<?x1x1x?xi1>, tensor<?x4x?x?xf32>, tensor<f32>) -> tensor<?x4x?x?xf32>
  %p = tfc.softmax %m {axis = 3 : i64} : tensor<?x4x?x?xf32>
  %o = tfc.matmul %p, %v : (tensor<?x4x?x?xf32>, tensor<?x4x?x16xf32>) -> tensor<?x4x?x16xf32>
  return %o : tensor<?x4x?x16xf32>
}
