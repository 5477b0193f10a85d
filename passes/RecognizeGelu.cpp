//===- RecognizeGelu.cpp - primitive GELU -> tfc.gelu ---------------------===//
//
// Pass `recognize-gelu`: GELU written out in primitives becomes tfc.gelu
// (which fuse-bias-activation can then fold into a linear layer):
//
//   erf form:  0.5 * x * (1 + erf(x / sqrt(2)))                -> gelu
//   tanh form: 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))
//                                                              -> gelu "tanh"
//
// Products are matched as multisets of factors, so any association and
// order of the multiplications matches (`x * 0.5 * (...)`, `0.5 * (x *
// (...))`, `(...) * x / 2`). The algorithm, anchored on every tfc.mul and
// tfc.div (the candidate root):
//
//  1. Flatten the product under the root: descend through tfc.mul operands
//     and the lhs of tfc.div by a constant, for ops whose only user is the
//     product; constant factors multiply into one coefficient (divisors
//     divide it); other values are the factors. `pow(v, 3)` counts as three
//     factors v.
//  2. The coefficient must be 0.5 (relative tolerance 1e-4, the precision of
//     constants people write) and the factors exactly x and `1 + E` (either
//     operand order) with E = erf(a) or tanh(a), used only there.
//  3. erf: a flattens to {x} with coefficient 1/sqrt(2).
//     tanh: a flattens to {u} with coefficient sqrt(2/pi), u = x + w (either
//     order), w flattens to {x, x, x} with coefficient 0.044715.
//  4. The root is replaced with tfc.gelu(x); the dead ops are erased.
//
// Because flattening includes only single-use ops, a larger product that
// contains a GELU fails step 2 and the GELU itself still matches when its
// own root is visited.
//
//===----------------------------------------------------------------------===//

#include "passes/FusionUtils.h"
#include "passes/Passes.h"

#include "ir/TfcOps.h"

#include "mlir/IR/PatternMatch.h"

#include <cmath>

using namespace mlir;
namespace tir = mlir::tfc;

namespace tfc {
#define GEN_PASS_DEF_RECOGNIZEGELU
#include "passes/Passes.h.inc"
} // namespace tfc

