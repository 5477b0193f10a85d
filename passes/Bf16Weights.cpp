//===- Bf16Weights.cpp - Product weights -> bf16 --------------------------===//
//
// Pass `bf16-weights` (`--dtype bf16`, docs/runtime.md#bf16): makes every
// tfc.matmul / tfc.linear whose weight is a static rank-2 f32 value computed
// from parameters and constants alone (isWeightOnly) read
// `tfc.cast(w) : bf16` instead. The cast is a weight-only step: the executor
// computes it once, when it is created (the weight prologue), and frees the
// f32 values only the prologue read. The matmul kernel then reads half the
// bytes and multiplies on AVX512_BF16 (`vdpbf16ps`, f32 accumulation;
// codegen/MatmulKernel.cpp). Everything else (activations, norms, biases,
// embeddings) stays f32.
//
// The kernel reads bf16 weights as [K, N]: a product that still has
// transpose_b after `weight-layout` (GPT-2's tied LM head, whose [N, K]
// f32 parameter the embedding gathers) reads `cast(transpose(w))` instead;
// the bf16 copy is new memory either way, and the f32 transpose is a
// prologue temporary. A weight whose contraction length K is odd is left
// f32: the kernel multiplies pairs of K. One cast per weight value, shared
// by its products. Runs after `weight-layout`.
//
//===----------------------------------------------------------------------===//

#include "passes/FusionUtils.h"
#include "passes/Passes.h"

#include "ir/TfcOps.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"

using namespace mlir;
namespace tir = mlir::tfc;

namespace tfc {
#define GEN_PASS_DEF_BF16WEIGHTS
#include "passes/Passes.h.inc"
} // namespace tfc

namespace tfc {

namespace {

/// The weight operand of a product and whether it is read as [N, K].
struct ProductWeight {
  OpOperand *operand = nullptr;
  bool transposeB = false;
};

std::optional<ProductWeight> productWeight(Operation *op) {
  if (auto matmul = dyn_cast<tir::MatmulOp>(op))
    return ProductWeight{&matmul.getRhsMutable(), matmul.getTransposeB()};
  if (auto linear = dyn_cast<tir::LinearOp>(op))
    return ProductWeight{&linear.getWMutable(), linear.getTransposeB()};
  return std::nullopt;
}

/// Weights with fewer columns stay f32: the bf16 kernel's column tile
/// (kTileN in codegen/MatmulKernel.cpp), which it needs whole.
constexpr int64_t kMinColumns = 48;

/// Whether the weight `w` of a product becomes bf16.
bool isCandidate(Value w, bool transposeB) {
  auto type = dyn_cast<RankedTensorType>(w.getType());
  if (!type || type.getRank() != 2 || !type.hasStaticShape() ||
      !type.getElementType().isF32())
    return false;
  int64_t k = type.getDimSize(transposeB ? 1 : 0);
  int64_t n = type.getDimSize(transposeB ? 0 : 1);
  return k % 2 == 0 && n >= kMinColumns && isWeightOnly(w);
}

struct Bf16WeightsPass : impl::Bf16WeightsBase<Bf16WeightsPass> {
  void runOnOperation() override {
    llvm::SmallVector<std::pair<OpOperand *, Value>> uses;
    getOperation()->walk([&](Operation *op) {
      std::optional<ProductWeight> pw = productWeight(op);
      if (pw && isCandidate(pw->operand->get(), pw->transposeB))
        uses.push_back({pw->operand, pw->operand->get()});
    });
    // Per weight value and orientation: its [K, N] bf16 copy.
    llvm::DenseMap<std::pair<Value, unsigned>, Value> converted;
    for (auto [operand, w] : uses) {
      Operation *product = operand->getOwner();
      bool transposeB = productWeight(product)->transposeB;
      Value &bf16 = converted[{w, transposeB ? 1u : 0u}];
      if (!bf16) {
        OpBuilder builder(w.getContext());
        builder.setInsertionPointAfterValue(w);
        Value kn = w;
        if (transposeB)
          kn = builder.create<tir::TransposeOp>(w.getLoc(), w,
                                                llvm::ArrayRef<int64_t>{1, 0});
        bf16 = builder.create<tir::CastOp>(w.getLoc(), kn,
                                           builder.getBF16Type());
      }
      operand->set(bf16);
      if (auto matmul = dyn_cast<tir::MatmulOp>(product))
        matmul.setTransposeB(false);
      else if (auto linear = dyn_cast<tir::LinearOp>(product))
        linear.setTransposeB(false);
    }
  }
};

} // namespace
} // namespace tfc
