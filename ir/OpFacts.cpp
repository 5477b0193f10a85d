//===- OpFacts.cpp - Rules of the ops that state their own facts ----------===//
//
// The FLOP counts and symbolic shape rules of the ops marked
// `Tfc_CustomFlops` / `Tfc_CustomSymbolicShape` in TfcOps.td and
// TfcFusedOps.td; the common rules are traits in OpFacts.h. Each symbolic
// rule mirrors the op's `inferShape` (ShapeInference.cpp) on DimExprs
// instead of `?`; the ops here have verified, so the rules only guard what
// would otherwise index out of range.
//
//===----------------------------------------------------------------------===//

#include "ir/TfcOps.h"

#include <string>

using namespace mlir;
using namespace mlir::tfc;

#include "ir/TfcInterfaces.cpp.inc"

SymbolicShapeContext::~SymbolicShapeContext() = default;

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

std::optional<double> mlir::tfc::detail::staticNumElements(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape())
    return std::nullopt;
  return static_cast<double>(tensor.getNumElements());
}

FailureOr<SymShape> mlir::tfc::detail::shapeFrom(Operation *op,
                                                 unsigned result,
                                                 const SymShape &from,
                                                 SymbolicShapeContext &ctx) {
  auto type = dyn_cast<RankedTensorType>(op->getResult(result).getType());
  if (!type)
    return ctx.fail("result " + std::to_string(result) + " is not ranked");
  SymShape r;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    if (!type.isDynamicDim(d)) {
      r.push_back(DimExpr::of(type.getDimSize(d)));
      continue;
    }
    if (static_cast<int64_t>(from.size()) != type.getRank() ||
        from[static_cast<size_t>(d)].isStatic())
      return ctx.fail("no symbolic size for dim " + std::to_string(d) +
                      " of result " + std::to_string(result));
    r.push_back(from[static_cast<size_t>(d)]);
  }
  return r;
}

namespace {

/// `axis` as an index into `shape`, or a failure naming `attr`.
FailureOr<size_t> axisIn(int64_t axis, const SymShape &shape, StringRef attr,
                         SymbolicShapeContext &ctx) {
  if (axis < 0 || static_cast<size_t>(axis) >= shape.size())
    return ctx.fail("'" + attr + "' " + std::to_string(axis) +
                    " is out of range");
  return static_cast<size_t>(axis);
}

/// 2*K FLOPs per result element, K the lhs's last dim (matmul, linear).
std::optional<OpFlops> contractionFlops(Operation *op) {
  std::optional<double> out =
      mlir::tfc::detail::staticNumElements(op->getResult(0).getType());
  auto lhs = dyn_cast<RankedTensorType>(op->getOperand(0).getType());
  if (!out || !lhs || lhs.getRank() == 0 || lhs.isDynamicDim(lhs.getRank() - 1))
    return std::nullopt;
  return OpFlops{2.0 * *out * static_cast<double>(lhs.getShape().back()), 0};
}

/// The shape of a single result.
LogicalResult single(std::vector<SymShape> &results, SymShape shape) {
  results.push_back(std::move(shape));
  return success();
}

} // namespace

//===----------------------------------------------------------------------===//
// Linear algebra
//===----------------------------------------------------------------------===//

std::optional<OpFlops> MatmulOp::countFlops() {
  return contractionFlops(*this);
}

LogicalResult MatmulOp::inferSymbolicShapes(SymbolicShapeContext &ctx,
                                            std::vector<SymShape> &results) {
  const SymShape &a = ctx.operandShape(0), &b = ctx.operandShape(1);
  if (std::optional<uint64_t> n = getPackedN()) {
    if (a.size() < 2)
      return ctx.fail("lhs must have rank >= 2");
    SymShape r(a.begin(), a.end() - 1);
    r.push_back(DimExpr::of(static_cast<int64_t>(*n)));
    return single(results, std::move(r));
  }
  if (a.size() < 2 || b.size() < 2)
    return ctx.fail("operands must have rank >= 2");
  FailureOr<SymShape> batch = ctx.broadcast(
      {SymShape(a.begin(), a.end() - 2), SymShape(b.begin(), b.end() - 2)});
  if (failed(batch))
    return failure();
  SymShape r = std::move(*batch);
  r.push_back(a[a.size() - 2]);
  r.push_back(getTransposeB() ? b[b.size() - 2] : b[b.size() - 1]);
  return single(results, std::move(r));
}

std::optional<OpFlops> LinearOp::countFlops() {
  return contractionFlops(*this);
}

