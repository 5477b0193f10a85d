//===- KernelSupport.cpp - Helpers shared by the kernel builders ----------===//

#include "codegen/KernelSupport.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>

using namespace Halide;

namespace tfc::codegen::detail {

//===----------------------------------------------------------------------===//
// TensorInput
//===----------------------------------------------------------------------===//

TensorInput::TensorInput(mlir::RankedTensorType type, Halide::Type storage,
                         const std::string &name)
    : param(storage, static_cast<int>(type.getRank()), name),
      shape(type.getShape().begin(), type.getShape().end()),
      elementType(type.getElementType()) {
  // Constant mins let Halide fold index arithmetic; the runtime's buffers
  // always start at 0. A stride-1 innermost dimension makes vector loads
  // dense. Static extents are checked when the kernel is called, and also
  // let Halide specialize loops (tails, unrolling) at compile time.
  for (int axis = 0; axis < rank(); ++axis) {
    Internal::Dimension dim = param.dim(hdim(axis));
    dim.set_min(0);
    if (!mlir::ShapedType::isDynamic(shape[axis]))
      dim.set_extent(static_cast<int>(shape[axis]));
  }
  if (rank() > 0)
    param.dim(0).set_stride(1);
}

std::optional<int64_t> TensorInput::staticExtent(int axis) const {
  if (mlir::ShapedType::isDynamic(shape[axis]))
    return std::nullopt;
  return shape[axis];
}

Expr TensorInput::extent(int axis) const {
  if (auto e = staticExtent(axis))
    return Expr(static_cast<int>(*e));
  return param.dim(hdim(axis)).extent();
}

Expr TensorInput::at(const std::vector<Expr> &indices) const {
  std::vector<Expr> reversed(indices.rbegin(), indices.rend());
  return param(reversed);
}

Expr TensorInput::value(const std::vector<Expr> &indices) const {
  Expr e = at(indices);
  if (isBool())
    return e != cast(e.type(), 0);
  return e;
}

//===----------------------------------------------------------------------===//
// KernelContext
//===----------------------------------------------------------------------===//

std::optional<int64_t> KernelContext::resultStaticExtent(int axis) const {
  int64_t e = resultType.getDimSize(axis);
  if (mlir::ShapedType::isDynamic(e))
    return std::nullopt;
  return e;
}

Func KernelContext::func(const std::string &stage) const {
  return Func(stage.empty() ? base : base + "_" + stage);
}

llvm::Error KernelContext::error(const llvm::Twine &message) const {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 llvm::Twine(op->getName().getStringRef()) +
                                     ": " + message);
}

//===----------------------------------------------------------------------===//
// Axis-ordered access
//===----------------------------------------------------------------------===//

std::vector<Var> axisVars(int rank) {
  std::vector<Var> vars;
  for (int i = 0; i < rank; ++i)
    vars.emplace_back("i" + std::to_string(i));
  return vars;
}

std::vector<Expr> asExprs(const std::vector<Var> &vars) {
  return std::vector<Expr>(vars.begin(), vars.end());
}

void define(Func &f, const std::vector<Var> &vars, const Expr &value) {
  std::vector<Var> reversed(vars.rbegin(), vars.rend());
  f(reversed) = value;
}

Expr call(const Func &f, const std::vector<Expr> &indices) {
  std::vector<Expr> reversed(indices.rbegin(), indices.rend());
  // Func::operator() is non-const; calling does not modify the Func.
  return const_cast<Func &>(f)(reversed);
}

FuncRef ref(Func &f, const std::vector<Expr> &indices) {
  std::vector<Expr> reversed(indices.rbegin(), indices.rend());
  return f(reversed);
}

std::vector<Expr> broadcastIndices(const TensorInput &operand,
                                   const std::vector<Expr> &resultIndices) {
  int rank = operand.rank();
  int offset = static_cast<int>(resultIndices.size()) - rank;
  std::vector<Expr> indices;
  for (int axis = 0; axis < rank; ++axis) {
    // A static 1 is read at index 0 whatever the result's extent (0 is its
    // only index anyway). A `?` is taken to equal the result's dimension.
    if (operand.shape[axis] == 1)
      indices.push_back(0);
    else
      indices.push_back(resultIndices[axis + offset]);
  }
  return indices;
}

Expr storeBool(const Expr &b) { return cast(UInt(8), b); }

Expr lowest(const Type &t) {
  if (t.is_float())
    return Expr(-std::numeric_limits<float>::infinity());
  return t.min();
}

//===----------------------------------------------------------------------===//
// Math
//===----------------------------------------------------------------------===//

