//===- ShapeInference.cpp - shape functions of the tfc ops ----------------===//
//
// One `inferShape` per op: it checks operands and attributes and computes the
// result type. The verifier, `inferReturnTypes` and the builders all call it
// (see Tfc_InferOp in TfcDialect.td), so an op that verifies always infers,
// and inference never sees anything it has not checked itself: it can run
// before the verifier (builders, passes), so it never assumes that the
// operands are ranked or that required attributes are present.
//
// Messages name the shapes involved, because the frontend relays them to the
// user as diagnostics on .tfm lines.
//
//===----------------------------------------------------------------------===//

#include "ir/Broadcast.h"
#include "ir/TfcOps.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tfc;

namespace {

constexpr int64_t kDynamic = ShapedType::kDynamic;

using mlir::tfc::detail::getRanked;
using mlir::tfc::detail::readInt;
using mlir::tfc::detail::str;

/// A default-valued bool attribute: absent means false.
bool getBool(BoolAttr attr) { return attr && attr.getValue(); }

/// Requires `0 <= axis < rank(type)`; `name` is the attribute's name.
LogicalResult checkAxis(int64_t axis, RankedTensorType type, StringRef name,
                        EmitErrorFn emitError) {
  if (axis >= 0 && axis < type.getRank())
    return success();
  return emitError() << name << " " << axis << " is out of range for "
                     << str(type) << " (rank " << type.getRank() << ")";
}

/// Reads a required axis attribute and checks it against `type`.
FailureOr<int64_t> readAxis(IntegerAttr attr, RankedTensorType type,
                            StringRef name, EmitErrorFn emitError) {
  FailureOr<int64_t> axis = readInt(attr, name, emitError);
  if (failed(axis) || failed(checkAxis(*axis, type, name, emitError)))
    return failure();
  return axis;
}

/// A product weight packed by tfc.pack_panels for `packed_n` = `n`
/// columns: checks its layout (panelShape, no transpose_b) and returns K.
FailureOr<int64_t> packedWeightK(RankedTensorType w, int64_t n,
                                 bool transposeB, EmitErrorFn emitError) {
  Type element = w.getElementType();
  int64_t rank = element.isBF16() ? 4 : 3;
  if (transposeB || n <= 0 || !w.hasStaticShape() || w.getRank() != rank)
    return emitError() << "packed_n = " << n << " needs a positive N, no "
                       << "transpose_b and a static rank-" << rank
                       << " panel weight (tfc.pack_panels), got " << str(w);
  int64_t k = w.getDimSize(1) * (element.isBF16() ? 2 : 1);
  if (llvm::ArrayRef<int64_t>(panelShape(k, n, element)) != w.getShape())
    return emitError() << "weight " << str(w)
                       << " is not a panel layout of N = " << n
                       << " columns (tfc.pack_panels)";
  return k;
}

/// The result of a product of `x` ([..., M, K], f32) and a packed weight.
LogicalResult inferPackedProduct(RankedTensorType x, RankedTensorType w,
                                 int64_t n, bool transposeB,
                                 EmitErrorFn emitError,
                                 SmallVectorImpl<Type> &types) {
  FailureOr<int64_t> k = packedWeightK(w, n, transposeB, emitError);
  if (failed(k))
    return failure();
  if (x.getRank() < 2 || !x.getElementType().isF32())
    return emitError() << "the lhs of a packed weight must be an f32 tensor "
                          "of rank >= 2, got "
                       << str(x);
  int64_t kX = x.getShape().back();
  if (!ShapedType::isDynamic(kX) && kX != *k)
    return emitError() << "contraction dims differ: lhs " << str(x)
                       << " has K=" << kX << ", packed weight " << str(w)
                       << " has K=" << *k;
  SmallVector<int64_t> shape(x.getShape().drop_back());
  shape.push_back(n);
  types.push_back(RankedTensorType::get(shape, x.getElementType()));
  return success();
}

/// Elementwise binary ops and cmp: numpy broadcasting, equal element types.
/// `resultElement` overrides the result element type (cmp: i1).
LogicalResult inferBroadcastBinary(Value lhsValue, Value rhsValue,
                                   Type resultElement, EmitErrorFn emitError,
                                   SmallVectorImpl<Type> &types) {
  FailureOr<RankedTensorType> lhs = getRanked(lhsValue, "lhs", emitError);
  if (failed(lhs))
    return failure();
  FailureOr<RankedTensorType> rhs = getRanked(rhsValue, "rhs", emitError);
  if (failed(rhs))
    return failure();
  // A bf16 rhs is a weight (`--dtype bf16`): rank 2, with an f32 lhs.
  bool bf16Weight = lhs->getElementType().isF32() &&
                    rhs->getElementType().isBF16() && rhs->getRank() == 2;
  if (lhs->getElementType() != rhs->getElementType() && !bf16Weight)
    return emitError() << "operand element types differ: lhs " << str(*lhs)
                       << ", rhs " << str(*rhs)
                       << " (only a rank-2 rhs may be bf16, with an f32 lhs)";
  BroadcastConflict conflict;
  FailureOr<SmallVector<int64_t>> shape =
      broadcastShapes(lhs->getShape(), rhs->getShape(), &conflict);
  if (failed(shape))
    return emitError() << "operand shapes do not broadcast: lhs " << str(*lhs)
                       << " and rhs " << str(*rhs) << " (lhs dim "
                       << conflict.lhsIndex << " is " << conflict.lhsDim
                       << ", rhs dim " << conflict.rhsIndex << " is "
                       << conflict.rhsDim << ")";
  types.push_back(RankedTensorType::get(
      *shape, resultElement ? resultElement : lhs->getElementType()));
  return success();
}

/// Unary ops: the result has the operand's type.
LogicalResult inferSameAsInput(Value input, EmitErrorFn emitError,
                               SmallVectorImpl<Type> &types) {
  FailureOr<RankedTensorType> type = getRanked(input, "input", emitError);
  if (failed(type))
    return failure();
  types.push_back(*type);
  return success();
}

/// Reductions: drop `axis`, or keep it with size 1.
LogicalResult inferReduce(Value inputValue, IntegerAttr axisAttr,
                          BoolAttr keepdimAttr, EmitErrorFn emitError,
                          SmallVectorImpl<Type> &types) {
  FailureOr<RankedTensorType> input = getRanked(inputValue, "input", emitError);
  if (failed(input))
    return failure();
  FailureOr<int64_t> axis = readAxis(axisAttr, *input, "axis", emitError);
  if (failed(axis))
    return failure();
  SmallVector<int64_t> shape(input->getShape());
  if (getBool(keepdimAttr))
    shape[*axis] = 1;
  else
    shape.erase(shape.begin() + *axis);
  types.push_back(RankedTensorType::get(shape, input->getElementType()));
  return success();
}

/// layer_norm/rms_norm: a rank-1 scale or shift as long as the last dim.
LogicalResult checkNormParam(Value paramValue, StringRef role,
                             RankedTensorType input, EmitErrorFn emitError) {
  FailureOr<RankedTensorType> param = getRanked(paramValue, role, emitError);
  if (failed(param))
    return failure();
  if (param->getRank() != 1)
    return emitError() << role << " must have rank 1, got " << str(*param);
  if (param->getElementType() != input.getElementType())
    return emitError() << role << " " << str(*param)
                       << " has another element type than input " << str(input);
  int64_t last = input.getShape().back();
  int64_t length = param->getShape()[0];
  if (!ShapedType::isDynamic(last) && !ShapedType::isDynamic(length) &&
      last != length)
    return emitError() << role << " " << str(*param)
                       << " does not match the last dim of input " << str(input)
                       << " (" << length << " vs " << last << ")";
  return success();
}

/// The normalized input of layer_norm/rms_norm, and its epsilon.
FailureOr<RankedTensorType> getNormInput(Value inputValue, FloatAttr epsilon,
                                         EmitErrorFn emitError) {
  FailureOr<RankedTensorType> input = getRanked(inputValue, "input", emitError);
  if (failed(input))
    return failure();
  if (input->getRank() < 1)
    return emitError() << "input must have rank >= 1 (the last axis is "
                          "normalized), got "
                       << str(*input);
  if (!epsilon)
    return emitError() << "requires attribute 'epsilon'";
  double eps = epsilon.getValueAsDouble();
  if (!std::isfinite(eps) || eps < 0)
    return emitError() << "epsilon must be a finite number >= 0, got " << eps;
  return input;
}

/// The size of one dimension as printed in messages ("?" when dynamic).
std::string dimString(int64_t dim) {
  return ShapedType::isDynamic(dim) ? "?" : std::to_string(dim);
}

} // namespace

