//===- FusionUtils.h - helpers shared by the tfc passes ---------*- C++ -*-===//
//
// Small queries the pattern matchers of several passes need: scalar constants,
// use counts, weight-only values, the layer a parameter belongs to. How ops
// and locations are named in messages is ir/Describe.h (included here).
//
//===----------------------------------------------------------------------===//

#ifndef TFC_PASSES_FUSIONUTILS_H
#define TFC_PASSES_FUSIONUTILS_H

#include "ir/Describe.h"

#include "mlir/IR/Operation.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>

namespace tfc {

/// Why a fusion did not apply: the op that blocked it, and a sentence.
struct Blocker {
  mlir::Operation *op = nullptr;
  std::string reason;
};

/// Records a blocker if `why` is given; returns failure for convenience.
mlir::LogicalResult block(Blocker *why, mlir::Operation *op,
                          const llvm::Twine &reason);

/// The value of `value` if it is a constant with one element, or a splat,
/// or a small expression of such constants (sqrt, rsqrt, neg, exp, add, sub,
/// mul, div, pow). Empty otherwise, and for NaN; infinities only when
/// `allowInfinite` (a masked fill of -inf).
std::optional<double> getScalarConstant(mlir::Value value,
                                        bool allowInfinite = false);

/// Whether |a - b| <= rel * max(|a|, |b|) (or both are 0).
bool approxEqual(double a, double b, double rel = 1e-5);

/// Whether `perm` swaps the last two axes and keeps the others in place
/// (the transpose that tfc.matmul's `transpose_b` stands for).
bool swapsLastTwoAxes(llvm::ArrayRef<int64_t> perm);

/// Whether `value` has exactly one use, by `user`.
bool hasSingleUser(mlir::Value value, mlir::Operation *user);

/// The first user of `value` that is not `except` (null if none).
mlir::Operation *otherUser(mlir::Value value, mlir::Operation *except);

/// Whether `value` is computed from parameters and constants only (a
/// tfc.param, tfc.constant, or a pure tfc op of such values, e.g. a slice or
/// transpose of a weight). The runtime can hoist such computations.
bool isWeightOnly(mlir::Value value, unsigned depth = 0);

/// Whether the static rank-2 weight `w`, read as [N, K] if `transposeB`,
/// fills at least one panel of tfc.pack_panels (N >= 48; bf16: K even).
bool isPanelCandidate(mlir::Value w, bool transposeB);

/// The tfc.param a weight-only value derives from first (the value's own
/// param, or the param under a slice/transpose/...), or null.
mlir::Operation *rootParam(mlir::Value value);

/// The layer part of a checkpoint tensor name: everything up to and including
/// the first all-digit component ("h.3.attn.c_attn.weight" -> "h.3",
/// "encoder.layer.11.output.dense.bias" -> "encoder.layer.11"); empty when
/// the name has no such component ("wte.weight", "ln_f.bias").
std::string layerOfParamName(llvm::StringRef name);

/// The layer an op belongs to, from the names of the nearest tfc.params
/// among its (transitive) operands: breadth first, the first depth at which
/// any param is found decides. Empty for ops outside the layers (the
/// embeddings, a final norm, the LM head).
std::string layerOf(mlir::Operation *op);

/// Moves the weight-only computation of `value` (params, constants and pure
/// ops of them) before `point` when it does not already dominate it (same
/// block only). Returns false, changing nothing, if that is not possible.
bool canHoistBefore(mlir::Value value, mlir::Operation *point);
void hoistBefore(mlir::Value value, mlir::Operation *point,
                 mlir::RewriterBase &rewriter);

/// Whether `value` is available at `point`: a block argument of an
/// enclosing block or defined by an op that properly dominates `point`
/// (same-block check by program order; values from enclosing regions
/// count as available).
bool isAvailableAt(mlir::Value value, mlir::Operation *point);

} // namespace tfc

#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/DenseSet.h"

namespace tfc {

/// Erases `op` if it is trivially dead, then the producers of its operands
/// that became dead, transitively.
void eraseIfDead(mlir::Operation *op, mlir::RewriterBase &rewriter);
/// The same for several ops at once (which may feed each other).
void eraseIfDead(llvm::ArrayRef<mlir::Operation *> ops,
                 mlir::RewriterBase &rewriter);

/// Remembers the ops a rewriter erased, so that a driver can skip them.
struct ErasedOps : mlir::RewriterBase::Listener {
  llvm::DenseSet<mlir::Operation *> erased;
  void notifyOperationErased(mlir::Operation *op) override {
    erased.insert(op);
  }
};

/// The fusion passes' driver: calls `rewrite(op, rewriter)` once for every
/// op of type OpTy nested in `root`, in program order, skipping ops that an
/// earlier rewrite erased. Unlike the greedy driver it neither folds nor
/// moves constants, so a pass changes nothing but what it fuses. Returns the
/// number of successful rewrites.
template <typename OpTy, typename Fn>
unsigned rewriteEach(mlir::Operation *root, Fn &&rewrite) {
  llvm::SmallVector<OpTy> ops;
  root->walk([&](OpTy op) { ops.push_back(op); });
  ErasedOps listener;
  mlir::IRRewriter rewriter(root->getContext(), &listener);
  unsigned count = 0;
  for (OpTy op : ops) {
    if (listener.erased.contains(op.getOperation()))
      continue;
    if (mlir::succeeded(rewrite(op, rewriter)))
      ++count;
  }
  return count;
}

} // namespace tfc

#endif // TFC_PASSES_FUSIONUTILS_H