LogicalResult LinearOp::inferSymbolicShapes(SymbolicShapeContext &ctx,
                                            std::vector<SymShape> &results) {
  const SymShape &x = ctx.operandShape(0), &w = ctx.operandShape(1);
  std::optional<uint64_t> n = getPackedN();
  if (x.empty() || (!n && w.size() != 2))
    return ctx.fail("x must have rank >= 1 and w rank 2");
  SymShape r(x.begin(), x.end() - 1);
  if (n)
    r.push_back(DimExpr::of(static_cast<int64_t>(*n)));
  else
    r.push_back(getTransposeB() ? w[0] : w[1]);
  return single(results, std::move(r));
}

std::optional<OpFlops> FusedAttentionOp::countFlops() {
  // Per (batch, head): Q K^T is 2*Sq*Sk*D, P V is 2*Sq*Sk*Dv, and the
  // scale, mask and softmax about 7 per score.
  auto q = dyn_cast<RankedTensorType>(getQ().getType());
  auto k = dyn_cast<RankedTensorType>(getK().getType());
  std::optional<double> out =
      mlir::tfc::detail::staticNumElements(getResult().getType());
  if (!q || !k || !out || !q.hasStaticShape() || !k.hasStaticShape() ||
      q.getRank() != 4 || k.getRank() != 4)
    return std::nullopt;
  double scores = static_cast<double>(q.getNumElements()) / q.getDimSize(3) *
                  k.getDimSize(2);
  return OpFlops{2.0 * scores * q.getDimSize(3) + 2.0 * *out * k.getDimSize(2),
                 7.0 * scores};
}

