//===- KernelSignature.cpp - which ops share a kernel ---------------------===//

#include "plan/KernelSignature.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/raw_ostream.h"

namespace tfc {

/// Attributes whose value is the op's default: omitted from signatures so
/// that `{transpose_b = false}` and no attribute share a kernel.
static bool isDefaultAttr(llvm::StringRef name, mlir::Attribute attr) {
  if (name == "transpose_b" || name == "keepdim")
    if (auto b = llvm::dyn_cast<mlir::BoolAttr>(attr))
      return !b.getValue();
  if (name == "approximate" || name == "activation")
    if (auto s = llvm::dyn_cast<mlir::StringAttr>(attr))
      return s.getValue() == "none";
  if (name == "causal")
    if (auto b = llvm::dyn_cast<mlir::BoolAttr>(attr))
      return !b.getValue();
  return false;
}

std::string kernelSignature(mlir::Operation *op) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << op->getName().getStringRef();
  // Inherent attributes only (from properties too), sorted by name:
  // discardable ones (frontend tags) do not change what a kernel computes.
  llvm::SmallVector<std::pair<llvm::StringRef, mlir::Attribute>> attrs;
  for (mlir::StringAttr name : op->getName().getAttributeNames()) {
    std::optional<mlir::Attribute> attr = op->getInherentAttr(name);
    if (attr && *attr && !isDefaultAttr(name.getValue(), *attr))
      attrs.push_back({name.getValue(), *attr});
  }
  llvm::sort(attrs,
             [](const auto &a, const auto &b) { return a.first < b.first; });
  if (!attrs.empty()) {
    os << '{';
    llvm::interleaveComma(attrs, os, [&](const auto &entry) {
      os << entry.first;
      // `packed_n` is the result's N, which its type holds: static, or
      // dynamic in a shape-generic copy (plan/PlanBuilder.cpp) whose kernel
      // reads N at run time and serves ops of several `packed_n`.
      if (entry.first == "packed_n")
        return;
      os << " = ";
      entry.second.print(os);
    });
    os << '}';
  }
  os << '(';
  llvm::interleaveComma(op->getOperandTypes(), os,
                        [&](mlir::Type t) { t.print(os); });
  os << ") -> ";
  if (op->getNumResults() == 1) {
    op->getResult(0).getType().print(os);
  } else {
    os << '(';
    llvm::interleaveComma(op->getResultTypes(), os,
                          [&](mlir::Type t) { t.print(os); });
    os << ')';
  }
  return text;
}

} // namespace tfc
