//===- Bf16Weights.cpp - Product weights -> bf16 --------------------------===//
//
// Pass `bf16-weights` (`--dtype bf16`, docs/runtime.md#bf16): makes every
// tfc.matmul / tfc.linear whose weight is a static rank-2 f32 value computed
// from parameters and constants alone (isWeightOnly), or the column panels
// of one (`weight-layout`'s tfc.pack_panels), read
// `tfc.pack_panels(tfc.cast(w) : bf16)` instead: the bf16 panels
// ([ceil(N / 48), K / 2, 48, 2], pairs of K side by side), with
// `packed_n = N`. The cast and the packing are weight-only steps: the
// executor computes them once, when it is created (the weight prologue),
// and frees the f32 values only the prologue read. The matmul kernel then
// reads half the bytes and multiplies on AVX512_BF16 (`vdpbf16ps`, f32
// accumulation; codegen/MatmulKernel.cpp). Everything else (activations,
// norms, biases, embeddings) stays f32.
//
// A product that still reads [N, K] with transpose_b after `weight-layout`
// (a weight also read some other way) reads
// `pack_panels(cast(w)) {transpose_b}`: the bf16 panels are new memory
// either way. A weight whose contraction length K is odd, or with fewer
// than 48 columns (one panel), is left f32. One bf16 weight per weight value
// and orientation, shared by its products; an f32 tfc.pack_panels left
// without readers is erased, and one that only the gathers of a tied
// embedding still read (`packed_rows`) too: they read the f32 table as
// stored again. Runs after `weight-layout`.
//
//===----------------------------------------------------------------------===//

#include "passes/FusionUtils.h"
#include "passes/Passes.h"

#include "ir/TfcOps.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;
namespace tir = mlir::tfc;

namespace tfc {
#define GEN_PASS_DEF_BF16WEIGHTS
#include "passes/Passes.h.inc"
} // namespace tfc

namespace tfc {

namespace {

/// The f32 weight a product reads and its orientation ([N, K] if
/// `transposeB`): its weight operand, or the input of its f32 panels.
struct SourceWeight {
  Value w;
  bool transposeB = false;
};

/// The f32 weight of the product `pw` that becomes bf16, if it does.
std::optional<SourceWeight> sourceWeight(const tir::ProductWeight &pw) {
  SourceWeight src{pw.operand->get(), pw.transposeB};
  if (pw.packed) {
    auto pack = src.w.getDefiningOp<tir::PackPanelsOp>();
    if (!pack)
      return std::nullopt;
    src = {pack.getInput(), pack.getTransposeB()};
  }
  auto type = dyn_cast<RankedTensorType>(src.w.getType());
  if (!type || !type.getElementType().isF32() || !isWeightOnly(src.w))
    return std::nullopt;
  // The bf16 panels need an even K (isPanelCandidate checks only bf16).
  int64_t k = type.getRank() == 2 ? type.getDimSize(src.transposeB ? 1 : 0)
                                  : 1;
  if (k % 2 != 0 || !isPanelCandidate(src.w, src.transposeB))
    return std::nullopt;
  return src;
}

struct Bf16WeightsPass : impl::Bf16WeightsBase<Bf16WeightsPass> {
  void runOnOperation() override {
    llvm::SmallVector<std::pair<Operation *, SourceWeight>> products;
    getOperation()->walk([&](Operation *op) {
      if (std::optional<tir::ProductWeight> pw = tir::productWeight(op))
        if (std::optional<SourceWeight> src = sourceWeight(*pw))
          products.push_back({op, *src});
    });
    // Per f32 weight value and orientation: its bf16 panels.
    llvm::DenseMap<std::pair<Value, unsigned>, Value> converted;
    llvm::SetVector<Operation *> oldPanels;
    for (auto [product, src] : products) {
      Value &bf16 = converted[{src.w, src.transposeB ? 1u : 0u}];
      if (!bf16) {
        OpBuilder builder(src.w.getContext());
        builder.setInsertionPointAfterValue(src.w);
        Value cast = builder.create<tir::CastOp>(src.w.getLoc(), src.w,
                                                 builder.getBF16Type());
        bf16 = builder.create<tir::PackPanelsOp>(src.w.getLoc(), cast,
                                                 src.transposeB);
      }
      Value old = tir::productWeight(product)->operand->get();
      if (Operation *def = old.getDefiningOp<tir::PackPanelsOp>())
        oldPanels.insert(def);
      tir::setProductWeight(product, bf16);
    }
    for (Operation *pack : oldPanels) {
      unreadPanelGathers(cast<tir::PackPanelsOp>(pack));
      if (pack->use_empty())
        pack->erase();
    }
  }

  /// A tied embedding's f32 panels that only gathers still read (the LM
  /// head now reads bf16 panels): the gathers read the table as stored
  /// again, a row in one line, and the panels are dropped.
  static void unreadPanelGathers(tir::PackPanelsOp pack) {
    llvm::SmallVector<tir::GatherOp> gathers;
    for (Operation *user : pack->getUsers()) {
      auto gather = dyn_cast<tir::GatherOp>(user);
      if (!gather || !gather.getPackedRows())
        return;
      gathers.push_back(gather);
    }
    for (tir::GatherOp gather : gathers) {
      gather->setOperand(0, pack.getInput());
      gather.removePackedRowsAttr();
    }
  }
};

} // namespace
} // namespace tfc
