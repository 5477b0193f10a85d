//===- Broadcast.cpp - numpy broadcasting of static/dynamic shapes --------===//

#include "ir/Broadcast.h"

#include "mlir/IR/BuiltinTypeInterfaces.h"

#include <algorithm>

namespace mlir::tfc {

FailureOr<SmallVector<int64_t>> broadcastShapes(ArrayRef<int64_t> lhs,
                                                ArrayRef<int64_t> rhs,
                                                BroadcastConflict *conflict) {
  ArrayRef<int64_t> shapes[] = {lhs, rhs};
  // `out` holds lhs's dim (or 1 where lhs has none), `dim` rhs's.
  return broadcastDims<int64_t>(
      shapes, 1,
      [&](int64_t out, int64_t dim,
          size_t fromRight) -> std::optional<int64_t> {
        // `?` with a static n > 1: broadcasting is only legal if `?` is n or
        // 1 at run time, and the result is n either way.
        if (ShapedType::isDynamic(out))
          return dim;
        if (ShapedType::isDynamic(dim))
          return out;
        if (conflict) {
          conflict->lhsIndex =
              static_cast<unsigned>(lhs.size() - 1 - fromRight);
          conflict->rhsIndex =
              static_cast<unsigned>(rhs.size() - 1 - fromRight);
          conflict->lhsDim = out;
          conflict->rhsDim = dim;
        }
        return std::nullopt;
      });
}

} // namespace mlir::tfc