namespace tfc {
namespace {

constexpr double kTolerance = 1e-4;

struct Product {
  double coefficient = 1.0;
  SmallVector<Value> factors;
};

/// Flattens the product rooted at `value` (step 1). `isRoot`: the root's
/// own op is always descended into.
void flatten(Value value, bool isRoot, Product &product, int depth = 0) {
  if (std::optional<double> c = getScalarConstant(value)) {
    product.coefficient *= *c;
    return;
  }
  Operation *def = value.getDefiningOp();
  bool descend = def && depth < 8 && (isRoot || value.hasOneUse());
  if (descend && isa<tir::MulOp>(def) &&
      def->getResult(0).getType() == value.getType()) {
    flatten(def->getOperand(0), false, product, depth + 1);
    flatten(def->getOperand(1), false, product, depth + 1);
    return;
  }
  if (descend && isa<tir::DivOp>(def)) {
    std::optional<double> divisor = getScalarConstant(def->getOperand(1));
    if (divisor && *divisor != 0) {
      product.coefficient /= *divisor;
      flatten(def->getOperand(0), false, product, depth + 1);
      return;
    }
  }
  if (descend && isa<tir::PowOp>(def)) {
    std::optional<double> exponent = getScalarConstant(def->getOperand(1));
    if (exponent && *exponent == 3.0 &&
        def->getOperand(0).getType() == value.getType()) {
      for (int i = 0; i < 3; ++i)
        product.factors.push_back(def->getOperand(0));
      return;
    }
  }
  product.factors.push_back(value);
}

Product flattenRoot(Value value) {
  Product product;
  flatten(value, /*isRoot=*/true, product);
  return product;
}

/// `1 + e` or `e + 1` where e is used only here: e.
Value onePlus(Value value) {
  auto add = value.getDefiningOp<tir::AddOp>();
  if (!add || !value.hasOneUse() || add.getType() != value.getType())
    return Value();
  for (int i = 0; i < 2; ++i) {
    std::optional<double> c = getScalarConstant(add->getOperand(i));
    Value other = add->getOperand(1 - i);
    if (c && *c == 1.0 && other.getType() == value.getType() &&
        other.hasOneUse())
      return other;
  }
  return Value();
}

/// Whether `a` (an erf or tanh argument) is the GELU argument of `x`;
/// `tanhForm` selects the form.
bool isGeluArgument(Value a, Value x, bool tanhForm) {
  if (!a.hasOneUse())
    return false;
  Product p = flattenRoot(a);
  if (p.factors.size() != 1)
    return false;
  if (!tanhForm)
    return p.factors[0] == x && approxEqual(p.coefficient, M_SQRT1_2, kTolerance);
  if (!approxEqual(p.coefficient, std::sqrt(2.0 / M_PI), kTolerance))
    return false;
  auto sum = p.factors[0].getDefiningOp<tir::AddOp>();
  if (!sum || !p.factors[0].hasOneUse())
    return false;
  for (int i = 0; i < 2; ++i) {
    if (sum->getOperand(i) != x)
      continue;
    Value w = sum->getOperand(1 - i);
    if (w == x || !w.hasOneUse())
      continue;
    Product cube = flattenRoot(w);
    if (cube.factors.size() == 3 &&
        llvm::all_of(cube.factors, [&](Value f) { return f == x; }) &&
        approxEqual(cube.coefficient, 0.044715, kTolerance))
      return true;
  }
  return false;
}

struct GeluMatch {
  Operation *root;
  Value x;
  bool tanhForm;
};

std::optional<GeluMatch> matchGelu(Operation *root) {
  Value result = root->getResult(0);
  auto type = cast<RankedTensorType>(result.getType());
  if (!type.getElementType().isF32())
    return std::nullopt;
  Product p = flattenRoot(result);
  if (p.factors.size() != 2 || !approxEqual(p.coefficient, 0.5, kTolerance))
    return std::nullopt;
  for (int i = 0; i < 2; ++i) {
    Value x = p.factors[i];
    Value e = onePlus(p.factors[1 - i]);
    if (!e || x.getType() != type)
      continue;
    Operation *def = e.getDefiningOp();
    if (auto erf = dyn_cast_or_null<tir::ErfOp>(def))
      if (isGeluArgument(erf.getInput(), x, /*tanhForm=*/false))
        return GeluMatch{root, x, false};
    if (auto tanh = dyn_cast_or_null<tir::TanhOp>(def))
      if (isGeluArgument(tanh.getInput(), x, /*tanhForm=*/true))
        return GeluMatch{root, x, true};
  }
  return std::nullopt;
}

struct RecognizeGeluPass : impl::RecognizeGeluBase<RecognizeGeluPass> {
  void runOnOperation() override {
    auto rewrite = [](Operation *op, RewriterBase &rewriter) -> LogicalResult {
      std::optional<GeluMatch> m = matchGelu(op);
      if (!m)
        return failure();
      rewriter.setInsertionPoint(op);
      auto gelu = rewriter.create<tir::GeluOp>(op->getLoc(), m->x,
                                               m->tanhForm ? "tanh" : "none");
      SmallVector<Operation *> producers;
      for (Value operand : op->getOperands())
        producers.push_back(operand.getDefiningOp());
      rewriter.replaceOp(op, gelu.getResult());
      eraseIfDead(producers, rewriter);
      return success();
    };
    rewriteEach<tir::MulOp>(getOperation(),
                            [&](tir::MulOp op, RewriterBase &rewriter) {
                              return rewrite(op, rewriter);
                            });
    rewriteEach<tir::DivOp>(getOperation(),
                            [&](tir::DivOp op, RewriterBase &rewriter) {
                              return rewrite(op, rewriter);
                            });
  }
};

} // namespace
} // namespace tfc