//===----------------------------------------------------------------------===//
// Values
//===----------------------------------------------------------------------===//

LogicalResult ConstantOp::inferShape(Adaptor adaptor, EmitErrorFn emitError,
                                     SmallVectorImpl<Type> &types) {
  ElementsAttr value = adaptor.getProperties().value;
  if (!value)
    return emitError() << "requires attribute 'value'";
  auto type = dyn_cast<RankedTensorType>(value.getType());
  Type element = type ? type.getElementType() : Type();
  if (!type || !(element.isF32() || element.isSignlessInteger(32) ||
                 element.isSignlessInteger(64) || element.isSignlessInteger(1)))
    return emitError() << "value must be a ranked tensor of f32, i32, i64 or "
                          "i1, got "
                       << str(value.getType());
  types.push_back(type);
  return success();
}

//===----------------------------------------------------------------------===//
// Elementwise ops
//===----------------------------------------------------------------------===//

#define TFC_BROADCAST_BINARY(OP)                                               \
  LogicalResult OP::inferShape(Adaptor adaptor, EmitErrorFn emitError,         \
                               SmallVectorImpl<Type> &types) {                 \
    return inferBroadcastBinary(adaptor.getLhs(), adaptor.getRhs(),            \
                                /*resultElement=*/Type(), emitError, types);   \
  }
TFC_BROADCAST_BINARY(AddOp)
TFC_BROADCAST_BINARY(SubOp)
TFC_BROADCAST_BINARY(MulOp)
TFC_BROADCAST_BINARY(DivOp)
TFC_BROADCAST_BINARY(PowOp)
TFC_BROADCAST_BINARY(MaximumOp)
TFC_BROADCAST_BINARY(MinimumOp)
TFC_BROADCAST_BINARY(AndOp)
TFC_BROADCAST_BINARY(OrOp)
#undef TFC_BROADCAST_BINARY

LogicalResult CmpOp::inferShape(Adaptor adaptor, EmitErrorFn emitError,
                                SmallVectorImpl<Type> &types) {
  StringAttr predicate = adaptor.getProperties().predicate;
  if (!predicate)
    return emitError() << "requires attribute 'predicate'";
  if (!symbolizeCmpPredicate(predicate.getValue()))
    return emitError() << "predicate must be one of eq, ne, lt, le, gt, ge, "
                          "got \""
                       << predicate.getValue() << "\"";
  Value lhs = adaptor.getLhs();
  Type i1 = lhs ? IntegerType::get(lhs.getContext(), 1) : Type();
  return inferBroadcastBinary(lhs, adaptor.getRhs(), i1, emitError, types);
}

LogicalResult WhereOp::inferShape(Adaptor adaptor, EmitErrorFn emitError,
                                  SmallVectorImpl<Type> &types) {
  FailureOr<RankedTensorType> cond =
      getRanked(adaptor.getCondition(), "condition", emitError);
  if (failed(cond))
    return failure();
  FailureOr<RankedTensorType> onTrue =
      getRanked(adaptor.getOnTrue(), "on_true", emitError);
  if (failed(onTrue))
    return failure();
  FailureOr<RankedTensorType> onFalse =
      getRanked(adaptor.getOnFalse(), "on_false", emitError);
  if (failed(onFalse))
    return failure();
  if (!cond->getElementType().isSignlessInteger(1))
    return emitError() << "condition must be an i1 tensor, got " << str(*cond);
  if (onTrue->getElementType() != onFalse->getElementType())
    return emitError() << "on_true " << str(*onTrue) << " and on_false "
                       << str(*onFalse) << " have different element types";
  FailureOr<SmallVector<int64_t>> shape =
      broadcastShapes(cond->getShape(), onTrue->getShape());
  if (succeeded(shape))
    shape = broadcastShapes(*shape, onFalse->getShape());
  if (failed(shape))
    return emitError() << "operand shapes do not broadcast: condition "
                       << str(*cond) << ", on_true " << str(*onTrue)
                       << ", on_false " << str(*onFalse);
  types.push_back(RankedTensorType::get(*shape, onTrue->getElementType()));
  return success();
}

