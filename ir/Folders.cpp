//===- Folders.cpp - folding of tfc ops -----------------------------------===//
//
// Folds that canonicalization gets for free: constants, no-op casts,
// transposes, reshapes and slices, and chains of transposes or reshapes (the
// head split/merge code of attention produces such chains; collapsing them
// helps the attention fusion match).
//
//===----------------------------------------------------------------------===//

#include "ir/TfcOps.h"

using namespace mlir;
using namespace mlir::tfc;

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValueAttr(); }

OpFoldResult CastOp::fold(FoldAdaptor) {
  if (getInput().getType() == getType())
    return getInput();
  return {};
}

OpFoldResult TransposeOp::fold(FoldAdaptor) {
  // transpose(transpose(x, inner), outer) == transpose(x, inner o outer):
  // result dim i is inner-result dim outer[i], which is x dim inner[outer[i]].
  bool changed = false;
  if (auto producer = getInput().getDefiningOp<TransposeOp>()) {
    ArrayRef<int64_t> inner = producer.getPerm();
    SmallVector<int64_t> composed;
    for (int64_t p : getPerm())
      composed.push_back(inner[p]);
    setPerm(composed);
    getInputMutable().assign(producer.getInput());
    changed = true;
  }
  for (auto [i, p] : llvm::enumerate(getPerm()))
    if (static_cast<int64_t>(i) != p)
      return changed ? OpFoldResult(getResult()) : OpFoldResult();
  return getInput();
}

OpFoldResult ReshapeOp::fold(FoldAdaptor) {
  // reshape(reshape(x)) == reshape(x): both keep the dynamic dims in order
  // and the static element count, so the outer shape is valid for x.
  if (auto producer = getInput().getDefiningOp<ReshapeOp>()) {
    getInputMutable().assign(producer.getInput());
    if (getInput().getType() != getType())
      return getResult();
  }
  // Equal types mean equal shapes, and since dynamic dims keep their order,
  // a reshape to the same shape moves no element.
  if (getInput().getType() == getType())
    return getInput();
  return {};
}

OpFoldResult SliceOp::fold(FoldAdaptor) {
  // A slice that keeps every element of a static axis moves none.
  auto input = dyn_cast<RankedTensorType>(getInput().getType());
  if (!input || getAxis() >= static_cast<uint64_t>(input.getRank()) ||
      getInput().getType() != getType())
    return {};
  int64_t dim = input.getDimSize(getAxis());
  if (getStart() == 0 && getStep() == 1 && !ShapedType::isDynamic(dim) &&
      static_cast<int64_t>(getEnd()) == dim)
    return getInput();
  return {};
}
