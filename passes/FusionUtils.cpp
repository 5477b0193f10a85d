//===- FusionUtils.cpp - helpers shared by the tfc passes -----------------===//

#include "passes/FusionUtils.h"

#include "ir/TfcOps.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Location.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <functional>

using namespace mlir;
namespace tir = mlir::tfc;

namespace tfc {

LogicalResult block(Blocker *why, Operation *op, const llvm::Twine &reason) {
  if (why) {
    why->op = op;
    why->reason = reason.str();
  }
  return failure();
}

std::optional<double> getScalarConstant(Value value, bool allowInfinite) {
  // Bounded recursion: constant expressions in models are tiny.
  std::function<std::optional<double>(Value, int)> eval =
      [&](Value v, int depth) -> std::optional<double> {
    if (!v || depth > 6)
      return std::nullopt;
    Operation *def = v.getDefiningOp();
    if (!def)
      return std::nullopt;
    if (auto constant = dyn_cast<tir::ConstantOp>(def)) {
      auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
      if (!dense || !dense.getElementType().isF32())
        return std::nullopt;
      if (!dense.isSplat() && dense.getNumElements() != 1)
        return std::nullopt;
      return static_cast<double>(
          (*dense.value_begin<APFloat>()).convertToFloat());
    }
    auto unary = [&](auto fn) -> std::optional<double> {
      std::optional<double> x = eval(def->getOperand(0), depth + 1);
      if (!x)
        return std::nullopt;
      return fn(*x);
    };
    auto binary = [&](auto fn) -> std::optional<double> {
      std::optional<double> a = eval(def->getOperand(0), depth + 1);
      std::optional<double> b = eval(def->getOperand(1), depth + 1);
      if (!a || !b)
        return std::nullopt;
      return fn(*a, *b);
    };
    if (isa<tir::SqrtOp>(def))
      return unary([](double x) { return std::sqrt(x); });
    if (isa<tir::RsqrtOp>(def))
      return unary([](double x) { return 1.0 / std::sqrt(x); });
    if (isa<tir::NegOp>(def))
      return unary([](double x) { return -x; });
    if (isa<tir::ExpOp>(def))
      return unary([](double x) { return std::exp(x); });
    if (isa<tir::AddOp>(def))
      return binary([](double a, double b) { return a + b; });
    if (isa<tir::SubOp>(def))
      return binary([](double a, double b) { return a - b; });
    if (isa<tir::MulOp>(def))
      return binary([](double a, double b) { return a * b; });
    if (isa<tir::DivOp>(def))
      return binary([](double a, double b) { return a / b; });
    if (isa<tir::PowOp>(def))
      return binary([](double a, double b) { return std::pow(a, b); });
    return std::nullopt;
  };
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type || !type.getElementType().isF32())
    return std::nullopt;
  std::optional<double> result = eval(value, 0);
  if (result && (std::isnan(*result) ||
                 (!allowInfinite && std::isinf(*result))))
    return std::nullopt;
  return result;
}

bool approxEqual(double a, double b, double rel) {
  double scale = std::max(std::fabs(a), std::fabs(b));
  return std::fabs(a - b) <= rel * scale;
}

bool swapsLastTwoAxes(ArrayRef<int64_t> perm) {
  int64_t n = perm.size();
  if (n < 2)
    return false;
  for (int64_t i = 0; i + 2 < n; ++i)
    if (perm[i] != i)
      return false;
  return perm[n - 2] == n - 1 && perm[n - 1] == n - 2;
}

bool hasSingleUser(Value value, Operation *user) {
  return value.hasOneUse() && *value.user_begin() == user;
}

Operation *otherUser(Value value, Operation *except) {
  for (Operation *user : value.getUsers())
    if (user != except)
      return user;
  return nullptr;
}

bool isWeightOnly(Value value, unsigned depth) {
  if (depth > 8)
    return false;
  Operation *def = value.getDefiningOp();
  if (!def)
    return false;
  if (isa<tir::ParamOp, tir::ConstantOp>(def))
    return true;
  if (!isa<tir::SliceOp, tir::TransposeOp, tir::ReshapeOp, tir::ConcatOp,
           tir::CastOp, tir::PackPanelsOp>(def))
    return false;
  return llvm::all_of(def->getOperands(), [&](Value operand) {
    return isWeightOnly(operand, depth + 1);
  });
}

bool isPanelCandidate(Value w, bool transposeB) {
  auto type = dyn_cast<RankedTensorType>(w.getType());
  if (!type || type.getRank() != 2 || !type.hasStaticShape())
    return false;
  int64_t k = type.getDimSize(transposeB ? 1 : 0);
  int64_t n = type.getDimSize(transposeB ? 0 : 1);
  return n >= tir::kPanelColumns && k > 0 &&
         (!type.getElementType().isBF16() || k % 2 == 0);
}

