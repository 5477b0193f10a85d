//===- WeightLayout.cpp - [N, K] product weights -> [K, N] ----------------===//
//
// Pass `weight-layout`: chooses the layout in which the matmul kernels read
// their weights. A tfc.matmul or tfc.linear with `transpose_b` reads its
// rank-2 weight as [N, K] (nn.Linear's [out, in]); this pass makes it read
// `tfc.transpose(w)` ([K, N]) with transpose_b = false instead, when that
// costs no memory. The transpose is weight-only: the executor computes it
// once, when it is created (runtime/Executor.cpp, "weight prologue"), and
// drops the [N, K] original that only the prologue reads. The matmul kernel
// then packs its weight panels from contiguous rows instead of transposing
// [N, K] rows on every call (codegen/MatmulKernel.cpp; BERT's FFN output
// projection, K = 3072, went from ~115 to ~195 GFLOP/s at M = 128).
//
// The algorithm, for every such product whose weight `w` is static and
// computed from tfc.param and tfc.constant alone (isWeightOnly: a param, a
// merged-QKV concatenation of params, a slice ...):
//
//  1. The parameters `w` reads are found (by name: every entry function has
//     its own tfc.param ops for one checkpoint tensor).
//  2. Every reader of those parameters in the module is followed through
//     weight-only ops. If one of them is not a transpose_b product reading
//     the value as its weight (GPT-2's tied LM head: `wte` is also gathered
//     by the embedding), the [N, K] tensor has to stay: a transposed copy
//     would be kept next to it (154 MB for GPT-2 small). The product is
//     left as it is and the kernel reads [N, K] (transpose_b).
//  3. Otherwise the product reads `tfc.transpose(w) {perm = [1, 0]}`, one
//     transpose per weight value (inserted right after its definition,
//     shared by every product of that value).
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

/// The weight operand of a transpose_b product, or null if `op` is not one.
Value transposedWeight(Operation *op) {
  if (auto matmul = dyn_cast<tir::MatmulOp>(op))
    return matmul.getTransposeB() ? matmul.getRhs() : Value();
  if (auto linear = dyn_cast<tir::LinearOp>(op))
    return linear.getTransposeB() ? linear.getW() : Value();
  return Value();
}

/// Whether `w` is a weight this pass may lay out as [K, N].
bool isCandidate(Value w) {
  auto type = dyn_cast<RankedTensorType>(w.getType());
  return type && type.getRank() == 2 && type.hasStaticShape() &&
         isWeightOnly(w);
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
/// ops, is a transpose_b product reading it as its candidate weight.
class ReaderIndex {
public:
  explicit ReaderIndex(ModuleOp module) {
    module.walk([&](tir::ParamOp param) {
      bool &ok = onlyTransposedProducts.try_emplace(param.getName(), true)
                     .first->second;
      ok = ok && readersAreTransposedProducts(param.getResult());
    });
  }

  /// Whether all of `w`'s parameters are read only by transpose_b products.
  bool layoutIsFree(Value w) const {
    llvm::StringSet<> names;
    collectParamNames(w, names);
    for (const auto &name : names) {
      auto it = onlyTransposedProducts.find(name.getKey());
      if (it == onlyTransposedProducts.end() || !it->second)
        return false;
    }
    return true;
  }

private:
  static bool readersAreTransposedProducts(Value root) {
    llvm::SmallVector<Value> work = {root};
    llvm::SmallPtrSet<Operation *, 8> seen;
    while (!work.empty()) {
      Value value = work.pop_back_val();
      for (OpOperand &use : value.getUses()) {
        Operation *user = use.getOwner();
        if (!seen.insert(user).second)
          continue;
        if (transposedWeight(user) == value && isCandidate(value))
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

  llvm::StringMap<bool> onlyTransposedProducts;
};

/// Makes the product `op` read `t` ([K, N]) without transpose_b.
void readKN(Operation *op, Value t) {
  if (auto matmul = dyn_cast<tir::MatmulOp>(op)) {
    matmul.getRhsMutable().assign(t);
    matmul.setTransposeB(false);
  } else if (auto linear = dyn_cast<tir::LinearOp>(op)) {
    linear.getWMutable().assign(t);
    linear.setTransposeB(false);
  }
}

struct WeightLayoutPass : impl::WeightLayoutBase<WeightLayoutPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    ReaderIndex readers(module);
    llvm::SmallVector<Operation *> products;
    module.walk([&](Operation *op) {
      Value w = transposedWeight(op);
      if (w && isCandidate(w) && readers.layoutIsFree(w))
        products.push_back(op);
    });
    llvm::DenseMap<Value, Value> transposed;
    for (Operation *op : products) {
      Value w = transposedWeight(op);
      Value &t = transposed[w];
      if (!t) {
        OpBuilder builder(op->getContext());
        builder.setInsertionPointAfterValue(w);
        t = builder.create<tir::TransposeOp>(w.getLoc(), w,
                                             llvm::ArrayRef<int64_t>{1, 0});
      }
      readKN(op, t);
    }
  }
};

} // namespace
} // namespace tfc
