//===- WeightLayout.cpp - Product weights -> column panels ----------------===//
//
// Pass `weight-layout`: chooses the layout in which the matmul kernels read
// their weights. A tfc.matmul or tfc.linear reads a rank-2 weight as [K, N],
// or as [N, K] with `transpose_b` (nn.Linear's [out, in]). This pass makes
// it read the weight laid out once in the CPU kernels' column panels
// instead, `tfc.pack_panels(w)` ([ceil(N / 48), K, 48]: each panel of 48
// columns is K rows of 48 contiguous elements), with `packed_n = N`, when
// that costs no memory. The packing is weight-only: the executor computes it
// once, when it is created (runtime/Executor.cpp, "weight prologue"), and
// drops the original that only the prologue read. The kernels then read
// each panel as one stream, and no kernel copies a panel per call
// (codegen/MatmulKernel.cpp).
//
// The algorithm, for every product whose weight `w` is static, rank 2, and
// computed from tfc.param and tfc.constant alone (isWeightOnly: a param, a
// merged-QKV concatenation of params, a slice ...):
//
//  1. The parameters `w` reads are found (by name: every entry function has
//     its own tfc.param ops for one checkpoint tensor).
//  2. Every reader of those parameters in the module is followed through
//     weight-only ops. If one of them is not a product reading the value as
//     its weight, the stored tensor has to stay: a packed copy would be kept
//     next to it. The product is left as it is. One exception: a tied
//     embedding (GPT-2's `wte`, gathered by the embedding and read [N, K]
//     by the LM head): a tfc.gather of the parameter itself may read the
//     same panels (`packed_rows`), when every product reads the parameter
//     itself with transpose_b in panels. Left [N, K], the head ran the
//     swapped tile at ~90 % of the panel tile's speed (docs/benchmarks.md).
//  3. Otherwise the product reads `tfc.pack_panels(w)` (with the product's
//     `transpose_b`), one per weight value and orientation, inserted right
//     after the value's definition and shared by its products. A weight with
//     fewer than 48 columns (one panel) is read as [K, N] instead: a
//     transpose_b product reads `tfc.transpose(w)`, as a panel would be
//     mostly padding. Every gather of a tied embedding whose products were
//     laid out reads the [N, K] panels, in every entry (one copy).
//
// The pass runs last in the default pipeline: tfc-simplify turns
// `matmul(x, transpose(w))` back into transpose_b.
//
//===----------------------------------------------------------------------===//

#include "passes/FusionUtils.h"
#include "passes/Passes.h"

#include "ir/TfcOps.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;
namespace tir = mlir::tfc;

namespace tfc {
#define GEN_PASS_DEF_WEIGHTLAYOUT
#include "passes/Passes.h.inc"
} // namespace tfc

namespace tfc {

namespace {

/// The weight operand of an unpacked product, or none if `op` is not one.
std::optional<tir::ProductWeight> weightOf(Operation *op) {
  std::optional<tir::ProductWeight> pw = tir::productWeight(op);
  if (!pw || pw->packed)
    return std::nullopt;
  return pw;
}

/// Whether `w` is a weight this pass may lay out anew.
bool isCandidate(Value w) {
  auto type = dyn_cast<RankedTensorType>(w.getType());
  return type && type.getRank() == 2 && type.hasStaticShape() &&
         isWeightOnly(w);
}

/// Whether the pass gives the product `op` reading `use` a new layout: its
/// weight is a candidate, read as [N, K] or wide enough for a panel.
bool isRewritten(Operation *op, OpOperand &use) {
  std::optional<tir::ProductWeight> pw = weightOf(op);
  if (!pw || pw->operand != &use || !isCandidate(use.get()))
    return false;
  return pw->transposeB || isPanelCandidate(use.get(), false);
}

/// The names of the tfc.params the weight-only value `w` is computed from.
void collectParamNames(Value w, llvm::StringSet<> &names) {
  Operation *def = w.getDefiningOp();
  if (!def)
    return;
  if (auto param = dyn_cast<tir::ParamOp>(def)) {
    names.insert(param.getName());
    return;
  }
  for (Value operand : def->getOperands())
    collectParamNames(operand, names);
}

/// Whether `use` is a tfc.gather reading a tied embedding table: the f32
/// [V, D] parameter itself, as its table.
bool isTiedGather(OpOperand &use) {
  auto gather = dyn_cast<tir::GatherOp>(use.getOwner());
  if (!gather || use.getOperandNumber() != 0 || gather.getPackedRows())
    return false;
  auto type = dyn_cast<RankedTensorType>(use.get().getType());
  return type && type.getElementType().isF32() &&
         use.get().getDefiningOp<tir::ParamOp>() &&
         isPanelCandidate(use.get(), /*transposeB=*/true);
}

/// Per checkpoint tensor name: whether every reader, through weight-only
/// ops, is a product reading it as its candidate weight (or a tied gather).
class ReaderIndex {
public:
  explicit ReaderIndex(ModuleOp module) {
    module.walk([&](tir::ParamOp param) {
      Readers &r = readers.try_emplace(param.getName()).first->second;
      r.onlyProducts = r.onlyProducts && readersAreProducts(param.getResult(), r);
    });
  }

