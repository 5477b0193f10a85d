//===- RecognizeLayerNorm.cpp - primitive LayerNorm -> tfc.layer_norm -----===//
//
// Pass `recognize-layernorm`: LayerNorm written out in primitives (as in the
// seeds' hand-written modules) becomes one tfc.layer_norm, so that it is
// computed in one pass over each row and can fuse with the residual add.
//
// The algorithm is anchored on the normalization itself, a tfc.div or
// tfc.mul (`n` below), and grows outwards, so it finds the largest match
// whatever order ops are visited in:
//
//   mu  = reduce_mean(x, axis = last, keepdim)
//   d   = x - mu                                  (tfc.sub)
//   sq  = pow(d, 2) | d * d                       (d: the same value, or an
//                                                  identical sub)
//   var = reduce_mean(sq, axis = last, keepdim)
//   ve  = var + eps | eps + var                   (eps a scalar constant >= 0)
//   n   = d / sqrt(ve) | d * rsqrt(ve) | rsqrt(ve) * d
//   t   = n * gamma | gamma * n                   (optional; gamma rank 1, D)
//   r   = t + beta | beta + t                     (optional; beta rank 1, D)
//
// Every intermediate must be used only inside the pattern (d by the square
// and by n); gamma and beta are taken only when n (or t) has the mul (add)
// as its only user, otherwise the match stops before them, which is still
// correct. Missing gamma/beta become constant ones/zeros (the last dim must
// be static then). The ops replaced are erased when dead.
//
//===----------------------------------------------------------------------===//

#include "passes/FusionUtils.h"
#include "passes/Passes.h"

#include "ir/TfcOps.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
namespace tir = mlir::tfc;

namespace tfc {
#define GEN_PASS_DEF_RECOGNIZELAYERNORM
#include "passes/Passes.h.inc"
} // namespace tfc