#define TFC_SAME_AS_INPUT(OP)                                                  \
  LogicalResult OP::inferShape(Adaptor adaptor, EmitErrorFn emitError,         \
                               SmallVectorImpl<Type> &types) {                 \
    return inferSameAsInput(adaptor.getInput(), emitError, types);             \
  }
TFC_SAME_AS_INPUT(NegOp)
TFC_SAME_AS_INPUT(ExpOp)
TFC_SAME_AS_INPUT(LogOp)
TFC_SAME_AS_INPUT(SqrtOp)
TFC_SAME_AS_INPUT(RsqrtOp)
TFC_SAME_AS_INPUT(TanhOp)
TFC_SAME_AS_INPUT(ErfOp)
TFC_SAME_AS_INPUT(ReluOp)
TFC_SAME_AS_INPUT(SiluOp)
TFC_SAME_AS_INPUT(SigmoidOp)
TFC_SAME_AS_INPUT(SinOp)
TFC_SAME_AS_INPUT(CosOp)
TFC_SAME_AS_INPUT(NotOp)
TFC_SAME_AS_INPUT(AbsOp)
#undef TFC_SAME_AS_INPUT

LogicalResult GeluOp::inferShape(Adaptor adaptor, EmitErrorFn emitError,
                                 SmallVectorImpl<Type> &types) {
  // Absent means the default, "none".
  if (StringAttr approximate = adaptor.getProperties().approximate) {
    StringRef value = approximate.getValue();
    if (value != "none" && value != "tanh")
      return emitError() << "approximate must be \"none\" or \"tanh\", got \""
                         << value << "\"";
  }
  return inferSameAsInput(adaptor.getInput(), emitError, types);
}

//===----------------------------------------------------------------------===//
// Linear algebra
//===----------------------------------------------------------------------===//

