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
//     its weight (GPT-2's tied LM head: `wte` is also gathered by the
//     embedding), the stored tensor has to stay: a packed copy would be kept
//     next to it (154 MB for GPT-2 small). The product is left as it is.
//  3. Otherwise the product reads `tfc.pack_panels(w)` (with the product's
//     `transpose_b`), one per weight value and orientation, inserted right
//     after the value's definition and shared by its products. A weight with
//     fewer than 48 columns (one panel) is read as [K, N] instead: a
//     transpose_b product reads `tfc.transpose(w)`, as a panel would be
//     mostly padding.
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
std::optional<ProductWeight> weightOf(Operation *op) {
  std::optional<ProductWeight> pw = productWeight(op);
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
  std::optional<ProductWeight> pw = weightOf(op);
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

/// Per checkpoint tensor name: whether every reader, through weight-only
/// ops, is a product reading it as its candidate weight.
class ReaderIndex {
public:
  explicit ReaderIndex(ModuleOp module) {
    module.walk([&](tir::ParamOp param) {
      bool &ok = onlyProducts.try_emplace(param.getName(), true).first->second;
      ok = ok && readersAreProducts(param.getResult());
    });
  }

  /// Whether all of `w`'s parameters are read only by products.
  bool layoutIsFree(Value w) const {
    llvm::StringSet<> names;
    collectParamNames(w, names);
    for (const auto &name : names) {
      auto it = onlyProducts.find(name.getKey());
      if (it == onlyProducts.end() || !it->second)
        return false;
    }
    return true;
  }

private:
  static bool readersAreProducts(Value root) {
    llvm::SmallVector<Value> work = {root};
    llvm::SmallPtrSet<Operation *, 8> seen;
    while (!work.empty()) {
      Value value = work.pop_back_val();
      for (OpOperand &use : value.getUses()) {
        Operation *user = use.getOwner();
        if (!seen.insert(user).second)
          continue;
        if (isRewritten(user, use))
          continue;
        if (user->getNumResults() == 1 && isWeightOnly(user->getResult(0))) {
          work.push_back(user->getResult(0));
          continue;
        }
        return false;
      }
    }
    return true;
  }

  llvm::StringMap<bool> onlyProducts;
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
      std::optional<ProductWeight> pw = weightOf(op);
      if (pw && isRewritten(op, *pw->operand) &&
          readers.layoutIsFree(pw->operand->get()))
        products.push_back(op);
    });
    llvm::DenseMap<std::pair<Value, unsigned>, Value> laidOut;
    for (Operation *op : products) {
      ProductWeight pw = *weightOf(op);
      Value w = pw.operand->get();
      Value &t = laidOut[{w, pw.transposeB ? 1u : 0u}];
      if (!t) {
        OpBuilder builder(op->getContext());
        builder.setInsertionPointAfterValue(w);
        t = newLayout(builder, w, pw.transposeB);
      }
      setProductWeight(op, t);
    }
  }
};

} // namespace
} // namespace tfc