namespace tfc {
namespace {

struct LayerNormMatch {
  Operation *core = nullptr; // n
  Operation *root = nullptr; // r (or t, or n)
  Value x, gamma, beta;
  double epsilon = 0;
};

/// `reduce_mean(x, last axis, keepdim)` -> x.
Value meanInput(Value value) {
  auto mean = value.getDefiningOp<tir::ReduceMeanOp>();
  if (!mean || !mean.getKeepdim())
    return Value();
  auto type = cast<RankedTensorType>(mean.getInput().getType());
  if (static_cast<int64_t>(mean.getAxis()) != type.getRank() - 1)
    return Value();
  return mean.getInput();
}

/// Whether `a` and `b` are the same `x - mean(x)`.
bool sameCentered(Value a, Value b) {
  if (a == b)
    return true;
  auto sa = a.getDefiningOp<tir::SubOp>(), sb = b.getDefiningOp<tir::SubOp>();
  return sa && sb && sa.getLhs() == sb.getLhs() && sa.getRhs() == sb.getRhs();
}

/// A rank-1 f32 value of static length `d`.
bool isVector(Value value, int64_t d) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  return type && type.getRank() == 1 && type.getElementType().isF32() &&
         !ShapedType::isDynamic(d) && type.getDimSize(0) == d;
}

std::optional<LayerNormMatch> matchCore(Operation *core) {
  // n = d / sqrt(ve) | d * rsqrt(ve) | rsqrt(ve) * d
  Value d, ve;
  if (isa<tir::DivOp>(core)) {
    auto sqrt = core->getOperand(1).getDefiningOp<tir::SqrtOp>();
    if (!sqrt || !hasSingleUser(sqrt.getResult(), core))
      return std::nullopt;
    d = core->getOperand(0);
    ve = sqrt.getInput();
    if (!hasSingleUser(ve, sqrt))
      return std::nullopt;
  } else if (isa<tir::MulOp>(core)) {
    for (int i = 0; i < 2 && !d; ++i) {
      auto rsqrt = core->getOperand(i).getDefiningOp<tir::RsqrtOp>();
      if (rsqrt && hasSingleUser(rsqrt.getResult(), core) &&
          hasSingleUser(rsqrt.getInput(), rsqrt)) {
        d = core->getOperand(1 - i);
        ve = rsqrt.getInput();
      }
    }
    if (!d)
      return std::nullopt;
  } else {
    return std::nullopt;
  }

  // ve = var + eps
  auto addEps = ve.getDefiningOp<tir::AddOp>();
  if (!addEps)
    return std::nullopt;
  Value var;
  std::optional<double> eps;
  if ((eps = getScalarConstant(addEps.getRhs())))
    var = addEps.getLhs();
  else if ((eps = getScalarConstant(addEps.getLhs())))
    var = addEps.getRhs();
  if (!var || *eps < 0 || !hasSingleUser(var, addEps))
    return std::nullopt;

  // var = mean(d^2)
  Value sq = meanInput(var);
  if (!sq || !hasSingleUser(sq, var.getDefiningOp()))
    return std::nullopt;
  Operation *square = sq.getDefiningOp();
  Value d2;
  if (auto pow = dyn_cast_or_null<tir::PowOp>(square)) {
    std::optional<double> exponent = getScalarConstant(pow.getRhs());
    if (!exponent || *exponent != 2.0)
      return std::nullopt;
    d2 = pow.getLhs();
  } else if (auto mul = dyn_cast_or_null<tir::MulOp>(square)) {
    if (mul.getLhs() != mul.getRhs())
      return std::nullopt;
    d2 = mul.getLhs();
  } else {
    return std::nullopt;
  }
  if (!sameCentered(d, d2))
    return std::nullopt;

  // d = x - mean(x)
  auto sub = d.getDefiningOp<tir::SubOp>();
  if (!sub)
    return std::nullopt;
  Value x = sub.getLhs();
  if (meanInput(sub.getRhs()) != x)
    return std::nullopt;
  auto xType = cast<RankedTensorType>(x.getType());
  if (!xType.getElementType().isF32() || xType.getRank() < 1 ||
      d.getType() != xType || core->getResult(0).getType() != xType)
    return std::nullopt;

  // Uses: d by the square and the core only (a distinct d2 by the square
  // only); the mean by the sub(s) only.
  for (Operation *user : d.getUsers())
    if (user != core && user != square)
      return std::nullopt;
  if (d2 != d && llvm::any_of(d2.getUsers(),
                             [&](Operation *user) { return user != square; }))
    return std::nullopt;
  Operation *meanOp = sub.getRhs().getDefiningOp();
  for (Operation *user : meanOp->getResult(0).getUsers())
    if (user != d.getDefiningOp() && user != d2.getDefiningOp())
      return std::nullopt;

  LayerNormMatch m;
  m.core = core;
  m.root = core;
  m.x = x;
  m.epsilon = *eps;

  // Affine part, when the normalized value is used by it only.
  int64_t dim = xType.getShape().back();
  Value current = core->getResult(0);
  if (current.hasOneUse()) {
    if (auto mul = dyn_cast<tir::MulOp>(*current.user_begin())) {
      Value other = mul.getLhs() == current ? mul.getRhs() : mul.getLhs();
      if (other != current && isVector(other, dim) &&
          mul.getType() == xType) {
        m.gamma = other;
        m.root = mul;
        current = mul.getResult();
      }
    }
  }
  if (current.hasOneUse()) {
    if (auto add = dyn_cast<tir::AddOp>(*current.user_begin())) {
      Value other = add.getLhs() == current ? add.getRhs() : add.getLhs();
      if (other != current && isVector(other, dim) &&
          add.getType() == xType) {
        m.beta = other;
        m.root = add;
      }
    }
  }
  if ((!m.gamma || !m.beta) && ShapedType::isDynamic(dim))
    return std::nullopt;
  return m;
}

void rewriteLayerNorm(const LayerNormMatch &m, RewriterBase &rewriter) {
  rewriter.setInsertionPoint(m.root);
  Location loc = rewriter.getFusedLoc({m.core->getLoc(), m.root->getLoc()});
  auto xType = cast<RankedTensorType>(m.x.getType());
  auto vectorType =
      RankedTensorType::get({xType.getShape().back()}, rewriter.getF32Type());
  auto constant = [&](float value) -> Value {
    return rewriter.create<tir::ConstantOp>(
        loc, DenseElementsAttr::get(vectorType, rewriter.getF32FloatAttr(value)
                                                    .getValue()));
  };
  Value gamma = m.gamma ? m.gamma : constant(1.0f);
  Value beta = m.beta ? m.beta : constant(0.0f);
  auto norm = rewriter.create<tir::LayerNormOp>(loc, m.x, gamma, beta,
                                                m.epsilon);
  Operation *root = m.root;
  SmallVector<Operation *> producers;
  for (Value operand : root->getOperands())
    producers.push_back(operand.getDefiningOp());
  rewriter.replaceOp(root, norm.getResult());
  eraseIfDead(producers, rewriter);
}

struct RecognizeLayerNormPass
    : impl::RecognizeLayerNormBase<RecognizeLayerNormPass> {
  void runOnOperation() override {
    auto rewrite = [](Operation *op, RewriterBase &rewriter) -> LogicalResult {
      std::optional<LayerNormMatch> m = matchCore(op);
      if (!m)
        return failure();
      rewriteLayerNorm(*m, rewriter);
      return success();
    };
    rewriteEach<tir::DivOp>(getOperation(),
                            [&](tir::DivOp op, RewriterBase &rewriter) {
                              return rewrite(op, rewriter);
                            });
    rewriteEach<tir::MulOp>(getOperation(),
                            [&](tir::MulOp op, RewriterBase &rewriter) {
                              return rewrite(op, rewriter);
                            });
  }
};

} // namespace
} // namespace tfc
