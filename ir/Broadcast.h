//===- Broadcast.h - numpy broadcasting of shapes --------------*- C++ -*-===//
//
// The one broadcasting rule of the dialect, used by every op whose operands
// broadcast (elementwise ops, tfc.where, matmul batch dims). broadcastDims is
// its walk for any kind of dimension, header-only: the type inference here
// (static sizes and `?`), the frontend (its symbolic dims, for diagnostics)
// and the planner (affine dims, with the run-time checks it implies) use it,
// each deciding only the pairs of dims that differ.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_IR_BROADCAST_H
#define TFC_IR_BROADCAST_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <algorithm>
#include <cstdint>
#include <optional>

namespace mlir::tfc {

/// The first pair of dimensions that does not broadcast. Indices count from
/// the left of each shape.
struct BroadcastConflict {
  unsigned lhsIndex = 0;
  unsigned rhsIndex = 0;
  int64_t lhsDim = 0;
  int64_t rhsDim = 0;
};

/// The shape of the result of broadcasting `lhs` with `rhs`
/// (ShapedType::kDynamic marks a dynamic dimension). Shapes are aligned on
/// the right; missing leading dimensions count as 1. Per pair:
///   equal            -> that dim
///   1 and d          -> d         (also for d dynamic)
///   ? and n (n > 1)  -> n         (the dynamic dim must be n at run time)
///   ? and ?          -> ?
///   n and m (n != m, neither 1) -> failure; `conflict` (if given) says where.
FailureOr<SmallVector<int64_t>>
broadcastShapes(ArrayRef<int64_t> lhs, ArrayRef<int64_t> rhs,
                BroadcastConflict *conflict = nullptr);

/// numpy broadcasting of `shapes` over any dimension type `Dim` (with ==):
/// shapes are aligned on the right and missing leading dimensions count as
/// `one`. Per result dimension (`fromRight` counts from the last one, 0
/// first), the shapes' dims are taken in order into `out`, which starts as
/// `one`: a dim that is `one` or equal to `out` leaves it, an `out` that is
/// `one` becomes the dim, and any other pair is decided by
/// `resolve(out, dim, fromRight)`, which returns the new `out` or nullopt to
/// fail (and may record why).
template <typename Dim, typename Resolve>
FailureOr<SmallVector<Dim>> broadcastDims(ArrayRef<ArrayRef<Dim>> shapes,
                                          const Dim &one, Resolve resolve) {
  size_t rank = 0;
  for (ArrayRef<Dim> shape : shapes)
    rank = std::max(rank, shape.size());
  SmallVector<Dim> result(rank, one);
  for (size_t fromRight = 0; fromRight < rank; ++fromRight) {
    Dim &out = result[rank - 1 - fromRight];
    for (ArrayRef<Dim> shape : shapes) {
      if (fromRight >= shape.size())
        continue;
      const Dim &dim = shape[shape.size() - 1 - fromRight];
      if (dim == one || dim == out)
        continue;
      if (out == one) {
        out = dim;
        continue;
      }
      std::optional<Dim> resolved = resolve(out, dim, fromRight);
      if (!resolved)
        return failure();
      out = *resolved;
    }
  }
  return result;
}

} // namespace mlir::tfc

#endif // TFC_IR_BROADCAST_H
