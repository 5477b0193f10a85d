//===- DimExpr.h - Symbolic dimension sizes ---------------------*- C++ -*-===//
//
// A dimension size as an affine expression over an entry's symbolic
// dimensions (batch, seq, past, ...): `constant + sum(coeff * symbol)`. The
// planner computes one per dimension of every value (the ops' symbolic shape
// rules, ir/OpFacts.h), the plan stores them, and the executor evaluates them
// once the input tensors give the symbols' values.
//
// Header-only and dependency-free: the dialect's shape rules use it too.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_RUNTIME_DIMEXPR_H
#define TFC_RUNTIME_DIMEXPR_H

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

namespace tfc::rt {

/// A dimension size: constant + sum(coeff * symbol).
struct DimExpr {
  int64_t constant = 0;
  std::vector<std::pair<int32_t, int64_t>> terms; // (symbol index, coeff)

  static DimExpr of(int64_t value) { return DimExpr{value, {}}; }
  bool isStatic() const { return terms.empty(); }
  bool isOne() const { return isStatic() && constant == 1; }
  bool operator==(const DimExpr &other) const {
    return constant == other.constant && terms == other.terms;
  }
  bool operator!=(const DimExpr &other) const { return !(*this == other); }
};

/// The canonical form of `d`: terms sorted by symbol, equal symbols merged,
/// no zero coefficients; so that operator== is semantic equality.
inline DimExpr canonical(DimExpr d) {
  std::sort(d.terms.begin(), d.terms.end());
  std::vector<std::pair<int32_t, int64_t>> merged;
  for (const auto &t : d.terms) {
    if (!merged.empty() && merged.back().first == t.first)
      merged.back().second += t.second;
    else
      merged.push_back(t);
  }
  merged.erase(std::remove_if(merged.begin(), merged.end(),
                              [](const auto &t) { return t.second == 0; }),
               merged.end());
  d.terms = std::move(merged);
  return d;
}

/// `a + bScale * b`, canonical.
inline DimExpr add(const DimExpr &a, const DimExpr &b, int64_t bScale = 1) {
  DimExpr r = a;
  r.constant += bScale * b.constant;
  for (const auto &t : b.terms)
    r.terms.emplace_back(t.first, bScale * t.second);
  return canonical(r);
}

} // namespace tfc::rt

#endif // TFC_RUNTIME_DIMEXPR_H
