//===- Broadcast.h - numpy broadcasting of shapes --------------*- C++ -*-===//
//
// The one broadcasting rule of the dialect, used by every op whose operands
// broadcast (elementwise ops, tfc.where, matmul batch dims) and available to
// the frontend for its own diagnostics.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_IR_BROADCAST_H
#define TFC_IR_BROADCAST_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>

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

} // namespace mlir::tfc

#endif // TFC_IR_BROADCAST_H
