//===- CacheOps.cpp - shape functions of the key/value cache ops ----------===//
//
// `inferShape` of tfc.kv_append and tfc.kv_stack (ir/TfcCacheOps.td). Like
// the other shape functions (ShapeInference.cpp) they run before the
// verifier, so they check everything they read. tfc.kv_stack also checks the
// chain that makes in-place growth valid: its operands are the appends of
// layers 0, 1, ... to its own cache.
//
//===----------------------------------------------------------------------===//

#include "ir/TfcOps.h"

using namespace mlir;
using namespace mlir::tfc;

namespace {

constexpr int64_t kDynamic = ShapedType::kDynamic;
using mlir::tfc::detail::getRanked;
using mlir::tfc::detail::readInt;
using mlir::tfc::detail::str;

/// Checks that `axis` names the positions of a cache: not the layer axis 0.
LogicalResult checkCacheAxis(int64_t axis, RankedTensorType cache,
                             EmitErrorFn emitError) {
  if (cache.getRank() < 2)
    return emitError() << "cache " << str(cache)
                       << " must have rank >= 2 ([layers, ...])";
  if (axis < 1 || axis >= cache.getRank())
    return emitError() << "axis " << axis << " must be in [1, "
                       << cache.getRank() << ") for cache " << str(cache);
  return success();
}

/// `a + b` for dims that may be dynamic.
int64_t addDims(int64_t a, int64_t b) {
  return ShapedType::isDynamic(a) || ShapedType::isDynamic(b) ? kDynamic
                                                               : a + b;
}

} // namespace

LogicalResult KvAppendOp::inferShape(Adaptor adaptor, EmitErrorFn emitError,
                                     SmallVectorImpl<Type> &types) {
  FailureOr<RankedTensorType> cache =
      getRanked(adaptor.getCache(), "cache", emitError);
  FailureOr<RankedTensorType> fresh =
      getRanked(adaptor.getNewPositions(), "new_positions", emitError);
  if (failed(cache) || failed(fresh))
    return failure();
  FailureOr<int64_t> axis =
      readInt(adaptor.getProperties().axis, "axis", emitError);
  FailureOr<int64_t> layer =
      readInt(adaptor.getProperties().layer, "layer", emitError);
  if (failed(axis) || failed(layer) ||
      failed(checkCacheAxis(*axis, *cache, emitError)))
    return failure();
  int64_t layers = cache->getDimSize(0);
  if (*layer < 0 || (!ShapedType::isDynamic(layers) && *layer >= layers))
    return emitError() << "layer " << *layer << " is outside cache "
                       << str(*cache);
  if (fresh->getRank() != cache->getRank() - 1 ||
      fresh->getElementType() != cache->getElementType())
    return emitError() << "new positions " << str(*fresh)
                       << " must be one layer of cache " << str(*cache);
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < fresh->getRank(); ++d) {
    int64_t c = cache->getDimSize(d + 1), n = fresh->getDimSize(d);
    if (d + 1 == *axis) {
      shape.push_back(addDims(c, n));
      continue;
    }
    if (!ShapedType::isDynamic(c) && !ShapedType::isDynamic(n) && c != n)
      return emitError() << "new positions " << str(*fresh)
                         << " differ from a layer of cache " << str(*cache)
                         << " in dim " << d;
    shape.push_back(ShapedType::isDynamic(c) ? n : c);
  }
  types.push_back(RankedTensorType::get(shape, cache->getElementType()));
  return success();
}

LogicalResult KvStackOp::inferShape(Adaptor adaptor, EmitErrorFn emitError,
                                    SmallVectorImpl<Type> &types) {
  FailureOr<RankedTensorType> cache =
      getRanked(adaptor.getCache(), "cache", emitError);
  if (failed(cache))
    return failure();
  FailureOr<int64_t> axis =
      readInt(adaptor.getProperties().axis, "axis", emitError);
  if (failed(axis) || failed(checkCacheAxis(*axis, *cache, emitError)))
    return failure();
  int64_t layers = cache->getDimSize(0);
  ValueRange appended = adaptor.getAppended();
  if (ShapedType::isDynamic(layers) ||
      static_cast<int64_t>(appended.size()) != layers)
    return emitError() << "needs one appended operand per layer of cache "
                       << str(*cache) << ", got " << appended.size();
  // The chain: operand i is layer i appended to this cache on this axis.
  Type result;
  for (auto [i, value] : llvm::enumerate(appended)) {
    auto append = value.getDefiningOp<KvAppendOp>();
    if (!append || append.getCache() != adaptor.getCache() ||
        append.getLayer() != static_cast<uint64_t>(i) ||
        append.getAxis() != static_cast<uint64_t>(*axis))
      return emitError() << "operand #" << i + 1
                         << " must be the tfc.kv_append of layer " << i
                         << " to the same cache on axis " << *axis;
    if (result && value.getType() != result)
      return emitError() << "appended layers differ in type";
    result = value.getType();
  }
  auto layer = cast<RankedTensorType>(result);
  SmallVector<int64_t> shape = {layers};
  shape.append(layer.getShape().begin(), layer.getShape().end());
  types.push_back(RankedTensorType::get(shape, cache->getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// Symbolic shapes (the planner's rule; SymbolicShapeOpInterface)
//===----------------------------------------------------------------------===//

LogicalResult KvAppendOp::inferSymbolicShapes(SymbolicShapeContext &ctx,
                                              std::vector<SymShape> &results) {
  const SymShape &cache = ctx.operandShape(0);
  const SymShape &fresh = ctx.operandShape(1);
  int64_t axis = getAxis();
  if (axis < 1 || axis >= static_cast<int64_t>(cache.size()) ||
      fresh.size() + 1 != cache.size())
    return ctx.fail("kv_append: the new positions do not match the cache's "
                    "rank or axis");
  SymShape shape(cache.begin() + 1, cache.end());
  shape[axis - 1] = ::tfc::rt::add(cache[axis], fresh[axis - 1]);
  results.push_back(std::move(shape));
  return success();
}

LogicalResult KvStackOp::inferSymbolicShapes(SymbolicShapeContext &ctx,
                                             std::vector<SymShape> &results) {
  const SymShape &cache = ctx.operandShape(0);
  if (cache.empty() || getAppended().empty())
    return ctx.fail("kv_stack: needs a cache and one append per layer");
  SymShape shape = ctx.operandShape(1);
  shape.insert(shape.begin(), cache[0]);
  results.push_back(std::move(shape));
  return success();
}
