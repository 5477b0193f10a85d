//===- Broadcast.cpp - numpy broadcasting of static/dynamic shapes --------===//

#include "ir/Broadcast.h"

#include "mlir/IR/BuiltinTypeInterfaces.h"

#include <algorithm>

namespace mlir::tfc {

FailureOr<SmallVector<int64_t>> broadcastShapes(ArrayRef<int64_t> lhs,
                                                ArrayRef<int64_t> rhs,
                                                BroadcastConflict *conflict) {
  size_t rank = std::max(lhs.size(), rhs.size());
  SmallVector<int64_t> result(rank);
  // Walk from the right; `i` counts dimensions from the last one.
  for (size_t i = 0; i < rank; ++i) {
    int64_t l = i < lhs.size() ? lhs[lhs.size() - 1 - i] : 1;
    int64_t r = i < rhs.size() ? rhs[rhs.size() - 1 - i] : 1;
    int64_t out;
    if (l == r || r == 1)
      out = l;
    else if (l == 1)
      out = r;
    else if (ShapedType::isDynamic(l))
      // `?` with a static n > 1: broadcasting is only legal if `?` is n or 1
      // at run time, and the result is n either way.
      out = r;
    else if (ShapedType::isDynamic(r))
      out = l;
    else {
      if (conflict) {
        conflict->lhsIndex = static_cast<unsigned>(lhs.size() - 1 - i);
        conflict->rhsIndex = static_cast<unsigned>(rhs.size() - 1 - i);
        conflict->lhsDim = l;
        conflict->rhsDim = r;
      }
      return failure();
    }
    result[rank - 1 - i] = out;
  }
  return result;
}

} // namespace mlir::tfc