  /// Whether all of `w`'s parameters are read only by products, and, for
  /// a gathered one, only by products reading it [N, K] in panels.
  bool layoutIsFree(Value w) const {
    llvm::StringSet<> names;
    collectParamNames(w, names);
    for (const auto &name : names) {
      auto it = readers.find(name.getKey());
      if (it == readers.end() || !it->second.onlyProducts ||
          (it->second.gathered && !it->second.onlyTiedProducts))
        return false;
    }
    return true;
  }

private:
  struct Readers {
    bool onlyProducts = true;
    bool gathered = false;
    /// Every product reads the parameter itself [N, K], in panels.
    bool onlyTiedProducts = true;
  };

  static bool readersAreProducts(Value root, Readers &r) {
    llvm::SmallVector<Value> work = {root};
    llvm::SmallPtrSet<Operation *, 8> seen;
    while (!work.empty()) {
      Value value = work.pop_back_val();
      for (OpOperand &use : value.getUses()) {
        Operation *user = use.getOwner();
        if (!seen.insert(user).second)
          continue;
        if (isRewritten(user, use)) {
          r.onlyTiedProducts = r.onlyTiedProducts && value == root &&
                               weightOf(user)->transposeB &&
                               isPanelCandidate(value, /*transposeB=*/true);
          continue;
        }
        if (isTiedGather(use)) {
          r.gathered = true;
          continue;
        }
        if (user->getNumResults() == 1 && isWeightOnly(user->getResult(0))) {
          work.push_back(user->getResult(0));
          continue;
        }
        return false;
      }
    }
    return true;
  }

  llvm::StringMap<Readers> readers;
};

/// The value a product reads for `w` in orientation `transposeB`: its
/// panels, or (fewer columns than a panel) its [K, N] transpose.
Value newLayout(OpBuilder &builder, Value w, bool transposeB) {
  if (!isPanelCandidate(w, transposeB))
    return builder.create<tir::TransposeOp>(w.getLoc(), w,
                                            llvm::ArrayRef<int64_t>{1, 0});
  return builder.create<tir::PackPanelsOp>(w.getLoc(), w, transposeB);
}

struct WeightLayoutPass : impl::WeightLayoutBase<WeightLayoutPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    ReaderIndex readers(module);
    llvm::SmallVector<Operation *> products;
    module.walk([&](Operation *op) {
      std::optional<tir::ProductWeight> pw = weightOf(op);
      if (pw && isRewritten(op, *pw->operand) &&
          readers.layoutIsFree(pw->operand->get()))
        products.push_back(op);
    });
    llvm::DenseMap<std::pair<Value, unsigned>, Value> laidOut;
    auto layout = [&](Value w, bool transposeB) {
      Value &t = laidOut[{w, transposeB ? 1u : 0u}];
      if (!t) {
        OpBuilder builder(w.getContext());
        builder.setInsertionPointAfterValue(w);
        t = newLayout(builder, w, transposeB);
      }
      return t;
    };
    llvm::StringSet<> panelNames; // parameters read [N, K] in panels
    for (Operation *op : products) {
      tir::ProductWeight pw = *weightOf(op);
      Value w = pw.operand->get();
      Value t = layout(w, pw.transposeB);
      tir::setProductWeight(op, t);
      if (auto param = w.getDefiningOp<tir::ParamOp>();
          param && t.getDefiningOp<tir::PackPanelsOp>() && pw.transposeB)
        panelNames.insert(param.getName());
    }
    // Tied embeddings: every gather of them reads the same panels.
    module.walk([&](tir::GatherOp gather) {
      OpOperand &table = gather->getOpOperand(0);
      auto param = table.get().getDefiningOp<tir::ParamOp>();
      if (!param || !isTiedGather(table) ||
          !panelNames.contains(param.getName()))
        return;
      int64_t rows = cast<RankedTensorType>(table.get().getType()).getDimSize(0);
      table.set(layout(table.get(), /*transposeB=*/true));
      gather.setPackedRowsAttr(
          IntegerAttr::get(IntegerType::get(gather.getContext(), 64), rows));
    });
  }
};

} // namespace
} // namespace tfc