/// The rational approximation XLA and Eigen use, odd numerator over even
/// denominator, with the input clamped to [-4, 4] (erf(4) is 1 in f32).
Expr accurateErf(const Expr &x0) {
  Expr x = clamp(x0, -4.0f, 4.0f);
  Expr x2 = x * x;
  Expr p = x2 * -2.72614225801306e-10f + 2.77068142495902e-08f;
  p = x2 * p + -2.10102402082508e-06f;
  p = x2 * p + -5.69250639462346e-05f;
  p = x2 * p + -7.34990630326855e-04f;
  p = x2 * p + -2.95459980854025e-03f;
  p = x2 * p + -1.60960333262415e-02f;
  p = x * p;
  Expr q = x2 * -1.45660718464996e-05f + -2.13374055278905e-04f;
  q = x2 * q + -1.68282697438203e-03f;
  q = x2 * q + -7.37332916720468e-03f;
  q = x2 * q + -1.42647390514189e-02f;
  return p / q;
}

namespace {
/// 2^t for t in [-126, 126], relative error ~2e-7 at |t| <= 1 and within
/// the rounding of t beyond. Cheaper than Halide's exp (no floor, no range
/// masks): n = round(t) by the 1.5 * 2^23 trick (strict_float, so that the
/// simplifier does not fold the add and the subtract away), 2^(t - n) =
/// e^r with r = (t - n) ln 2 in [-ln2 / 2, ln2 / 2] by Cephes' expf
/// polynomial, and n added to the result's exponent bits.
Expr exp2Clamped(const Expr &t0) {
  constexpr float kRound = 12582912.0f; // 1.5 * 2^23
  Expr t = clamp(t0, -126.0f, 126.0f);
  Expr shifted = strict_float(t + kRound);
  Expr n = strict_float(shifted - kRound);
  // Strict too: with fast-math flags LLVM distributes ln 2 into the
  // polynomial (a multiply more per term).
  Expr r = strict_float((t - n) * float(M_LN2));
  Expr r2 = r * r;
  Expr p = r * 1.9875691500e-4f + 1.3981999507e-3f;
  p = r * p + 8.3334519073e-3f;
  p = r * p + 4.1665795894e-2f;
  p = r * p + 1.6666665459e-1f;
  p = r * p + 5.0000001201e-1f;
  p = r2 * p + r + 1.0f;
  // shifted's bits are those of 1.5 * 2^23 plus n; n << 23 in unsigned
  // arithmetic (it wraps for n < 0, which is the subtraction wanted).
  Expr scale = cast<uint32_t>(reinterpret<int32_t>(shifted) - 0x4B400000)
               << 23;
  return reinterpret<float>(reinterpret<uint32_t>(p) + scale);
}

/// x / (1 + 2^t): x * sigmoid(-t ln 2) with one division.
Expr timesSigmoidOfExp2(const Expr &x, const Expr &t) {
  return x / (1.0f + exp2Clamped(t));
}
} // namespace

Expr sigmoid(const Expr &x) {
  return timesSigmoidOfExp2(1.0f, x * float(-M_LOG2E));
}

Expr activation(llvm::StringRef name, const Expr &x) {
  if (name == "none")
    return x;
  if (name == "relu")
    return max(x, 0.0f);
  if (name == "gelu")
    return 0.5f * x * (1.0f + accurateErf(x * float(M_SQRT1_2)));
  if (name == "gelu_tanh") {
    // 0.5 * (1 + tanh(u)) == sigmoid(2u) == 1 / (1 + 2^t), t = -2u log2(e):
    // no cancellation for negative x, one exp2 instead of a tanh, and the
    // constants of u folded into t = x (k0 + k1 x^2).
    constexpr double k0 = -2.0 * 0.7978845608028654 * M_LOG2E; // sqrt(2/pi)
    Expr t = x * (x * x * float(k0 * 0.044715) + float(k0));
    return timesSigmoidOfExp2(x, t);
  }
  if (name == "silu")
    return timesSigmoidOfExp2(x, x * float(-M_LOG2E));
  return Expr();
}

//===----------------------------------------------------------------------===//
// Schedules
//===----------------------------------------------------------------------===//

Var fuseAll(Stage stage, const std::vector<Var> &innerToOuter,
            const std::string &name) {
  if (innerToOuter.empty())
    return Var(name);
  Var fused = innerToOuter.front();
  for (size_t i = 1; i < innerToOuter.size(); ++i) {
    Var next(name + (i + 1 == innerToOuter.size() ? std::string()
                                                  : std::to_string(i)));
    stage.fuse(fused, innerToOuter[i], next);
    fused = next;
  }
  return fused;
}

TailStrategy outputTail(std::optional<int64_t> extent, int factor) {
  if (extent && *extent >= factor)
    return TailStrategy::ShiftInwards;
  return TailStrategy::GuardWithIf;
}

