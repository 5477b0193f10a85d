//===- Matchers.h - the fusion matchers, shared with the report -*- C++ -*-===//
//
// Each fusion pass has one matcher that either returns what it found or says
// which op blocked the fusion. The passes call them to rewrite; the fusion
// report (FusionReport.cpp) calls them on the final IR to explain every
// softmax, layer_norm and matmul that did not fuse.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_PASSES_MATCHERS_H
#define TFC_PASSES_MATCHERS_H

#include "passes/FusionUtils.h"

#include "ir/TfcOps.h"

#include "llvm/ADT/SmallVector.h"

namespace tfc {

//===----------------------------------------------------------------------===//
// fuse-attention (FuseAttention.cpp)
//===----------------------------------------------------------------------===//

/// One condition of the mask: `value`, or `not value` when `negated`.
struct MaskLeaf {
  mlir::Value value;
  bool negated = false;
};

struct AttentionMatch {
  mlir::tfc::SoftmaxOp softmax;
  mlir::tfc::MatmulOp scores; // q k^T
  mlir::tfc::MatmulOp output; // p v
  mlir::Value q, k, v;
  double scale = 1.0;
  bool causal = false;
  double fill = -1.0e9;
  mlir::Value bias;                     // additive mask, or null
  llvm::SmallVector<MaskLeaf> keep;     // ANDed; empty: all true
};

/// Matches the attention whose probabilities are `softmax`.
mlir::FailureOr<AttentionMatch> matchAttention(mlir::tfc::SoftmaxOp softmax,
                                               Blocker *why = nullptr);

//===----------------------------------------------------------------------===//
// fuse-add-layernorm (FuseAddLayerNorm.cpp)
//===----------------------------------------------------------------------===//

struct AddLayerNormMatch {
  mlir::tfc::LayerNormOp norm;
  mlir::tfc::AddOp add;
  /// Where the fused op goes: the add where the sum has other users and
  /// gamma and beta can move up to it, else the layer_norm.
  mlir::Operation *insertionPoint = nullptr;
  /// Whether the sum has users besides the layer_norm (pre-LN): the fused op
  /// is then `with_sum`, and they read its `sum`.
  bool withSum = false;
};

mlir::FailureOr<AddLayerNormMatch>
matchAddLayerNorm(mlir::tfc::LayerNormOp norm, Blocker *why = nullptr);

//===----------------------------------------------------------------------===//
// fuse-bias-activation (FuseBiasActivation.cpp)
//===----------------------------------------------------------------------===//

struct LinearMatch {
  mlir::tfc::MatmulOp matmul;
  mlir::Operation *biasAdd = nullptr; // tfc.add, or null
  mlir::Value bias;
  mlir::Operation *activationOp = nullptr; // relu/gelu/silu, or null
  std::string activation = "none";
  /// The last op of the group: its result is replaced.
  mlir::Operation *last() {
    return activationOp ? activationOp
                        : biasAdd ? biasAdd : matmul.getOperation();
  }
};

mlir::FailureOr<LinearMatch> matchLinear(mlir::tfc::MatmulOp matmul,
                                         Blocker *why = nullptr);

} // namespace tfc

#endif // TFC_PASSES_MATCHERS_H
