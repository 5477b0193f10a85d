//===- ElementwiseKernels.cpp - Pointwise tfc ops as Halide Funcs ---------===//
//
// The binary ops (numpy broadcasting), comparisons, `where`, the unary math
// ops, the activations and `cast`. Each is one pure Func over the result's
// axes, scheduled by schedulePointwise.
//
// Math: Halide's own exp/log are vectorizable polynomials accurate to about
// 1e-7 relative. Its tanh calls libm per lane and its erf loses relative
// accuracy near 0, so tanh and erf are written out below. Halide compiles
// with fast-math flags (no NaNs, no infinities), so the formulas clamp their
// arguments where an exp could overflow instead of relying on inf.
//
//===----------------------------------------------------------------------===//

#include "codegen/KernelSupport.h"

#include "ir/TfcOps.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace Halide;
using namespace mlir::tfc;
using namespace tfc::codegen::detail;

namespace tfc::codegen {

namespace {

/// tanh to ~3e-7 relative: an odd Taylor polynomial where 1 - 2/(e^2x + 1)
/// would cancel (|x| < 0.3), that formula elsewhere. |x| is capped at 9,
/// where tanh is 1 in f32, so exp never overflows.
Expr accurateTanh(const Expr &x) {
  Expr ax = min(abs(x), 9.0f);
  Expr t = x * x;
  Expr poly =
      1.0f + t * (-1.0f / 3 +
                  t * (2.0f / 15 + t * (-17.0f / 315 +
                                        t * (62.0f / 2835 +
                                             t * (-1382.0f / 155925 +
                                                  t * (21844.0f / 6081075))))));
  Expr large = 1.0f - 2.0f / (exp(2.0f * ax) + 1.0f);
  return select(ax < 0.3f, x * poly, select(x < 0.0f, -large, large));
}

/// The value of operand `i` at the result element `indices`, broadcast; i1
/// operands come as Halide Bool.
Expr operand(const KernelContext &ctx, unsigned i,
             const std::vector<Expr> &indices) {
  const TensorInput &in = ctx.inputs[i];
  return in.value(broadcastIndices(in, indices));
}

/// Comparison operands: i1 as 0/1 bytes (Halide does not order Bools).
Expr comparable(const KernelContext &ctx, unsigned i,
                const std::vector<Expr> &indices) {
  Expr v = operand(ctx, i, indices);
  return v.type().is_bool() ? storeBool(v) : v;
}

Expr isNonZero(const Expr &v) {
  if (v.type().is_bool())
    return v;
  if (v.type().is_float())
    // NaN is non-zero (C's conversion to bool); `!=` alone is an ordered
    // compare and says false for NaN.
    return v != cast(v.type(), 0) || is_nan(v);
  return v != cast(v.type(), 0);
}

/// `a / b` for integers, as tfc.div defines it (docs/runtime.md, "Integer
/// division"): truncating toward zero (C, PyTorch's rounding_mode="trunc");
/// `a / 0` is 0 (Halide's rule) and `INT_MIN / -1` wraps to INT_MIN. The
/// machine division never sees 0 or -1 as divisor, so no input traps
/// (x86's idiv raises SIGFPE for both): -1 is a negation, done on the
/// unsigned type so that it wraps instead of overflowing.
Expr integerDivide(const Expr &a, const Expr &b) {
  Type unsignedType = a.type().with_code(halide_type_uint);
  Expr zero = cast(b.type(), 0), minusOne = cast(b.type(), -1);
  Expr safeDivisor = select(b == zero || b == minusOne, cast(b.type(), 1), b);
  Expr negated = reinterpret(
      a.type(), cast(unsignedType, 0) - reinterpret(unsignedType, a));
  return select(b == zero, zero, b == minusOne, negated,
                div_round_to_zero(a, safeDivisor));
}

} // namespace

llvm::Expected<Func> buildElementwise(KernelContext &ctx) {
  mlir::Operation *op = ctx.op;
  std::vector<Var> vars = axisVars(ctx.resultRank());
  std::vector<Expr> idx = asExprs(vars);
  auto in = [&](unsigned i) { return operand(ctx, i, idx); };

  // Algorithm
  std::string unsupported;
  Expr value =
      llvm::TypeSwitch<mlir::Operation *, Expr>(op)
          .Case<AddOp>([&](auto) { return in(0) + in(1); })
          .Case<SubOp>([&](auto) { return in(0) - in(1); })
          .Case<MulOp>([&](auto) { return in(0) * in(1); })
          .Case<DivOp>([&](auto) {
            Expr a = in(0), b = in(1);
            return a.type().is_float() ? a / b : integerDivide(a, b);
          })
          .Case<PowOp>([&](auto) { return pow(in(0), in(1)); })
          .Case<MaximumOp>([&](auto) { return max(in(0), in(1)); })
          .Case<MinimumOp>([&](auto) { return min(in(0), in(1)); })
          .Case<AndOp>([&](auto) { return in(0) && in(1); })
          .Case<OrOp>([&](auto) { return in(0) || in(1); })
          .Case<NotOp>([&](auto) { return !in(0); })
          .Case<CmpOp>([&](CmpOp cmp) -> Expr {
            Expr a = comparable(ctx, 0, idx), b = comparable(ctx, 1, idx);
            std::optional<CmpPredicate> pred = cmp.getPredicateKind();
            if (!pred) {
              unsupported =
                  "unknown predicate '" + cmp.getPredicate().str() + "'";
              return Expr();
            }
            switch (*pred) {
            case CmpPredicate::eq:
              return a == b;
            case CmpPredicate::ne:
              // Unordered: a NaN operand makes `ne` true.
              if (a.type().is_float())
                return a != b || is_nan(a) || is_nan(b);
              return a != b;
            case CmpPredicate::lt:
              return a < b;
            case CmpPredicate::le:
              return a <= b;
            case CmpPredicate::gt:
              return a > b;
            case CmpPredicate::ge:
              return a >= b;
            }
            return Expr();
          })
          .Case<WhereOp>([&](auto) { return select(in(0), in(1), in(2)); })
          .Case<NegOp>([&](auto) { return -in(0); })
          .Case<ExpOp>([&](auto) { return exp(in(0)); })
          .Case<LogOp>([&](auto) { return log(in(0)); })
          .Case<SqrtOp>([&](auto) { return sqrt(in(0)); })
          // Halide 14 has no rsqrt in its front end; a true division keeps
          // full precision (fast-math here does not allow reciprocals).
          .Case<RsqrtOp>([&](auto) { return 1.0f / sqrt(in(0)); })
          .Case<TanhOp>([&](auto) { return accurateTanh(in(0)); })
          .Case<ErfOp>([&](auto) { return accurateErf(in(0)); })
          .Case<ReluOp>([&](auto) { return activation("relu", in(0)); })
          .Case<SigmoidOp>([&](auto) { return sigmoid(in(0)); })
          .Case<SiluOp>([&](auto) { return activation("silu", in(0)); })
          .Case<SinOp>([&](auto) { return sin(in(0)); })
          .Case<CosOp>([&](auto) { return cos(in(0)); })
          .Case<AbsOp>([&](auto) { return abs(in(0)); })
          .Case<GeluOp>([&](GeluOp gelu) -> Expr {
            if (gelu.getApproximate() == "none")
              return activation("gelu", in(0));
            if (gelu.getApproximate() == "tanh")
              return activation("gelu_tanh", in(0));
            unsupported =
                "unknown approximation '" + gelu.getApproximate().str() + "'";
            return Expr();
          })
          .Case<CastOp>([&](auto) -> Expr {
            Expr x = in(0);
            if (ctx.resultType.getElementType().isInteger(1))
              return isNonZero(x);
            return cast(ctx.resultStorage, x);
          })
          .Default([&](mlir::Operation *) {
            unsupported = "not an elementwise op";
            return Expr();
          });
  if (!value.defined())
    return ctx.error(unsupported);
  if (ctx.resultType.getElementType().isInteger(1)) {
    if (!value.type().is_bool())
      return ctx.error("expected a boolean result");
    value = storeBool(value);
  }
  if (value.type() != ctx.resultStorage)
    return ctx.error("computes the wrong element type for the result");
  Func out = ctx.func();
  define(out, vars, value);

  // Schedule
  schedulePointwise(ctx, out, vars, ctx.resultType.getShape());
  return out;
}

} // namespace tfc::codegen