void gpuTileStage(Stage stage, const std::vector<Var> &vars) {
  int rank = static_cast<int>(vars.size());
  if (rank == 0) {
    stage.gpu_single_thread();
    return;
  }
  Var inner = vars[rank - 1];
  if (rank == 1) {
    Var bx("bx"), tx("tx");
    stage.gpu_tile(inner, bx, tx, 256, TailStrategy::GuardWithIf);
    return;
  }
  std::vector<Var> outerVars(vars.rbegin() + 1, vars.rend());
  Var outer = fuseAll(stage, outerVars, "rows");
  // Blocks of 64 x 4 threads. The rows' blocks go to the grid's x dimension
  // (up to 2^31 - 1 blocks; y takes at most 65535): GPT-2's tied head in
  // panels, [1048, 768, 48], has 804,864 rows, and the innermost axis is
  // the short one. (Halide numbers block loops from the innermost out.)
  Var bx("bx"), by("by"), tx("tx"), ty("ty");
  stage.split(inner, bx, tx, 64, TailStrategy::GuardWithIf)
      .split(outer, by, ty, 4, TailStrategy::GuardWithIf)
      .reorder(tx, ty, by, bx)
      .gpu_threads(tx, ty)
      .gpu_blocks(by, bx);
}

void schedulePointwise(const KernelContext &ctx, Func f,
                       const std::vector<Var> &vars,
                       llvm::ArrayRef<int64_t> shape) {
  int rank = static_cast<int>(vars.size());
  auto staticExtent = [&](int axis) -> std::optional<int64_t> {
    if (mlir::ShapedType::isDynamic(shape[axis]))
      return std::nullopt;
    return shape[axis];
  };

  if (ctx.gpu()) {
    gpuTileStage(f, vars);
    return;
  }

  if (rank == 0)
    return;
  Var inner = vars[rank - 1];
  std::optional<int64_t> innerExtent = staticExtent(rank - 1);
  // Vectorize the contiguous axis. A static axis narrower than a vector
  // stays scalar: padding it would compute (and require) extra elements.
  if (!innerExtent || *innerExtent >= kVectorLanes)
    f.vectorize(inner, kVectorLanes, outputTail(innerExtent, kVectorLanes));
  else if (*innerExtent >= 8)
    f.vectorize(inner, 8, TailStrategy::ShiftInwards);
  if (rank == 1)
    return;
  std::vector<Var> outerVars(vars.rbegin() + 1, vars.rend());
  parallelRows(f, outerVars, rowsPerTask(innerExtent));
}

int rowsPerTask(std::optional<int64_t> rowLength) {
  // Tasks of about 16K elements: smaller ones cost more in thread-pool
  // overhead than they gain.
  if (!rowLength)
    return 16;
  return static_cast<int>(
      std::max<int64_t>(1, 16384 / std::max<int64_t>(*rowLength, 1)));
}

Var parallelRows(Func f, const std::vector<Var> &rowsInnerToOuter,
                 int rowsPerTask) {
  // The innermost row var is split, never fused: per-row intermediates
  // computed at a fused var would get bounds through div/mod expressions,
  // which bounds inference cannot tighten to one row (it then allocates and
  // computes whole planes per row).
  Var inner = rowsInnerToOuter.front();
  std::vector<Var> taskVars(rowsInnerToOuter.begin() + 1,
                            rowsInnerToOuter.end());
  Var row = inner;
  if (rowsPerTask > 1) {
    Var task("row_task");
    row = Var("row");
    f.split(inner, task, row, rowsPerTask, TailStrategy::GuardWithIf);
    taskVars.insert(taskVars.begin(), task);
  }
  if (taskVars.empty())
    f.parallel(inner);
  else
    f.parallel(fuseAll(f, taskVars, "tasks"));
  return row;
}

Func vectorizeInnerReduction(Func acc, const RVar &r, const LoopLevel &at,
                             int vectors) {
  RVar ro("ro"), ri("ri");
  Var lane("lane");
  Func lanes =
      acc.update()
          .split(r, ro, ri, kVectorLanes * vectors, TailStrategy::GuardWithIf)
          .rfactor(ri, lane);
  lanes.compute_at(at).vectorize(lane);
  lanes.update().vectorize(lane);
  if (vectors > 1)
    acc.update().atomic().vectorize(ri);
  return lanes;
}

} // namespace tfc::codegen::detail

namespace tfc::codegen::detail {
namespace {
/// See addBf16DotProductLowering.
class HoistBf16Widening : public Internal::IRMutator {
  using IRMutator::visit;
  Expr visit(const Internal::Broadcast *op) override {
    const auto *widen = op->value.as<Internal::Cast>();
    if (widen && widen->type.is_float() && widen->type.bits() == 32 &&
        widen->value.type().is_bfloat())
      return Internal::Cast::make(
          op->type, Internal::Broadcast::make(mutate(widen->value), op->lanes));
    return IRMutator::visit(op);
  }
};
} // namespace

void addBf16DotProductLowering(Pipeline &pipeline) {
  pipeline.add_custom_lowering_pass(new HoistBf16Widening());
}
} // namespace tfc::codegen::detail
