//===- FlopCount.cpp - Floating-point operation count of a module ---------===//

#include "passes/FlopCount.h"

#include "mlir/IR/BuiltinTypes.h"

#include "llvm/ADT/StringMap.h"

using namespace tfc;

/// FLOPs per output element of the non-matmul ops. Transcendentals count as
/// one, as in most published FLOP counts; the point is a consistent
/// denominator for GFLOP/s, which matmuls dominate.
static double flopsPerElement(llvm::StringRef name) {
  static const llvm::StringMap<double> table = {
      {"tfc.add", 1},         {"tfc.sub", 1},        {"tfc.mul", 1},
      {"tfc.div", 1},         {"tfc.pow", 1},        {"tfc.maximum", 1},
      {"tfc.minimum", 1},     {"tfc.neg", 1},        {"tfc.exp", 1},
      {"tfc.log", 1},         {"tfc.sqrt", 1},       {"tfc.rsqrt", 1},
      {"tfc.tanh", 1},        {"tfc.erf", 1},        {"tfc.sin", 1},
      {"tfc.cos", 1},         {"tfc.relu", 1},       {"tfc.sigmoid", 3},
      {"tfc.silu", 4},        {"tfc.gelu", 8},       {"tfc.softmax", 5},
      {"tfc.layer_norm", 8},  {"tfc.rms_norm", 5},   {"tfc.where", 1},
      {"tfc.add_layer_norm", 9}};
  auto it = table.find(name);
  return it == table.end() ? 0 : it->second;
}

static bool staticNumElements(mlir::Type type, double &count) {
  auto tensor = llvm::dyn_cast<mlir::RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape())
    return false;
  count = static_cast<double>(tensor.getNumElements());
  return true;
}

FlopCount tfc::countFlops(mlir::Operation *root) {
  FlopCount flops;
  root->walk([&](mlir::Operation *op) {
    llvm::StringRef name = op->getName().getStringRef();
    if (!name.starts_with("tfc.") || op->getNumResults() == 0)
      return;
    double outElements = 0;
    if (!staticNumElements(op->getResult(0).getType(), outElements)) {
      ++flops.dynamicOps;
      return;
    }
    if (name == "tfc.matmul" || name == "tfc.linear") {
      // 2*K per output element; K is the lhs's last dimension.
      auto lhs = llvm::dyn_cast<mlir::RankedTensorType>(
          op->getOperand(0).getType());
      if (!lhs || lhs.getRank() == 0 || lhs.isDynamicDim(lhs.getRank() - 1)) {
        ++flops.dynamicOps;
        return;
      }
      flops.matmul += 2.0 * outElements * lhs.getShape().back();
      return;
    }
    if (name == "tfc.fused_attention") {
      // Per (batch, head): Q K^T is 2*Sq*Sk*D, P V is 2*Sq*Sk*Dv, and the
      // scale, mask and softmax about 7 per score.
      auto q = llvm::dyn_cast<mlir::RankedTensorType>(
          op->getOperand(0).getType());
      auto k = llvm::dyn_cast<mlir::RankedTensorType>(
          op->getOperand(1).getType());
      if (!q || !k || !q.hasStaticShape() || !k.hasStaticShape() ||
          q.getRank() != 4 || k.getRank() != 4) {
        ++flops.dynamicOps;
        return;
      }
      double scores = static_cast<double>(q.getNumElements()) /
                      q.getDimSize(3) * k.getDimSize(2);
      flops.matmul += 2.0 * scores * q.getDimSize(3) +
                      2.0 * outElements * k.getDimSize(2);
      flops.other += 7.0 * scores;
      return;
    }
    if (name.starts_with("tfc.reduce_")) {
      double inElements = 0;
      if (staticNumElements(op->getOperand(0).getType(), inElements))
        flops.other += inElements;
      return;
    }
    flops.other += flopsPerElement(name) * outElements;
  });
  return flops;
}