Operation *rootParam(Value value) {
  for (int depth = 0; depth < 8 && value; ++depth) {
    Operation *def = value.getDefiningOp();
    if (!def)
      return nullptr;
    if (isa<tir::ParamOp>(def))
      return def;
    if (!isa<tir::SliceOp, tir::TransposeOp, tir::ReshapeOp, tir::ConcatOp,
             tir::CastOp>(def) ||
        def->getNumOperands() == 0)
      return nullptr;
    value = def->getOperand(0);
  }
  return nullptr;
}

std::string layerOfParamName(llvm::StringRef name) {
  llvm::SmallVector<llvm::StringRef> parts;
  name.split(parts, '.');
  std::string prefix;
  for (llvm::StringRef part : parts) {
    if (!prefix.empty())
      prefix += ".";
    prefix += part.str();
    if (!part.empty() && llvm::all_of(part, [](char c) {
          return c >= '0' && c <= '9';
        }))
      return prefix;
  }
  return "";
}

namespace {

/// The tfc.params under the weight-only value `value`.
void collectParams(Value value, SmallVectorImpl<tir::ParamOp> &params,
                   int depth = 0) {
  Operation *def = value.getDefiningOp();
  if (!def || depth > 8)
    return;
  if (auto param = dyn_cast<tir::ParamOp>(def)) {
    params.push_back(param);
    return;
  }
  for (Value operand : def->getOperands())
    collectParams(operand, params, depth + 1);
}

} // namespace

std::string layerOf(Operation *op) {
  // Breadth first over the operands. A weight-only operand (a param, or a
  // slice/concat/... of params) counts at the depth of the op that reads it,
  // so an op's own weights decide before the activations it reads, which
  // come from earlier layers.
  llvm::SmallVector<Operation *> frontier = {op};
  llvm::DenseSet<Operation *> seen = {op};
  unsigned visited = 0;
  while (!frontier.empty() && visited < 400) {
    llvm::SmallVector<Operation *> next;
    llvm::SmallVector<tir::ParamOp> params;
    for (Operation *current : frontier) {
      for (Value operand : current->getOperands()) {
        Operation *def = operand.getDefiningOp();
        if (!def || !seen.insert(def).second)
          continue;
        ++visited;
        if (isWeightOnly(operand))
          collectParams(operand, params);
        else
          next.push_back(def);
      }
    }
    // Of the params found at this depth, the one defined last names the
    // layer: an op of layer i reads weights of layer i and activations of
    // earlier layers, never anything of a later layer.
    tir::ParamOp latest;
    std::string layer;
    for (tir::ParamOp param : params) {
      std::string name = layerOfParamName(param.getName());
      if (name.empty())
        continue;
      if (!latest || (param->getBlock() == latest->getBlock() &&
                      latest->isBeforeInBlock(param))) {
        latest = param;
        layer = name;
      }
    }
    if (!params.empty())
      return layer;
    frontier = std::move(next);
  }
  return "";
}

bool isAvailableAt(Value value, Operation *point) {
  if (auto arg = dyn_cast<BlockArgument>(value))
    return arg.getOwner()->getParentOp()->isAncestor(point);
  Operation *def = value.getDefiningOp();
  Block *block = point->getBlock();
  if (def->getBlock() == block)
    return def->isBeforeInBlock(point);
  // Defined in an enclosing block: available if that block encloses point.
  Operation *enclosing = def->getBlock()->findAncestorOpInBlock(*point);
  return enclosing && def->isBeforeInBlock(enclosing);
}

bool canHoistBefore(Value value, Operation *point) {
  if (isAvailableAt(value, point))
    return true;
  Operation *def = value.getDefiningOp();
  if (!def || def->getBlock() != point->getBlock() || !isWeightOnly(value) ||
      !isMemoryEffectFree(def) || def->getNumRegions() != 0)
    return false;
  return llvm::all_of(def->getOperands(), [&](Value operand) {
    return canHoistBefore(operand, point);
  });
}

void hoistBefore(Value value, Operation *point, RewriterBase &rewriter) {
  if (isAvailableAt(value, point))
    return;
  Operation *def = value.getDefiningOp();
  for (Value operand : def->getOperands())
    hoistBefore(operand, point, rewriter);
  rewriter.moveOpBefore(def, point);
}

void eraseIfDead(Operation *op, RewriterBase &rewriter) {
  eraseIfDead(ArrayRef<Operation *>{op}, rewriter);
}

void eraseIfDead(ArrayRef<Operation *> ops, RewriterBase &rewriter) {
  // An op is erased only when popped, and only when it has no users, so it
  // can never be pushed again: the worklist never holds an erased op.
  SmallVector<Operation *> worklist;
  for (Operation *op : ops)
    if (op && !llvm::is_contained(worklist, op))
      worklist.push_back(op);
  while (!worklist.empty()) {
    Operation *current = worklist.pop_back_val();
    if (!isOpTriviallyDead(current))
      continue;
    for (Value operand : current->getOperands())
      if (Operation *def = operand.getDefiningOp())
        if (def != current && !llvm::is_contained(worklist, def))
          worklist.push_back(def);
    rewriter.eraseOp(current);
  }
}

} // namespace tfc
