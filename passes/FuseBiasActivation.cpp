//===- FuseBiasActivation.cpp - act(x @ W + b) -> tfc.linear --------------===//
//
// Pass `fuse-bias-activation`: folds the epilogue of a linear layer into the
// matmul. The algorithm, for every tfc.matmul:
//
//  1. The rhs must be a rank-2 weight (tfc.linear's `w`); batched matmuls
//     (attention) are left alone.
//  2. Bias: if the matmul's only user is a tfc.add whose other operand is a
//     rank-1 f32 tensor as long as N (the output features), and the add
//     keeps the matmul's type, the add is the bias.
//  3. Activation: if the only user of the result so far is a tfc.relu,
//     tfc.gelu (erf: "gelu"; tanh: "gelu_tanh") or tfc.silu, it is the
//     activation.
//  4. With a bias or an activation (or both), one tfc.linear replaces the
//     last op of the group; the others become dead and are erased. A matmul
//     with neither is left as it is.
//
// Both steps require a single user: when the matmul (or the biased result)
// is read elsewhere too, fusing would compute it twice.
//
// matchLinear() is also used by the fusion report.
//
//===----------------------------------------------------------------------===//

#include "passes/Matchers.h"
#include "passes/Passes.h"

#include "mlir/IR/PatternMatch.h"

using namespace mlir;
namespace tir = mlir::tfc;

namespace tfc {
#define GEN_PASS_DEF_FUSEBIASACTIVATION
#include "passes/Passes.h.inc"
} // namespace tfc

namespace tfc {

namespace {

std::string shapeString(Type type) {
  std::string out;
  llvm::raw_string_ostream os(out);
  type.print(os);
  return out;
}

/// The activation name tfc.linear uses for `op`, or empty.
std::string activationOf(Operation *op) {
  if (isa<tir::ReluOp>(op))
    return "relu";
  if (isa<tir::SiluOp>(op))
    return "silu";
  if (auto gelu = dyn_cast<tir::GeluOp>(op))
    return gelu.getApproximate() == "tanh" ? "gelu_tanh" : "gelu";
  return "";
}

} // namespace

FailureOr<LinearMatch> matchLinear(tir::MatmulOp matmul, Blocker *why) {
  auto weight = cast<RankedTensorType>(matmul.getRhs().getType());
  // A weight in panels (weight-layout: the tied LM head) is a rank-2 one.
  std::optional<uint64_t> packedN = matmul.getPackedN();
  if (weight.getRank() != 2 && !packedN)
    return block(why, matmul,
                 "a batched matmul (rhs " + shapeString(weight) +
                     "), not a linear layer with a rank-2 weight");
  LinearMatch m;
  m.matmul = matmul;
  int64_t n = packedN ? static_cast<int64_t>(*packedN)
                      : weight.getDimSize(matmul.getTransposeB() ? 0 : 1);
  Value result = matmul.getResult();
  if (result.use_empty())
    return block(why, matmul, "the result is unused");
  if (!result.hasOneUse()) {
    Operation *first = *result.user_begin();
    Operation *second = otherUser(result, first);
    return block(why, second,
                 "the result has several users (" + describe(first) + ", " +
                     describe(second) +
                     "), so no bias or activation can be folded in");
  }
  Operation *user = *result.user_begin();

  // Bias.
  std::string notBias;
  if (auto add = dyn_cast<tir::AddOp>(user)) {
    Value other = add.getLhs() == result ? add.getRhs() : add.getLhs();
    auto otherType = cast<RankedTensorType>(other.getType());
    bool rank1 = otherType.getRank() == 1;
    int64_t length = rank1 ? otherType.getDimSize(0) : 0;
    if (other != result && rank1 && otherType.getElementType().isF32() &&
        (ShapedType::isDynamic(n) || ShapedType::isDynamic(length) ||
         length == n) &&
        add.getType() == result.getType()) {
      m.biasAdd = add;
      m.bias = other;
    } else {
      notBias = "the add that follows (" + describe(add) + ") adds " +
                shapeString(otherType) + ", not a rank-1 bias of length " +
                (ShapedType::isDynamic(n) ? std::string("N")
                                          : std::to_string(n));
    }
  }

  // Activation.
  Value current = m.biasAdd ? m.biasAdd->getResult(0) : result;
  if (current.hasOneUse()) {
    Operation *next = *current.user_begin();
    std::string activation = activationOf(next);
    if (!activation.empty()) {
      m.activationOp = next;
      m.activation = activation;
    }
  }

  if (!m.biasAdd && !m.activationOp) {
    if (!notBias.empty())
      return block(why, user, notBias);
    return block(why, user,
                 "no bias add or activation follows (the result feeds " +
                     describe(user) + ")");
  }
  return m;
}

namespace {

void rewriteLinear(LinearMatch m, RewriterBase &rewriter) {
  Operation *last = m.last();
  rewriter.setInsertionPoint(last);
  SmallVector<Location> locs = {m.matmul.getLoc()};
  if (m.biasAdd)
    locs.push_back(m.biasAdd->getLoc());
  if (m.activationOp)
    locs.push_back(m.activationOp->getLoc());
  auto linear = rewriter.create<tir::LinearOp>(
      rewriter.getFusedLoc(locs), m.matmul.getLhs(), m.matmul.getRhs(), m.bias,
      m.matmul.getTransposeB(), m.activation);
  // The op before `last` in the group is dead now; erasing it erases the
  // rest of the group too.
  Operation *previous =
      m.activationOp && m.biasAdd ? m.biasAdd : m.matmul.getOperation();
  rewriter.replaceOp(last, linear.getResult());
  eraseIfDead(previous, rewriter);
}

struct FuseBiasActivationPass
    : impl::FuseBiasActivationBase<FuseBiasActivationPass> {
  void runOnOperation() override {
    rewriteEach<tir::MatmulOp>(
        getOperation(),
        [](tir::MatmulOp matmul, RewriterBase &rewriter) -> LogicalResult {
          // Panels come later (weight-layout); rewriteLinear keeps [N, K].
          if (matmul.getPackedN())
            return failure();
          FailureOr<LinearMatch> m = matchLinear(matmul);
          if (failed(m))
            return failure();
          rewriteLinear(*m, rewriter);
          return success();
        });
  }
};

} // namespace
} // namespace tfc