LogicalResult MatmulOp::inferShape(Adaptor adaptor, EmitErrorFn emitError,
                                   SmallVectorImpl<Type> &types) {
  FailureOr<RankedTensorType> lhs =
      getRanked(adaptor.getLhs(), "lhs", emitError);
  if (failed(lhs))
    return failure();
  FailureOr<RankedTensorType> rhs =
      getRanked(adaptor.getRhs(), "rhs", emitError);
  if (failed(rhs))
    return failure();
  if (lhs->getRank() < 2)
    return emitError() << "lhs must have rank >= 2, got " << str(*lhs);
  if (IntegerAttr packed = adaptor.getProperties().packed_n)
    return inferPackedProduct(*lhs, *rhs, packed.getInt(),
                              getBool(adaptor.getProperties().transpose_b),
                              emitError, types);
  if (rhs->getRank() < 2)
    return emitError() << "rhs must have rank >= 2, got " << str(*rhs);
  // A bf16 rhs is a weight (`--dtype bf16`): rank 2, with an f32 lhs.
  bool bf16Weight = lhs->getElementType().isF32() &&
                    rhs->getElementType().isBF16() && rhs->getRank() == 2;
  if (lhs->getElementType() != rhs->getElementType() && !bf16Weight)
    return emitError() << "operand element types differ: lhs " << str(*lhs)
                       << ", rhs " << str(*rhs)
                       << " (only a rank-2 rhs may be bf16, with an f32 lhs)";

  bool transposeB = getBool(adaptor.getProperties().transpose_b);
  ArrayRef<int64_t> a = lhs->getShape();
  ArrayRef<int64_t> b = rhs->getShape();
  int64_t m = a[a.size() - 2];
  int64_t kLhs = a.back();
  int64_t kRhs = transposeB ? b.back() : b[b.size() - 2];
  int64_t n = transposeB ? b[b.size() - 2] : b.back();
  if (!ShapedType::isDynamic(kLhs) && !ShapedType::isDynamic(kRhs) &&
      kLhs != kRhs)
    return emitError() << "contraction dims differ: lhs " << str(*lhs)
                       << " has K=" << kLhs << ", rhs " << str(*rhs)
                       << " has K=" << kRhs
                       << (transposeB ? " (transpose_b)" : "");

  FailureOr<SmallVector<int64_t>> shape =
      broadcastShapes(a.drop_back(2), b.drop_back(2));
  if (failed(shape))
    return emitError() << "batch dims do not broadcast: lhs " << str(*lhs)
                       << ", rhs " << str(*rhs);
  shape->push_back(m);
  shape->push_back(n);
  types.push_back(RankedTensorType::get(*shape, lhs->getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

LogicalResult PackPanelsOp::inferShape(Adaptor adaptor, EmitErrorFn emitError,
                                       SmallVectorImpl<Type> &types) {
  FailureOr<RankedTensorType> input =
      getRanked(adaptor.getInput(), "input", emitError);
  if (failed(input))
    return failure();
  bool transposeB = getBool(adaptor.getProperties().transpose_b);
  Type element = input->getElementType();
  if (input->getRank() != 2 || !input->hasStaticShape())
    return emitError() << "input must be a static rank-2 weight, got "
                       << str(*input);
  int64_t k = input->getDimSize(transposeB ? 1 : 0);
  int64_t n = input->getDimSize(transposeB ? 0 : 1);
  if (element.isBF16() && k % 2 != 0)
    return emitError() << "a bf16 weight needs an even K (pairs of K), got "
                       << str(*input) << (transposeB ? " (transpose_b)" : "");
  if (k == 0 || n == 0)
    return emitError() << "input must not be empty, got " << str(*input);
  types.push_back(RankedTensorType::get(panelShape(k, n, element), element));
  return success();
}

LogicalResult TransposeOp::inferShape(Adaptor adaptor, EmitErrorFn emitError,
                                      SmallVectorImpl<Type> &types) {
  FailureOr<RankedTensorType> input =
      getRanked(adaptor.getInput(), "input", emitError);
  if (failed(input))
    return failure();
  DenseI64ArrayAttr perm = adaptor.getProperties().perm;
  if (!perm)
    return emitError() << "requires attribute 'perm'";
  int64_t rank = input->getRank();
  if (perm.size() != rank)
    return emitError() << "perm " << perm << " has " << perm.size()
                       << " entries but input " << str(*input) << " has rank "
                       << rank;
  SmallVector<bool> seen(rank, false);
  SmallVector<int64_t> shape;
  for (int64_t p : perm.asArrayRef()) {
    if (p < 0 || p >= rank || seen[p])
      return emitError() << "perm " << perm << " is not a permutation of 0.."
                         << rank - 1 << " (input " << str(*input) << ")";
    seen[p] = true;
    shape.push_back(input->getDimSize(p));
  }
  types.push_back(RankedTensorType::get(shape, input->getElementType()));
  return success();
}

LogicalResult ReshapeOp::inferShape(Adaptor adaptor, EmitErrorFn emitError,
                                    SmallVectorImpl<Type> &types) {
  FailureOr<RankedTensorType> input =
      getRanked(adaptor.getInput(), "input", emitError);
  if (failed(input))
    return failure();
  DenseI64ArrayAttr shapeAttr = adaptor.getProperties().shape;
  if (!shapeAttr)
    return emitError() << "requires attribute 'shape'";

  // Products are checked for overflow: the sizes come from user input.
  auto product = [](ArrayRef<int64_t> dims, int64_t &out) {
    out = 1;
    for (int64_t d : dims)
      if (!ShapedType::isDynamic(d) && d != -1 &&
          llvm::MulOverflow(out, d, out))
        return false;
    return true;
  };

  SmallVector<int64_t> shape;
  for (auto [index, d] : llvm::enumerate(shapeAttr.asArrayRef())) {
    if (d != -1 && d <= 0)
      return emitError() << "shape " << shapeAttr << " has entry " << d
                         << " at index " << index
                         << "; entries are -1 (dynamic) or positive";
    shape.push_back(d == -1 ? kDynamic : d);
  }
  int64_t outDynamic = llvm::count(shapeAttr.asArrayRef(), -1);
  int64_t inDynamic = input->getNumDynamicDims();
  if (outDynamic != inDynamic)
    return emitError() << "shape " << shapeAttr << " has " << outDynamic
                       << " dynamic (-1) entries but input " << str(*input)
                       << " has " << inDynamic
                       << " dynamic dims (they are carried over one to one)";
  int64_t inProduct, outProduct;
  if (!product(input->getShape(), inProduct) ||
      !product(shapeAttr.asArrayRef(), outProduct))
    return emitError() << "static sizes overflow: input " << str(*input)
                       << ", shape " << shapeAttr;
  if (inProduct != outProduct)
    return emitError() << "product of static dims differs: input "
                       << str(*input) << " has " << inProduct << ", shape "
                       << shapeAttr << " has " << outProduct;
  types.push_back(RankedTensorType::get(shape, input->getElementType()));
  return success();
}

LogicalResult SliceOp::inferShape(Adaptor adaptor, EmitErrorFn emitError,
                                  SmallVectorImpl<Type> &types) {
  FailureOr<RankedTensorType> input =
      getRanked(adaptor.getInput(), "input", emitError);
  if (failed(input))
    return failure();
  auto &props = adaptor.getProperties();
  FailureOr<int64_t> axis = readAxis(props.axis, *input, "axis", emitError);
  if (failed(axis))
    return failure();
  FailureOr<int64_t> start = readInt(props.start, "start", emitError);
  if (failed(start))
    return failure();
  FailureOr<int64_t> end = readInt(props.end, "end", emitError);
  if (failed(end))
    return failure();
  int64_t step = 1;
  if (props.step) {
    FailureOr<int64_t> value = readInt(props.step, "step", emitError);
    if (failed(value))
      return failure();
    step = *value;
  }
  if (step < 1)
    return emitError() << "slice step " << step << " must be at least 1";
  int64_t dim = input->getDimSize(*axis);
  if (*start < 0 || *end <= *start)
    return emitError() << "slice [" << *start << ", " << *end << ") of dim "
                       << *axis << " of " << str(*input)
                       << " is empty or negative; need 0 <= start < end";
  if (!ShapedType::isDynamic(dim) && *end > dim)
    return emitError() << "slice [" << *start << ", " << *end
                       << ") is out of bounds for dim " << *axis << " (size "
                       << dim << ") of " << str(*input);
  SmallVector<int64_t> shape(input->getShape());
  shape[*axis] = sliceSize(*start, *end, step);
  types.push_back(RankedTensorType::get(shape, input->getElementType()));
  return success();
}

LogicalResult ConcatOp::inferShape(Adaptor adaptor, EmitErrorFn emitError,
                                   SmallVectorImpl<Type> &types) {
  ValueRange inputs = adaptor.getInputs();
  if (inputs.empty())
    return emitError() << "requires at least one input";
  SmallVector<RankedTensorType> inputTypes;
  for (auto [i, value] : llvm::enumerate(inputs)) {
    FailureOr<RankedTensorType> type =
        getRanked(value, "input #" + std::to_string(i), emitError);
    if (failed(type))
      return failure();
    inputTypes.push_back(*type);
  }
  RankedTensorType first = inputTypes.front();
  FailureOr<int64_t> axis =
      readAxis(adaptor.getProperties().axis, first, "axis", emitError);
  if (failed(axis))
    return failure();

  // Result dims; `source[d]` is the input that fixed a static size, so a
  // conflict can name both shapes.
  SmallVector<int64_t> shape(first.getShape());
  SmallVector<size_t> source(first.getRank(), 0);
  for (size_t i = 1; i < inputTypes.size(); ++i) {
    RankedTensorType type = inputTypes[i];
    if (type.getRank() != first.getRank())
      return emitError() << "input #" << i << " " << str(type) << " has rank "
                         << type.getRank() << " but input #0 " << str(first)
                         << " has rank " << first.getRank();
    if (type.getElementType() != first.getElementType())
      return emitError() << "element types differ: input #0 " << str(first)
                         << ", input #" << i << " " << str(type);
    for (int64_t d = 0; d < type.getRank(); ++d) {
      int64_t size = type.getDimSize(d);
      if (d == *axis) {
        if (ShapedType::isDynamic(shape[d]) || ShapedType::isDynamic(size))
          shape[d] = kDynamic;
        else if (llvm::AddOverflow(shape[d], size, shape[d]))
          return emitError()
                 << "concatenated size overflows along axis " << *axis;
        continue;
      }
      if (ShapedType::isDynamic(size))
        continue;
      if (ShapedType::isDynamic(shape[d])) {
        shape[d] = size;
        source[d] = i;
      } else if (shape[d] != size) {
        return emitError() << "input #" << i << " " << str(type)
                           << " differs from input #" << source[d] << " "
                           << str(inputTypes[source[d]]) << " in dim " << d
                           << " (" << size << " vs " << shape[d]
                           << "); only dim " << *axis << " may differ";
      }
    }
  }
  types.push_back(RankedTensorType::get(shape, first.getElementType()));
  return success();
}

LogicalResult GatherOp::inferShape(Adaptor adaptor, EmitErrorFn emitError,
                                   SmallVectorImpl<Type> &types) {
  FailureOr<RankedTensorType> table =
      getRanked(adaptor.getTable(), "table", emitError);
  if (failed(table))
    return failure();
  FailureOr<RankedTensorType> ids =
      getRanked(adaptor.getIds(), "ids", emitError);
  if (failed(ids))
    return failure();
  if (table->getRank() < 1)
    return emitError() << "table must have rank >= 1, got " << str(*table);
  Type idElement = ids->getElementType();
  if (!idElement.isSignlessInteger(32) && !idElement.isSignlessInteger(64))
    return emitError() << "ids must be an i32 or i64 tensor, got " << str(*ids);
  SmallVector<int64_t> shape(ids->getShape());
  if (IntegerAttr packed = adaptor.getProperties().packed_rows) {
    // The panels of a [V, D] table read with transpose_b: [ceil(V/48), D, 48].
    int64_t rows = packed.getInt();
    Type element = table->getElementType();
    int64_t d = table->getRank() == 3 ? table->getDimSize(1) : -1;
    if (rows <= 0 || !element.isF32() || !table->hasStaticShape() || d <= 0 ||
        llvm::ArrayRef<int64_t>(panelShape(d, rows, element)) !=
            table->getShape())
      return emitError() << "packed_rows = " << rows
                         << " needs the f32 panels of a [" << rows
                         << ", D] table (tfc.pack_panels), got "
                         << str(*table);
    shape.push_back(d);
    types.push_back(RankedTensorType::get(shape, element));
    return success();
  }
  llvm::append_range(shape, table->getShape().drop_front());
  types.push_back(RankedTensorType::get(shape, table->getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// Reductions and normalizations
//===----------------------------------------------------------------------===//

#define TFC_REDUCE(OP)                                                         \
  LogicalResult OP::inferShape(Adaptor adaptor, EmitErrorFn emitError,         \
                               SmallVectorImpl<Type> &types) {                 \
    return inferReduce(adaptor.getInput(), adaptor.getProperties().axis,       \
                       adaptor.getProperties().keepdim, emitError, types);     \
  }
TFC_REDUCE(ReduceSumOp)
TFC_REDUCE(ReduceMeanOp)
TFC_REDUCE(ReduceMaxOp)
#undef TFC_REDUCE

LogicalResult SoftmaxOp::inferShape(Adaptor adaptor, EmitErrorFn emitError,
                                    SmallVectorImpl<Type> &types) {
  FailureOr<RankedTensorType> input =
      getRanked(adaptor.getInput(), "input", emitError);
  if (failed(input) ||
      failed(readAxis(adaptor.getProperties().axis, *input, "axis", emitError)))
    return failure();
  types.push_back(*input);
  return success();
}

LogicalResult LayerNormOp::inferShape(Adaptor adaptor, EmitErrorFn emitError,
                                      SmallVectorImpl<Type> &types) {
  FailureOr<RankedTensorType> input = getNormInput(
      adaptor.getInput(), adaptor.getProperties().epsilon, emitError);
  if (failed(input) ||
      failed(checkNormParam(adaptor.getGamma(), "gamma", *input, emitError)) ||
      failed(checkNormParam(adaptor.getBeta(), "beta", *input, emitError)))
    return failure();
  types.push_back(*input);
  return success();
}

LogicalResult RmsNormOp::inferShape(Adaptor adaptor, EmitErrorFn emitError,
                                    SmallVectorImpl<Type> &types) {
  FailureOr<RankedTensorType> input = getNormInput(
      adaptor.getInput(), adaptor.getProperties().epsilon, emitError);
  if (failed(input) ||
      failed(checkNormParam(adaptor.getGamma(), "gamma", *input, emitError)))
    return failure();
  types.push_back(*input);
  return success();
}

//===----------------------------------------------------------------------===//
// Index generators
//===----------------------------------------------------------------------===//

LogicalResult PositionsOp::inferShape(Adaptor adaptor, EmitErrorFn emitError,
                                      SmallVectorImpl<Type> &types) {
  // One optional operand: anything beyond two operands would be misread.
  if (adaptor.getOperands().size() > 2)
    return emitError() << "takes one or two operands";
  FailureOr<RankedTensorType> ref =
      getRanked(adaptor.getRef(), "ref", emitError);
  if (failed(ref))
    return failure();
  auto &props = adaptor.getProperties();
  FailureOr<int64_t> axis = readAxis(props.axis, *ref, "axis", emitError);
  if (failed(axis))
    return failure();
  Value offsetRef = adaptor.getOffsetRef();
  if (offsetRef && !props.offset_axis)
    return emitError() << "has an offset_ref operand but no 'offset_axis'";
  if (!offsetRef && props.offset_axis)
    return emitError() << "has 'offset_axis' but no offset_ref operand";
  if (offsetRef) {
    FailureOr<RankedTensorType> offsetType =
        getRanked(offsetRef, "offset_ref", emitError);
    if (failed(offsetType) || failed(readAxis(props.offset_axis, *offsetType,
                                              "offset_axis", emitError)))
      return failure();
  }
  types.push_back(RankedTensorType::get(
      {ref->getDimSize(*axis)}, IntegerType::get(ref->getContext(), 32)));
  return success();
}

LogicalResult CausalMaskOp::inferShape(Adaptor adaptor, EmitErrorFn emitError,
                                       SmallVectorImpl<Type> &types) {
  FailureOr<RankedTensorType> q =
      getRanked(adaptor.getQRef(), "q_ref", emitError);
  if (failed(q))
    return failure();
  FailureOr<RankedTensorType> k =
      getRanked(adaptor.getKRef(), "k_ref", emitError);
  if (failed(k))
    return failure();
  auto &props = adaptor.getProperties();
  FailureOr<int64_t> qAxis = readAxis(props.q_axis, *q, "q_axis", emitError);
  if (failed(qAxis))
    return failure();
  FailureOr<int64_t> kAxis = readAxis(props.k_axis, *k, "k_axis", emitError);
  if (failed(kAxis))
    return failure();
  int64_t qLen = q->getDimSize(*qAxis);
  int64_t kLen = k->getDimSize(*kAxis);
  // With both lengths static, the queries must be a suffix of the keys.
  if (!ShapedType::isDynamic(qLen) && !ShapedType::isDynamic(kLen) &&
      qLen > kLen)
    return emitError() << "has more queries (" << dimString(qLen) << ", dim "
                       << *qAxis << " of " << str(*q) << ") than keys ("
                       << dimString(kLen) << ", dim " << *kAxis << " of "
                       << str(*k) << ")";
  types.push_back(RankedTensorType::get({qLen, kLen},
                                        IntegerType::get(q->getContext(), 1)));
  return success();
}

//===----------------------------------------------------------------------===//
// Index ops: argmax, topk, cumsum, arange
//===----------------------------------------------------------------------===//

LogicalResult ArgmaxOp::inferShape(Adaptor adaptor, EmitErrorFn emitError,
                                   SmallVectorImpl<Type> &types) {
  if (failed(inferReduce(adaptor.getInput(), adaptor.getProperties().axis,
                         adaptor.getProperties().keepdim, emitError, types)))
    return failure();
  auto reduced = cast<RankedTensorType>(types.back());
  types.back() = RankedTensorType::get(
      reduced.getShape(), IntegerType::get(reduced.getContext(), 32));
  return success();
}

LogicalResult TopkOp::inferShape(Adaptor adaptor, EmitErrorFn emitError,
                                 SmallVectorImpl<Type> &types) {
  FailureOr<RankedTensorType> input =
      getRanked(adaptor.getInput(), "input", emitError);
  if (failed(input))
    return failure();
  FailureOr<int64_t> k = readInt(adaptor.getProperties().k, "k", emitError);
  if (failed(k))
    return failure();
  if (input->getRank() == 0)
    return emitError() << "input must have rank >= 1, got " << str(*input);
  int64_t last = input->getShape().back();
  if (*k < 1 || (!ShapedType::isDynamic(last) && *k > last))
    return emitError() << "k = " << *k << " must be in 1.." << dimString(last)
                       << " (the last dim of " << str(*input) << ")";
  SmallVector<int64_t> shape(input->getShape());
  shape.back() = *k;
  types.push_back(RankedTensorType::get(shape, input->getElementType()));
  types.push_back(
      RankedTensorType::get(shape, IntegerType::get(input->getContext(), 32)));
  return success();
}

LogicalResult CumsumOp::inferShape(Adaptor adaptor, EmitErrorFn emitError,
                                   SmallVectorImpl<Type> &types) {
  FailureOr<RankedTensorType> input =
      getRanked(adaptor.getInput(), "input", emitError);
  if (failed(input) ||
      failed(readAxis(adaptor.getProperties().axis, *input, "axis", emitError)))
    return failure();
  types.push_back(*input);
  return success();
}

LogicalResult ArangeOp::inferShape(Adaptor adaptor, EmitErrorFn emitError,
                                   SmallVectorImpl<Type> &types) {
  if (adaptor.getOperands().size() > 1)
    return emitError() << "takes at most one operand";
  auto &props = adaptor.getProperties();
  Value ref = adaptor.getRef();
  if (ref && (!props.axis || props.length))
    return emitError() << "with a ref operand takes 'axis' and no 'length'";
  if (!ref && (props.axis || !props.length))
    return emitError() << "without a ref operand takes 'length' and no 'axis'";
  int64_t length = ShapedType::kDynamic;
  MLIRContext *context = nullptr;
  if (ref) {
    FailureOr<RankedTensorType> refType = getRanked(ref, "ref", emitError);
    if (failed(refType))
      return failure();
    FailureOr<int64_t> axis = readAxis(props.axis, *refType, "axis", emitError);
    if (failed(axis))
      return failure();
    length = refType->getDimSize(*axis);
    context = refType->getContext();
  } else {
    FailureOr<int64_t> n = readInt(props.length, "length", emitError);
    if (failed(n))
      return failure();
    if (*n < 1 || *n > INT32_MAX)
      return emitError() << "length must be in 1..2^31-1, got " << *n;
    length = *n;
    context = props.length.getContext();
  }
  // The last value must be an i32 where the length is known.
  int64_t start = props.start ? props.start.getInt() : 0;
  int64_t step = props.step ? props.step.getInt() : 1;
  auto fitsI32 = [](int64_t v) { return v >= INT32_MIN && v <= INT32_MAX; };
  if (!fitsI32(start) || !fitsI32(step) ||
      (!ShapedType::isDynamic(length) && !fitsI32(start + step * (length - 1))))
    return emitError() << "start " << start << " and step " << step
                       << " give values outside i32";
  types.push_back(
      RankedTensorType::get({length}, IntegerType::get(context, 32)));
  return success();
}

//===----------------------------------------------------------------------===//
// Fused ops (TfcFusedOps.td)
//===----------------------------------------------------------------------===//

namespace {

/// Merges two sizes of the same dimension: equal, or one dynamic (the
/// static one wins). Fails when both are static and differ.
bool mergeDim(int64_t a, int64_t b, int64_t &out) {
  if (ShapedType::isDynamic(a)) {
    out = b;
    return true;
  }
  if (ShapedType::isDynamic(b) || a == b) {
    out = a;
    return true;
  }
  return false;
}

} // namespace

LogicalResult FusedAttentionOp::inferShape(Adaptor adaptor,
                                           EmitErrorFn emitError,
                                           SmallVectorImpl<Type> &types) {
  // The adaptor finds the operands through the segment sizes: check them
  // against the operand list before reading any operand.
  ArrayRef<int32_t> segments = adaptor.getProperties().operandSegmentSizes;
  size_t numOperands = adaptor.getOperands().size();
  if (segments.size() != 5 || segments[0] != 1 || segments[1] != 1 ||
      segments[2] != 1 || segments[3] < 0 || segments[3] > 1 ||
      segments[4] < 0 || segments[4] > 1 ||
      static_cast<size_t>(3 + segments[3] + segments[4]) != numOperands)
    return emitError() << "operand segments must be q, k, v, then an "
                          "optional keep and an optional bias ("
                       << numOperands << " operands)";
  FailureOr<RankedTensorType> q = getRanked(adaptor.getQ(), "q", emitError);
  if (failed(q))
    return failure();
  FailureOr<RankedTensorType> k = getRanked(adaptor.getK(), "k", emitError);
  if (failed(k))
    return failure();
  FailureOr<RankedTensorType> v = getRanked(adaptor.getV(), "v", emitError);
  if (failed(v))
    return failure();
  for (auto [role, type] : {std::pair<StringRef, RankedTensorType>{"q", *q},
                            {"k", *k},
                            {"v", *v}}) {
    if (type.getRank() != 4)
      return emitError() << role << " must have rank 4 ([batch, heads, len, "
                                    "dim]), got "
                         << str(type);
    if (!type.getElementType().isF32())
      return emitError() << role << " must be an f32 tensor, got "
                         << str(type);
  }
  FloatAttr scale = adaptor.getProperties().scale;
  if (!scale)
    return emitError() << "requires attribute 'scale'";
  if (!std::isfinite(scale.getValueAsDouble()))
    return emitError() << "scale must be finite, got "
                       << scale.getValueAsDouble();
  if (FloatAttr fill = adaptor.getProperties().fill;
      fill && std::isnan(fill.getValueAsDouble()))
    return emitError() << "fill must not be NaN";

  ArrayRef<int64_t> qs = q->getShape(), ks = k->getShape(), vs = v->getShape();
  int64_t batch, heads, batchKV, headsKV, sk, d;
  if (!mergeDim(ks[0], vs[0], batchKV) || !mergeDim(ks[1], vs[1], headsKV) ||
      !mergeDim(ks[2], vs[2], sk))
    return emitError() << "k " << str(*k) << " and v " << str(*v)
                       << " must agree in batch, heads and key length";
  if (!mergeDim(qs[0], batchKV, batch) || !mergeDim(qs[1], headsKV, heads))
    return emitError() << "q " << str(*q) << " must agree with k " << str(*k)
                       << " and v " << str(*v) << " in batch and heads";
  if (!mergeDim(qs[3], ks[3], d))
    return emitError() << "q " << str(*q) << " and k " << str(*k)
                       << " have different head dims (" << dimString(qs[3])
                       << " vs " << dimString(ks[3]) << ")";
  (void)d;
  int64_t sq = qs[2];
  if (!ShapedType::isDynamic(sq) && !ShapedType::isDynamic(sk) && sq > sk &&
      getBool(adaptor.getProperties().causal))
    return emitError() << "is causal but has more queries (" << sq
                       << ") than keys (" << sk << ")";

  SmallVector<int64_t> scores = {batch, heads, sq, sk};
  auto checkMask = [&](Value value, StringRef role,
                       bool wantBool) -> LogicalResult {
    if (!value)
      return success();
    FailureOr<RankedTensorType> type = getRanked(value, role, emitError);
    if (failed(type))
      return failure();
    if (wantBool ? !type->getElementType().isSignlessInteger(1)
                 : !type->getElementType().isF32())
      return emitError() << role << " must be " << (wantBool ? "an i1" : "an f32")
                         << " tensor, got " << str(*type);
    FailureOr<SmallVector<int64_t>> shape =
        broadcastShapes(type->getShape(), scores);
    // The mask must not grow the scores: it broadcasts *to* them.
    if (failed(shape) || shape->size() != 4 ||
        llvm::any_of(llvm::zip(*shape, scores), [](auto pair) {
          auto [got, want] = pair;
          return !ShapedType::isDynamic(want) && got != want;
        }))
      return emitError() << role << " " << str(*type)
                         << " does not broadcast to the scores [batch, heads, "
                            "q, k] = ["
                         << dimString(batch) << ", " << dimString(heads)
                         << ", " << dimString(sq) << ", " << dimString(sk)
                         << "]";
    return success();
  };
  if (failed(checkMask(adaptor.getKeep(), "keep", /*wantBool=*/true)) ||
      failed(checkMask(adaptor.getBias(), "bias", /*wantBool=*/false)))
    return failure();

  types.push_back(RankedTensorType::get({batch, heads, sq, vs[3]},
                                        q->getElementType()));
  return success();
}

LogicalResult AddLayerNormOp::inferShape(Adaptor adaptor,
                                         EmitErrorFn emitError,
                                         SmallVectorImpl<Type> &types) {
  SmallVector<Type, 1> sum;
  if (failed(inferBroadcastBinary(adaptor.getA(), adaptor.getB(),
                                  /*resultElement=*/Type(), emitError, sum)))
    return failure();
  auto sumType = cast<RankedTensorType>(sum.front());
  if (!sumType.getElementType().isF32())
    return emitError() << "a and b must be f32 tensors, got "
                       << str(adaptor.getA().getType()) << " and "
                       << str(adaptor.getB().getType());
  if (sumType.getRank() < 1)
    return emitError() << "the sum must have rank >= 1 (the last axis is "
                          "normalized), got "
                       << str(sumType);
  FloatAttr epsilon = adaptor.getProperties().epsilon;
  if (!epsilon)
    return emitError() << "requires attribute 'epsilon'";
  double eps = epsilon.getValueAsDouble();
  if (!std::isfinite(eps) || eps < 0)
    return emitError() << "epsilon must be a finite number >= 0, got " << eps;
  if (failed(checkNormParam(adaptor.getGamma(), "gamma", sumType, emitError)) ||
      failed(checkNormParam(adaptor.getBeta(), "beta", sumType, emitError)))
    return failure();
  types.push_back(sumType);
  if (adaptor.getProperties().with_sum)
    types.push_back(sumType);
  return success();
}

LogicalResult LinearOp::inferShape(Adaptor adaptor, EmitErrorFn emitError,
                                   SmallVectorImpl<Type> &types) {
  if (adaptor.getOperands().size() > 3)
    return emitError() << "takes two or three operands (x, w[, bias])";
  FailureOr<RankedTensorType> x = getRanked(adaptor.getX(), "x", emitError);
  if (failed(x))
    return failure();
  FailureOr<RankedTensorType> w = getRanked(adaptor.getW(), "w", emitError);
  if (failed(w))
    return failure();
  if (x->getRank() < 2)
    return emitError() << "x must have rank >= 2, got " << str(*x);
  if (IntegerAttr packed = adaptor.getProperties().packed_n) {
    if (failed(inferPackedProduct(*x, *w, packed.getInt(),
                                  getBool(adaptor.getProperties().transpose_b),
                                  emitError, types)))
      return failure();
    if (Value biasValue = adaptor.getBias()) {
      auto bias = dyn_cast<RankedTensorType>(biasValue.getType());
      if (!bias || bias.getRank() != 1 || !bias.getElementType().isF32() ||
          (!bias.isDynamicDim(0) && bias.getDimSize(0) != packed.getInt()))
        return emitError() << "bias must be a rank-1 f32 tensor of N="
                           << packed.getInt() << " elements";
    }
    return success();
  }
  if (w->getRank() != 2)
    return emitError() << "w must have rank 2, got " << str(*w);
  if (!x->getElementType().isF32() ||
      !(w->getElementType().isF32() || w->getElementType().isBF16()))
    return emitError() << "x must be an f32 tensor and w an f32 or bf16 one, "
                          "got "
                       << str(*x) << " and " << str(*w);
  if (StringAttr activation = adaptor.getProperties().activation) {
    StringRef act = activation.getValue();
    if (act != "none" && act != "relu" && act != "gelu" &&
        act != "gelu_tanh" && act != "silu")
      return emitError() << "activation must be one of \"none\", \"relu\", "
                            "\"gelu\", \"gelu_tanh\", \"silu\", got \""
                         << act << "\"";
  }
  bool transposeB = getBool(adaptor.getProperties().transpose_b);
  int64_t kX = x->getShape().back();
  int64_t kW = w->getDimSize(transposeB ? 1 : 0);
  int64_t n = w->getDimSize(transposeB ? 0 : 1);
  if (!ShapedType::isDynamic(kX) && !ShapedType::isDynamic(kW) && kX != kW)
    return emitError() << "contraction dims differ: x " << str(*x)
                       << " has K=" << kX << ", w " << str(*w) << " has K="
                       << kW << (transposeB ? " (transpose_b)" : "");
  if (Value biasValue = adaptor.getBias()) {
    FailureOr<RankedTensorType> bias = getRanked(biasValue, "bias", emitError);
    if (failed(bias))
      return failure();
    if (bias->getRank() != 1 || !bias->getElementType().isF32())
      return emitError() << "bias must be a rank-1 f32 tensor, got "
                         << str(*bias);
    int64_t length = bias->getDimSize(0);
    if (!ShapedType::isDynamic(length) && !ShapedType::isDynamic(n) &&
        length != n)
      return emitError() << "bias " << str(*bias) << " does not match N=" << n
                         << " of w " << str(*w)
                         << (transposeB ? " (transpose_b)" : "");
  }
  SmallVector<int64_t> shape(x->getShape().drop_back());
  shape.push_back(n);
  types.push_back(RankedTensorType::get(shape, x->getElementType()));
  return success();
}

SmallVector<int64_t> mlir::tfc::panelShape(int64_t k, int64_t n,
                                           Type elementType) {
  int64_t panels = (n + kPanelColumns - 1) / kPanelColumns;
  if (elementType.isBF16())
    return {panels, k / 2, kPanelColumns, 2};
  return {panels, k, kPanelColumns};
}

std::optional<ProductWeight> mlir::tfc::productWeight(Operation *op) {
  if (auto matmul = dyn_cast<MatmulOp>(op))
    return ProductWeight{&matmul.getRhsMutable(), matmul.getTransposeB(),
                         matmul.getPackedN().has_value()};
  if (auto linear = dyn_cast<LinearOp>(op))
    return ProductWeight{&linear.getWMutable(), linear.getTransposeB(),
                         linear.getPackedN().has_value()};
  return std::nullopt;
}

void mlir::tfc::setProductWeight(Operation *op, Value w) {
  std::optional<uint64_t> packedN;
  if (auto pack = w.getDefiningOp<PackPanelsOp>()) {
    auto in = cast<RankedTensorType>(pack.getInput().getType());
    packedN = in.getDimSize(pack.getTransposeB() ? 0 : 1);
  }
  if (auto matmul = dyn_cast<MatmulOp>(op)) {
    matmul.getRhsMutable().assign(w);
    matmul.setTransposeB(false);
    matmul.setPackedN(packedN);
  } else if (auto linear = dyn_cast<LinearOp>(op)) {
    linear.getWMutable().assign(w);
    linear.setTransposeB(false);
    linear.setPackedN(packedN);
  }
}