LogicalResult
FusedAttentionOp::inferSymbolicShapes(SymbolicShapeContext &ctx,
                                      std::vector<SymShape> &results) {
  // [B, H, Sq, Dv]: q's batch, heads and queries, v's head size.
  const SymShape &q = ctx.operandShape(0), &v = ctx.operandShape(2);
  if (q.size() != 4 || v.size() != 4)
    return ctx.fail("q and v must have rank 4");
  return single(results, {q[0], q[1], q[2], v[3]});
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

LogicalResult TransposeOp::inferSymbolicShapes(SymbolicShapeContext &ctx,
                                               std::vector<SymShape> &results) {
  const SymShape &in = ctx.operandShape(0);
  if (getPerm().size() != in.size())
    return ctx.fail("'perm' does not match the rank");
  SymShape r;
  for (int64_t p : getPerm()) {
    FailureOr<size_t> axis = axisIn(p, in, "perm", ctx);
    if (failed(axis))
      return failure();
    r.push_back(in[*axis]);
  }
  return single(results, std::move(r));
}

LogicalResult ReshapeOp::inferSymbolicShapes(SymbolicShapeContext &ctx,
                                             std::vector<SymShape> &results) {
  // The input's dynamic (in the IR type) dims go, in order, to the -1
  // entries (docs/ir.md, "Reshape rule").
  const SymShape &in = ctx.operandShape(0);
  auto inType = cast<RankedTensorType>(getInput().getType());
  std::vector<DimExpr> carried;
  for (int64_t i = 0; i < inType.getRank(); ++i)
    if (inType.isDynamicDim(i) && static_cast<size_t>(i) < in.size())
      carried.push_back(in[static_cast<size_t>(i)]);
  SymShape r;
  size_t next = 0;
  for (int64_t d : getShape()) {
    if (d != -1) {
      r.push_back(DimExpr::of(d));
      continue;
    }
    if (next >= carried.size())
      return ctx.fail("more -1 entries than dynamic dims");
    r.push_back(carried[next++]);
  }
  return single(results, std::move(r));
}

LogicalResult SliceOp::inferSymbolicShapes(SymbolicShapeContext &ctx,
                                           std::vector<SymShape> &results) {
  SymShape r = ctx.operandShape(0);
  FailureOr<size_t> axis = axisIn(getAxis(), r, "axis", ctx);
  if (failed(axis))
    return failure();
  r[*axis] = DimExpr::of(sliceSize(static_cast<int64_t>(getStart()),
                                   static_cast<int64_t>(getEnd()),
                                   static_cast<int64_t>(getStep())));
  return single(results, std::move(r));
}

LogicalResult ConcatOp::inferSymbolicShapes(SymbolicShapeContext &ctx,
                                            std::vector<SymShape> &results) {
  SymShape r = ctx.operandShape(0);
  FailureOr<size_t> axis = axisIn(getAxis(), r, "axis", ctx);
  if (failed(axis))
    return failure();
  for (unsigned i = 1; i < getInputs().size(); ++i) {
    const SymShape &s = ctx.operandShape(i);
    if (s.size() != r.size())
      return ctx.fail("operands differ in rank");
    r[*axis] = ::tfc::rt::add(r[*axis], s[*axis]);
    // Other dims agree; a static one is the more precise.
    for (size_t d = 0; d < r.size(); ++d)
      if (d != *axis && !r[d].isStatic() && s[d].isStatic())
        r[d] = s[d];
  }
  return single(results, std::move(r));
}

LogicalResult GatherOp::inferSymbolicShapes(SymbolicShapeContext &ctx,
                                            std::vector<SymShape> &results) {
  const SymShape &table = ctx.operandShape(0);
  if (table.empty())
    return ctx.fail("the table must have rank >= 1");
  SymShape r = ctx.operandShape(1);
  if (getPackedRows()) {
    // Panels [ceil(V / 48), D, 48]: rows of D.
    if (table.size() != 3)
      return ctx.fail("packed_rows needs a rank-3 panel table");
    r.push_back(table[1]);
    return single(results, std::move(r));
  }
  r.insert(r.end(), table.begin() + 1, table.end());
  return single(results, std::move(r));
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

/// The shape of a reduction along `axis` of `input`.
static LogicalResult reduceShape(const SymShape &input, int64_t axisAttr,
                                 bool keepdim, SymbolicShapeContext &ctx,
                                 std::vector<SymShape> &results) {
  FailureOr<size_t> axis = axisIn(axisAttr, input, "axis", ctx);
  if (failed(axis))
    return failure();
  SymShape r = input;
  if (keepdim)
    r[*axis] = DimExpr::of(1);
  else
    r.erase(r.begin() + static_cast<ptrdiff_t>(*axis));
  return single(results, std::move(r));
}

#define TFC_REDUCE_SHAPE(OP)                                                   \
  LogicalResult OP::inferSymbolicShapes(SymbolicShapeContext &ctx,             \
                                        std::vector<SymShape> &results) {      \
    return reduceShape(ctx.operandShape(0), getAxis(), getKeepdim(), ctx,      \
                       results);                                               \
  }
TFC_REDUCE_SHAPE(ReduceSumOp)
TFC_REDUCE_SHAPE(ReduceMeanOp)
TFC_REDUCE_SHAPE(ReduceMaxOp)
#undef TFC_REDUCE_SHAPE

//===----------------------------------------------------------------------===//
// Index generators
//===----------------------------------------------------------------------===//

LogicalResult PositionsOp::inferSymbolicShapes(SymbolicShapeContext &ctx,
                                               std::vector<SymShape> &results) {
  // The length is the ref dim; the offset operand only shifts the values.
  const SymShape &ref = ctx.operandShape(0);
  FailureOr<size_t> axis = axisIn(getAxis(), ref, "axis", ctx);
  if (failed(axis))
    return failure();
  return single(results, {ref[*axis]});
}

LogicalResult
CausalMaskOp::inferSymbolicShapes(SymbolicShapeContext &ctx,
                                  std::vector<SymShape> &results) {
  const SymShape &q = ctx.operandShape(0), &k = ctx.operandShape(1);
  FailureOr<size_t> qAxis = axisIn(getQAxis(), q, "q_axis", ctx);
  if (failed(qAxis))
    return failure();
  FailureOr<size_t> kAxis = axisIn(getKAxis(), k, "k_axis", ctx);
  if (failed(kAxis))
    return failure();
  return single(results, {q[*qAxis], k[*kAxis]});
}

//===----------------------------------------------------------------------===//
// Index ops
//===----------------------------------------------------------------------===//

LogicalResult ArgmaxOp::inferSymbolicShapes(SymbolicShapeContext &ctx,
                                            std::vector<SymShape> &results) {
  return reduceShape(ctx.operandShape(0), getAxis(), getKeepdim(), ctx,
                     results);
}

std::optional<OpFlops> TopkOp::countFlops() {
  // k passes over each row (a comparison per element and pass).
  std::optional<double> n =
      mlir::tfc::detail::staticNumElements(getInput().getType());
  if (!n)
    return std::nullopt;
  return OpFlops{0, static_cast<double>(getK()) * *n};
}

LogicalResult TopkOp::inferSymbolicShapes(SymbolicShapeContext &ctx,
                                          std::vector<SymShape> &results) {
  SymShape r = ctx.operandShape(0);
  if (r.empty())
    return ctx.fail("input must have rank >= 1");
  r.back() = DimExpr::of(static_cast<int64_t>(getK()));
  results.push_back(r);
  results.push_back(r);
  return success();
}

LogicalResult ArangeOp::inferSymbolicShapes(SymbolicShapeContext &ctx,
                                            std::vector<SymShape> &results) {
  if (std::optional<uint64_t> length = getLength())
    return single(results, {DimExpr::of(static_cast<int64_t>(*length))});
  if (!getRef() || !getAxis())
    return ctx.fail("needs 'length', or a ref operand and 'axis'");
  const SymShape &ref = ctx.operandShape(0);
  FailureOr<size_t> axis = axisIn(static_cast<int64_t>(*getAxis()), ref,
                                  "axis", ctx);
  if (failed(axis))
    return failure();
  return single(results, {ref[*axis]});
}
