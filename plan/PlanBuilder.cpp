//===- PlanBuilder.cpp - tfc dialect module -> runtime Plan ---------------===//
//
// One pass over each entry function, in program order (the body is a single
// block of pure ops, already in a valid execution order):
//
//  * arguments become Input values; their `tfc.dims` names define the
//    entry's symbols, each read from the first input axis that has it;
//  * tfc.param becomes a Param value, tfc.constant a Plan constant (shared
//    across entries: equal attributes are uniqued by MLIR, hence one key);
//  * every other tfc op becomes a step. Its result shapes are computed as
//    DimExprs by a per-op rule (the symbolic counterpart of the dialect's
//    inferShape, which only knows `?`), then reconciled with the IR's static
//    dims. Its kernel is found or created by signature.
//
// Afterwards, temps are given a release point (the step of their last use),
// and the result is checked with rt::verifyPlan so that codegen can never
// hand the runtime a plan it would refuse.
//
// Planning only reads the module: what it plans is what `--emit=ir-fused`
// prints. Weight layout is decided before, by the `weight-layout` pass
// (passes/WeightLayout.cpp).
//
// Shape rules are the ops' own (SymbolicShapeOpInterface, ir/OpFacts.h):
// every tfc op must state one to compile; this file supplies what they ask
// of it, numpy broadcasting over DimExprs with the runtime checks it implies.
//
//===----------------------------------------------------------------------===//

#include "plan/PlanBuilder.h"

#include "ir/Broadcast.h"
#include "ir/TfcOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/IR/Location.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cctype>
#include <optional>

using namespace mlir;

namespace tfc {

using rt::DimExpr;
using SymShape = std::vector<DimExpr>;

//===----------------------------------------------------------------------===//
// Signatures and locations
//===----------------------------------------------------------------------===//

/// The FileLineColLocs in `loc`, innermost first: for a call site, those of
/// the callee (where the op was written) before those of the caller.
static void collectFileLocs(Location loc, std::vector<FileLineColLoc> &out,
                            int depth = 0) {
  if (depth > 64) // Locations are DAGs built by the frontend; be safe.
    return;
  if (auto file = dyn_cast<FileLineColLoc>(loc)) {
    out.push_back(file);
  } else if (auto call = dyn_cast<CallSiteLoc>(loc)) {
    collectFileLocs(call.getCallee(), out, depth + 1);
    collectFileLocs(call.getCaller(), out, depth + 1);
  } else if (auto name = dyn_cast<NameLoc>(loc)) {
    collectFileLocs(name.getChildLoc(), out, depth + 1);
  } else if (auto fused = dyn_cast<FusedLoc>(loc)) {
    for (Location inner : fused.getLocations())
      collectFileLocs(inner, out, depth + 1);
  } else if (auto opaque = dyn_cast<OpaqueLoc>(loc)) {
    collectFileLocs(opaque.getFallbackLocation(), out, depth + 1);
  }
}

std::string locationString(Location loc) {
  std::vector<FileLineColLoc> files;
  collectFileLocs(loc, files);
  if (files.empty())
    return "";
  // Ops of the built-in prelude ("<prelude>") are reported at the innermost
  // line of a real file, i.e. where the model calls the prelude block: a
  // line the user can open.
  FileLineColLoc best = files.front();
  for (FileLineColLoc f : files)
    if (!f.getFilename().getValue().starts_with("<")) {
      best = f;
      break;
    }
  return best.getFilename().str() + ":" + std::to_string(best.getLine()) + ":" +
         std::to_string(best.getColumn());
}

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

static std::string opWhere(Operation *op) {
  std::string loc = locationString(op->getLoc());
  return (loc.empty() ? "" : loc + ": ") + "cannot plan '" +
         op->getName().getStringRef().str() + "'";
}

static std::optional<rt::DType> dtypeOf(Type element) {
  if (element.isF32())
    return rt::DType::F32;
  if (element.isBF16())
    return rt::DType::BF16;
  if (element.isInteger(1))
    return rt::DType::Bool;
  if (element.isInteger(32))
    return rt::DType::I32;
  if (element.isInteger(64))
    return rt::DType::I64;
  return std::nullopt;
}

static std::string typeString(Type type) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << type;
  return s;
}

//===----------------------------------------------------------------------===//
// Entry building
//===----------------------------------------------------------------------===//

namespace {

/// State shared by all entries of a module: kernels, params, constants.
struct ModuleState {
  rt::Plan plan;
  std::vector<Operation *> kernelOps;
  llvm::StringMap<int32_t> kernelBySignature;
  llvm::StringMap<size_t> paramByName;
  llvm::DenseMap<Attribute, int32_t> constantByAttr;
  llvm::StringMap<int64_t> bounds;
  KernelSignatureFn signature;
  PlanOptions options;
  /// The one-query-row kernel of each general attention kernel that has
  /// one, and the module that holds the ops they are compiled from.
  llvm::DenseMap<int32_t, int32_t> oneRowOf;
  OwningOpRef<ModuleOp> variantOps;
  size_t copies = 0; // functions made in variantOps, for unique names

  /// The index of `op`'s kernel, created on first use of its signature.
  /// Ops whose kernel reads some extents at run time are planned as a
  /// shape-generic copy (genericTypes), so that they share one kernel.
  int32_t kernelOf(Operation *op,
                   mlir::tfc::KernelFamilyOpInterface family);
  /// A copy of fused attention `op`, in `variantOps`, whose query and
  /// result types have one row (Sq = 1).
  Operation *oneRowCopy(mlir::tfc::FusedAttentionOp op);
  /// A copy of `op` in `variantOps` with these operand and result types:
  /// never run or verified, only read by the code generator.
  Operation *copyWithTypes(Operation *op, TypeRange operandTypes,
                           TypeRange resultTypes);
};

/// "k12_matmul": a C identifier from the kernel index and the op name.
static std::string kernelName(size_t index, llvm::StringRef opName) {
  opName.consume_front("tfc.");
  std::string name = "k" + std::to_string(index) + "_";
  for (char c : opName)
    name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return name;
}

/// `type` with the axes `dynamic` says so made dynamic.
static Type withDynamicAxes(Type type,
                            llvm::function_ref<bool(int64_t)> dynamic) {
  auto ranked = cast<RankedTensorType>(type);
  SmallVector<int64_t> shape(ranked.getShape());
  for (int64_t i = 0; i < ranked.getRank(); ++i)
    if (dynamic(i))
      shape[i] = ShapedType::kDynamic;
  return ranked.clone(shape);
}

/// `type` with axes [0, keep) dynamic.
static Type dynamicBefore(Type type, int64_t keep) {
  return withDynamicAxes(type, [keep](int64_t axis) { return axis < keep; });
}

/// Whether `op` is an fp32 product on weight panels (`packed_n`).
static bool isF32PanelProduct(Operation *op) {
  std::optional<mlir::tfc::ProductWeight> w = mlir::tfc::productWeight(op);
  return w && w->packed &&
         cast<RankedTensorType>(w->operand->get().getType())
             .getElementType()
             .isF32();
}

/// The types of a shape-generic copy of an fp32 product on panels: x
/// [..., M, K], panels [P, K, 48] and bias [N] -> [..., M, N] with K, P and
/// N dynamic.
static std::pair<SmallVector<Type>, SmallVector<Type>>
panelProductTypes(Operation *op) {
  auto lastAxis = [](Type t) {
    int64_t last = cast<RankedTensorType>(t).getRank() - 1;
    return withDynamicAxes(t, [last](int64_t axis) { return axis == last; });
  };
  std::pair<SmallVector<Type>, SmallVector<Type>> types;
  types.first.push_back(lastAxis(op->getOperand(0).getType()));
  types.first.push_back(withDynamicAxes(op->getOperand(1).getType(),
                                        [](int64_t axis) { return axis < 2; }));
  for (Value bias : op->getOperands().drop_front(2))
    types.first.push_back(
        withDynamicAxes(bias.getType(), [](int64_t) { return true; }));
  for (Type t : op->getResultTypes())
    types.second.push_back(lastAxis(t));
  return types;
}

/// The operand and result types of a shape-generic copy of `op`: the
/// extents its kernel reads at run time made dynamic, those the code
/// generator schedules by kept (codegen/DataMovementKernels.cpp,
/// buildPackPanels), so that ops that differ only in the former share one
/// kernel. Empty when `op` keeps its types.
///  - f32 tfc.pack_panels reads K and N at run time; the panels keep their
///    static width. (bf16 keeps its shapes: its [N, K] gather of 16-bit
///    elements with run-time strides compiles to AVX512-FP16's vmovw, which
///    not every AVX512_BF16 CPU has.)
///  - A tfc.transpose that keeps the innermost axis is a pointwise copy
///    vectorized along it: only that extent is scheduled by (the head
///    split and merge of attention, [B, S, H, D] <-> [B, H, S, D]). One that
///    moves it is tiled when its extents are static, and keeps them.
///  - With PlanOptions::genericPanelProducts, an fp32 product on weight
///    panels reads K (the lhs's last axis, the panels' rows) and N (the
///    result's last axis, the bias, the panel count) at run time: GPT-2's
///    QKV, attention output and FFN down-projection share one kernel.
static std::optional<std::pair<SmallVector<Type>, SmallVector<Type>>>
genericTypes(Operation *op, const PlanOptions &options) {
  std::pair<SmallVector<Type>, SmallVector<Type>> types;
  auto generalize = [&](int64_t operandKeep, int64_t resultKeep) {
    for (Type t : op->getOperandTypes())
      types.first.push_back(dynamicBefore(
          t, cast<RankedTensorType>(t).getRank() - operandKeep));
    for (Type t : op->getResultTypes())
      types.second.push_back(
          dynamicBefore(t, cast<RankedTensorType>(t).getRank() - resultKeep));
    return types;
  };
  if (isa<mlir::tfc::PackPanelsOp>(op) &&
      cast<RankedTensorType>(op->getOperand(0).getType())
          .getElementType()
          .isF32()) // [K, N] -> [ceil(N / 48), K, 48]
    return generalize(/*operandKeep=*/0, /*resultKeep=*/1);
  if (auto transpose = dyn_cast<mlir::tfc::TransposeOp>(op)) {
    llvm::ArrayRef<int64_t> perm = transpose.getPerm();
    if (!perm.empty() && perm.back() == static_cast<int64_t>(perm.size()) - 1)
      return generalize(/*operandKeep=*/1, /*resultKeep=*/1);
  }
  if (options.genericPanelProducts && isF32PanelProduct(op))
    return panelProductTypes(op);
  return std::nullopt;
}

int32_t ModuleState::kernelOf(Operation *op,
                              mlir::tfc::KernelFamilyOpInterface family) {
  Operation *generic = nullptr;
  if (auto types = genericTypes(op, options))
    op = generic = copyWithTypes(op, types->first, types->second);
  std::string key = signature(op);
  auto [it, inserted] = kernelBySignature.try_emplace(
      key, static_cast<int32_t>(plan.kernels.size()));
  if (!inserted && generic)
    generic->getParentOp()->erase(); // an equal copy is planned already
  if (inserted) {
    rt::PlanKernel kernel;
    kernel.name = kernelName(plan.kernels.size(), op->getName().getStringRef());
    kernel.op = op->getName().getStringRef().str();
    kernel.family = family.getKernelFamily();
    kernel.signature = std::move(key);
    kernel.numInputs = static_cast<int32_t>(op->getNumOperands());
    kernel.numOutputs = static_cast<int32_t>(op->getNumResults());
    plan.kernels.push_back(std::move(kernel));
    kernelOps.push_back(op);
  }
  return it->second;
}

/// The query-row axis of fused attention's q and result ([B, H, Sq, D]).
constexpr int kQueryRowAxis = 2;

Operation *ModuleState::oneRowCopy(mlir::tfc::FusedAttentionOp op) {
  auto oneRow = [](Type type) -> Type {
    auto ranked = cast<RankedTensorType>(type);
    SmallVector<int64_t> shape(ranked.getShape());
    shape[kQueryRowAxis] = 1;
    return ranked.clone(shape);
  };
  SmallVector<Type> operandTypes(op->getOperandTypes());
  operandTypes[0] = oneRow(operandTypes[0]);
  return copyWithTypes(op, operandTypes, {oneRow(op->getResult(0).getType())});
}

Operation *ModuleState::copyWithTypes(Operation *op, TypeRange operandTypes,
                                      TypeRange resultTypes) {
  MLIRContext *ctx = op->getContext();
  if (!variantOps)
    variantOps = ModuleOp::create(UnknownLoc::get(ctx));
  // A function whose arguments stand for the operands.
  OpBuilder builder = OpBuilder::atBlockEnd(variantOps->getBody());
  auto fn = builder.create<func::FuncOp>(
      op->getLoc(), "copy_" + std::to_string(copies++),
      builder.getFunctionType(operandTypes, resultTypes));
  Block *body = fn.addEntryBlock();
  IRMapping operands;
  operands.map(op->getOperands(), body->getArguments());
  builder.setInsertionPointToEnd(body);
  Operation *copy = builder.clone(*op, operands);
  for (auto [result, type] : llvm::zip(copy->getResults(), resultTypes))
    result.setType(type);
  return copy;
}

class EntryBuilder {
public:
  EntryBuilder(ModuleState &module, func::FuncOp func)
      : module(module), func(func) {}

  llvm::Error build();
  rt::PlanEntry entry;

private:
  ModuleState &module;
  func::FuncOp func;
  llvm::DenseMap<Value, int32_t> ids;
  llvm::StringMap<int32_t> symbolByName;
  /// The PlanEntry::caches index of each cache argument and of each
  /// tfc.kv_stack result (set as an output by addReturn).
  llvm::DenseMap<Value, int32_t> cacheOf;

  std::string symbolsString(const SymShape &shape) const {
    rt::PlanValue v;
    v.shape = shape;
    std::string s = rt::valueTypeToString(v, entry.symbols);
    return s.substr(s.find('['));
  }
  std::string dimString(const DimExpr &d) const {
    return rt::dimToString(d, entry.symbols);
  }

  const rt::PlanValue &valueOf(Value v) const {
    return entry.values[static_cast<size_t>(ids.lookup(v))];
  }
  const SymShape &shapeOf(Value v) const { return valueOf(v).shape; }

  int32_t addValue(Value v, rt::PlanValue value) {
    int32_t id = static_cast<int32_t>(entry.values.size());
    entry.values.push_back(std::move(value));
    ids[v] = id;
    return id;
  }

  llvm::Error addArguments();
  llvm::Error addParam(Operation *op);
  llvm::Error addConstant(Operation *op);
  llvm::Error addStep(Operation *op);
  llvm::Error addCacheStep(Operation *op);
  void addOneRowVariant(mlir::tfc::FusedAttentionOp op, rt::PlanStep &step);
  llvm::Error addReturn(func::ReturnOp ret);
  void computeReleases();

  llvm::Expected<std::vector<SymShape>> inferShapes(Operation *op);
  llvm::Expected<SymShape> broadcast(Operation *op,
                                     llvm::ArrayRef<SymShape> shapes);
  llvm::Error addChecks(Operation *op);
  void addSliceCheck(mlir::tfc::SliceOp slice, const std::string &at);
  void addTopkCheck(mlir::tfc::TopkOp topk, const std::string &at);
  llvm::Error addGatherChecks(mlir::tfc::GatherOp gather,
                              const std::string &at);
  void addDimCheck(rt::DimCheck check);
  void requireEqual(Operation *op, const DimExpr &dim, int64_t size);
  std::optional<DimExpr> parseDeclaredDim(llvm::StringRef text);
};

} // namespace

/// An integer attribute by name (inherent or discardable).
static std::optional<int64_t> intAttr(Operation *op, llvm::StringRef name) {
  if (auto attr = dyn_cast_or_null<IntegerAttr>(op->getAttr(name)))
    return attr.getValue().getSExtValue();
  return std::nullopt;
}

llvm::Error EntryBuilder::addArguments() {
  for (BlockArgument arg : func.getArguments()) {
    unsigned i = arg.getArgNumber();
    auto nameAttr = func.getArgAttrOfType<StringAttr>(i, "tfc.name");
    std::string name =
        nameAttr ? nameAttr.getValue().str() : "arg" + std::to_string(i);
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    std::optional<rt::DType> dtype =
        type ? dtypeOf(type.getElementType()) : std::nullopt;
    if (!dtype)
      return llvm::createStringError("entry '" + func.getName() + "': input '" + name +
                       "' has type " + typeString(arg.getType()) +
                       ", which the runtime cannot pass (ranked tensors of "
                       "f32, i32, i64 or i1 only)");
    auto dims = func.getArgAttrOfType<ArrayAttr>(i, "tfc.dims");
    rt::PlanValue value;
    value.kind = rt::PlanValue::Kind::Input;
    value.dtype = *dtype;
    value.index = static_cast<int32_t>(i);
    for (int64_t axis = 0; axis < type.getRank(); ++axis) {
      if (!type.isDynamicDim(axis)) {
        value.shape.push_back(DimExpr::of(type.getDimSize(axis)));
        continue;
      }
      std::string dimName = name + "." + std::to_string(axis);
      if (dims && axis < static_cast<int64_t>(dims.size()))
        if (auto s = dyn_cast<StringAttr>(dims[axis]))
          dimName = s.getValue().str();
      int64_t size;
      if (!llvm::StringRef(dimName).getAsInteger(10, size)) {
        // A dynamic IR dim the signature fixes: checked by the executor.
        value.shape.push_back(DimExpr::of(size));
        continue;
      }
      auto [it, inserted] = symbolByName.try_emplace(
          dimName, static_cast<int32_t>(entry.symbols.size()));
      if (inserted) {
        rt::SymbolSource src;
        src.name = dimName;
        src.input = static_cast<int32_t>(i);
        src.axis = static_cast<int32_t>(axis);
        src.bound = module.bounds.lookup(dimName);
        entry.symbols.push_back(src);
      }
      value.shape.push_back(DimExpr{0, {{it->second, 1}}});
    }
    entry.inputs.push_back(addValue(arg, value));
    entry.inputNames.push_back(name);
  }
  return llvm::Error::success();
}

llvm::Error EntryBuilder::addParam(Operation *op) {
  auto nameAttr = dyn_cast_or_null<StringAttr>(op->getAttr("name"));
  auto type = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  std::optional<rt::DType> dtype;
  if (type)
    dtype = dtypeOf(type.getElementType());
  if (!nameAttr || !type || !type.hasStaticShape() || !dtype)
    return llvm::createStringError(opWhere(op) +
                     ": a parameter needs a name and a static "
                     "f32, i32, i64 or i1 tensor type, got " +
                     typeString(op->getResult(0).getType()));
  std::string name = nameAttr.getValue().str();
  rt::Shape shape(type.getShape().begin(), type.getShape().end());
  auto [it, inserted] =
      module.paramByName.try_emplace(name, module.plan.params.size());
  if (inserted) {
    module.plan.params.push_back({name, shape, *dtype});
  } else {
    const rt::ParamInfo &info = module.plan.params[it->second];
    if (info.shape != shape || info.storedDType != *dtype)
      return llvm::createStringError(opWhere(op) + ": parameter '" + name + "' is used as " +
                       rt::typeToString(*dtype, shape) + " here and as " +
                       rt::typeToString(info.storedDType, info.shape) +
                       " elsewhere");
  }
  rt::PlanValue value;
  value.kind = rt::PlanValue::Kind::Param;
  value.dtype = *dtype;
  value.name = name;
  for (int64_t d : shape)
    value.shape.push_back(DimExpr::of(d));
  addValue(op->getResult(0), value);
  return llvm::Error::success();
}

/// The elements of `attr` as a runtime tensor (splats expanded).
static llvm::Expected<rt::Tensor> tensorOf(DenseElementsAttr attr,
                                           rt::DType dtype) {
  rt::Shape shape(attr.getType().getShape().begin(),
                  attr.getType().getShape().end());
  rt::Expected<rt::Tensor> t = rt::Tensor::zeros(dtype, shape);
  if (!t)
    return llvm::createStringError(t.message());
  size_t i = 0;
  switch (dtype) {
  case rt::DType::F32:
    for (float v : attr.getValues<float>())
      t->dataAs<float>()[i++] = v;
    break;
  case rt::DType::I32:
    for (int32_t v : attr.getValues<int32_t>())
      t->dataAs<int32_t>()[i++] = v;
    break;
  case rt::DType::I64:
    for (int64_t v : attr.getValues<int64_t>())
      t->dataAs<int64_t>()[i++] = v;
    break;
  case rt::DType::Bool:
    for (bool v : attr.getValues<bool>())
      t->dataAs<uint8_t>()[i++] = v ? 1 : 0;
    break;
  default:
    return llvm::createStringError("unsupported constant type");
  }
  return t.take();
}

llvm::Error EntryBuilder::addConstant(Operation *op) {
  auto attr = dyn_cast_or_null<DenseElementsAttr>(op->getAttr("value"));
  std::optional<rt::DType> dtype =
      attr ? dtypeOf(attr.getType().getElementType()) : std::nullopt;
  if (!attr || !dtype || !attr.getType().hasStaticShape())
    return llvm::createStringError(opWhere(op) + ": only dense constants of f32, i32, i64 "
                                   "or i1 with a static shape are supported");
  auto [it, inserted] = module.constantByAttr.try_emplace(
      attr, static_cast<int32_t>(module.plan.constants.size()));
  if (inserted) {
    llvm::Expected<rt::Tensor> t = tensorOf(attr, *dtype);
    if (!t)
      return llvm::createStringError(opWhere(op) + ": " + llvm::toString(t.takeError()));
    module.plan.constants.push_back(std::move(*t));
  }
  rt::PlanValue value;
  value.kind = rt::PlanValue::Kind::Constant;
  value.dtype = *dtype;
  value.index = it->second;
  for (int64_t d : attr.getType().getShape())
    value.shape.push_back(DimExpr::of(d));
  addValue(op->getResult(0), value);
  return llvm::Error::success();
}

//===----------------------------------------------------------------------===//
// Symbolic shape rules
//===----------------------------------------------------------------------===//

void EntryBuilder::addDimCheck(rt::DimCheck check) {
  for (const rt::DimCheck &c : entry.dimChecks)
    if (c.dim == check.dim && c.min == check.min)
      return;
  entry.dimChecks.push_back(std::move(check));
}

/// Kernels take a dynamic operand dim to equal the static result dim it
/// broadcasts to (codegen/KernelBuilder.h), so the runtime must make sure it
/// does: dim >= size and size - dim >= 0.
void EntryBuilder::requireEqual(Operation *op, const DimExpr &dim,
                                int64_t size) {
  std::string loc = locationString(op->getLoc());
  std::string what = dimString(dim) + " broadcast to " + std::to_string(size) +
                     " in '" + op->getName().getStringRef().str() + "'" +
                     (loc.empty() ? "" : " at " + loc);
  addDimCheck({dim, size, what});
  addDimCheck({add(DimExpr::of(size), dim, -1), 0, what});
}

/// numpy broadcasting over DimExprs: a static 1 yields to the other side;
/// a static n > 1 wins over a symbolic dim (which must then be n or 1 at run
/// time, as the IR's type says); two different symbolic dims cannot be
/// decided at compile time and are refused.
llvm::Expected<SymShape>
EntryBuilder::broadcast(Operation *op, llvm::ArrayRef<SymShape> shapes) {
  llvm::SmallVector<llvm::ArrayRef<DimExpr>> dims(shapes.begin(), shapes.end());
  std::optional<llvm::Error> error;
  auto resolve = [&](const DimExpr &out, const DimExpr &d,
                     size_t) -> std::optional<DimExpr> {
    if (d.isStatic() && out.isStatic()) {
      error = llvm::createStringError(opWhere(op) + ": cannot broadcast " +
                        std::to_string(d.constant) + " against " +
                        std::to_string(out.constant));
      return std::nullopt;
    }
    if (d.isStatic()) {
      requireEqual(op, out, d.constant);
      return d;
    }
    if (out.isStatic()) {
      requireEqual(op, d, out.constant);
      return out;
    }
    error = llvm::createStringError(opWhere(op) + ": cannot broadcast " + dimString(out) +
                      " against " + dimString(d) +
                      ": their sizes are only known at run time");
    return std::nullopt;
  };
  mlir::FailureOr<llvm::SmallVector<DimExpr>> result =
      mlir::tfc::broadcastDims<DimExpr>(dims, DimExpr::of(1), resolve);
  if (mlir::failed(result))
    return std::move(*error);
  return SymShape(result->begin(), result->end());
}

namespace {

/// The planner's side of the ops' symbolic shape rules (ir/OpFacts.h).
class ShapeRuleContext final : public mlir::tfc::SymbolicShapeContext {
public:
  using BroadcastFn =
      llvm::function_ref<llvm::Expected<SymShape>(llvm::ArrayRef<SymShape>)>;
  ShapeRuleContext(Operation *op, const std::vector<SymShape> &operands,
                   BroadcastFn bcast)
      : op(op), operands(operands), bcast(bcast) {}

  const SymShape &operandShape(unsigned i) const override {
    return operands[i];
  }
  FailureOr<SymShape> broadcast(llvm::ArrayRef<SymShape> shapes) override {
    llvm::Expected<SymShape> s = bcast(shapes);
    if (!s) {
      message = llvm::toString(s.takeError()); // names the op already
      return failure();
    }
    return std::move(*s);
  }
  LogicalResult fail(const llvm::Twine &why) override {
    message = opWhere(op) + ": " + why.str();
    return failure();
  }
  /// Why the rule failed.
  llvm::Error error() const {
    return llvm::createStringError(message.empty() ? opWhere(op) + ": its shape rule failed"
                                     : message);
  }

private:
  Operation *op;
  const std::vector<SymShape> &operands;
  BroadcastFn bcast;
  std::string message;
};

} // namespace

llvm::Expected<std::vector<SymShape>> EntryBuilder::inferShapes(Operation *op) {
  // Every tfc op has a rule (a missing one does not compile); anything else
  // is refused before it gets here.
  auto rule = dyn_cast<mlir::tfc::SymbolicShapeOpInterface>(op);
  if (!rule)
    return llvm::createStringError(opWhere(op) + ": not a tfc op");
  std::vector<SymShape> operands;
  for (Value v : op->getOperands())
    operands.push_back(shapeOf(v));
  auto bcast = [&](llvm::ArrayRef<SymShape> shapes) {
    return broadcast(op, shapes);
  };
  ShapeRuleContext ctx(op, operands, bcast);
  std::vector<SymShape> results;
  if (failed(rule.inferSymbolicShapes(ctx, results)))
    return ctx.error();
  return results;
}

//===----------------------------------------------------------------------===//
// Runtime checks implied by ops
//===----------------------------------------------------------------------===//

llvm::Error EntryBuilder::addChecks(Operation *op) {
  std::string loc = locationString(op->getLoc());
  std::string at = loc.empty() ? "" : " at " + loc;
  if (auto slice = dyn_cast<mlir::tfc::SliceOp>(op))
    addSliceCheck(slice, at);
  else if (auto topk = dyn_cast<mlir::tfc::TopkOp>(op))
    addTopkCheck(topk, at);
  else if (auto gather = dyn_cast<mlir::tfc::GatherOp>(op))
    return addGatherChecks(gather, at);
  return llvm::Error::success();
}

void EntryBuilder::addSliceCheck(mlir::tfc::SliceOp slice,
                                 const std::string &at) {
  // A static slice of a dynamic axis needs the axis to reach `end`.
  size_t axis = static_cast<size_t>(slice.getAxis());
  int64_t start = static_cast<int64_t>(slice.getStart());
  int64_t end = static_cast<int64_t>(slice.getEnd());
  const DimExpr &dim = shapeOf(slice.getInput())[axis];
  if (dim.isStatic())
    return;
  rt::DimCheck check;
  check.dim = dim;
  check.min = end;
  check.what = "slice [" + std::to_string(start) + ", " + std::to_string(end) +
               ") of axis " + std::to_string(axis) + at;
  addDimCheck(std::move(check));
}

void EntryBuilder::addTopkCheck(mlir::tfc::TopkOp topk, const std::string &at) {
  // The k largest of a dynamic last axis need k elements there (a static
  // one is checked by the op's verifier and the frontend).
  const SymShape &shape = shapeOf(topk.getInput());
  if (shape.empty() || shape.back().isStatic())
    return;
  rt::DimCheck check;
  check.dim = shape.back();
  check.min = static_cast<int64_t>(topk.getK());
  check.what = "topk with k = " + std::to_string(check.min) +
               " of the last axis" + at;
  addDimCheck(std::move(check));
}

llvm::Error EntryBuilder::addGatherChecks(mlir::tfc::GatherOp gather,
                                          const std::string &at) {
  Operation *op = gather;
  Value table = op->getOperand(0), indices = op->getOperand(1);
  int64_t rows;
  if (std::optional<uint64_t> packedRows = gather.getPackedRows()) {
    // The panels of a [V, D] table (weight-layout): name the table itself.
    rows = static_cast<int64_t>(*packedRows);
    if (auto pack = table.getDefiningOp<mlir::tfc::PackPanelsOp>())
      table = pack.getInput();
  } else {
    const SymShape &tableShape = shapeOf(table);
    if (tableShape.empty() || !tableShape[0].isStatic())
      return llvm::Error::success();
    rows = tableShape[0].constant;
  }
  const rt::PlanValue &tableValue = valueOf(table);
  std::string tableName = tableValue.kind == rt::PlanValue::Kind::Param
                              ? tableValue.name
                              : "the table";

  // Ids straight from the caller: every element is checked before running.
  int32_t idsId = ids.lookup(indices);
  const rt::PlanValue &idsValue = valueOf(indices);
  if (idsValue.kind == rt::PlanValue::Kind::Input) {
    rt::IndexCheck check;
    check.value = idsId;
    check.limit = rows;
    check.what = entry.inputNames[static_cast<size_t>(idsValue.index)] +
                 " index " + tableName + at;
    for (const rt::IndexCheck &c : entry.indexChecks)
      if (c.value == check.value && c.limit == check.limit)
        return llvm::Error::success();
    entry.indexChecks.push_back(std::move(check));
    return llvm::Error::success();
  }

  // Generated positions offset .. offset + n - 1 index a position table:
  // offset + n must not exceed its rows (a prompt longer than the context).
  Operation *def = indices.getDefiningOp();
  if (isa_and_nonnull<mlir::tfc::PositionsOp>(def)) {
    size_t axis = static_cast<size_t>(*intAttr(def, "axis"));
    DimExpr end = shapeOf(def->getOperand(0))[axis];
    if (def->getNumOperands() > 1) {
      std::optional<int64_t> offsetAxis = intAttr(def, "offset_axis");
      const SymShape &offsetShape = shapeOf(def->getOperand(1));
      if (!offsetAxis || *offsetAxis < 0 ||
          static_cast<size_t>(*offsetAxis) >= offsetShape.size())
        return llvm::createStringError(opWhere(def) + ": bad 'offset_axis'");
      end = rt::add(end, offsetShape[static_cast<size_t>(*offsetAxis)]);
    }
    if (end.isStatic()) {
      if (end.constant > rows)
        return llvm::createStringError(opWhere(op) + ": positions up to " +
                         std::to_string(end.constant) + " index " + tableName +
                         ", which has " + std::to_string(rows) + " rows");
      return llvm::Error::success();
    }
    // rows - end >= 0; the executor prints it as "end <= rows".
    rt::DimCheck check;
    check.dim = rt::add(DimExpr::of(rows), end, -1);
    check.min = 0;
    check.what = "positions index " + tableName + " (" + std::to_string(rows) +
                 " rows)" + at;
    addDimCheck(std::move(check));
  }
  return llvm::Error::success();
}

//===----------------------------------------------------------------------===//
// Steps
//===----------------------------------------------------------------------===//

/// Every use of `v` is an operand of a step that calls a kernel reading
/// it (a kernel's operands may have any strides but a dense innermost axis):
/// no reshape (whose view needs a dense input), cache step or entry result.
static bool readOnlyByKernels(Value v) {
  return llvm::all_of(v.getUsers(), [](Operation *user) {
    auto family = dyn_cast<mlir::tfc::KernelFamilyOpInterface>(user);
    return family && family.getKernelFamily() != rt::KernelFamily::None &&
           family.getKernelFamily() != rt::KernelFamily::View;
  });
}

/// A transpose that keeps the last axis last, or a slice with step 1 on the
/// last axis, reads its input with other strides: the executor may bind its
/// result as a view (rt::PlanStep::StridedView), also a strided one where
/// only kernels read it. Other ops: none.
static rt::PlanStep::StridedView stridedViewOf(Operation *op) {
  rt::PlanStep::StridedView view;
  if (auto transpose = dyn_cast<mlir::tfc::TransposeOp>(op)) {
    llvm::ArrayRef<int64_t> perm = transpose.getPerm();
    if (perm.empty() || perm.back() != static_cast<int64_t>(perm.size()) - 1)
      return view;
    for (int64_t axis : perm)
      view.perm.push_back(static_cast<int32_t>(axis));
    view.strided = readOnlyByKernels(transpose.getResult());
    return view;
  }
  auto slice = dyn_cast<mlir::tfc::SliceOp>(op);
  if (!slice)
    return view;
  int64_t rank = cast<RankedTensorType>(slice.getInput().getType()).getRank();
  int64_t axis = slice.getAxis() < 0 ? slice.getAxis() + rank : slice.getAxis();
  int64_t step = static_cast<int64_t>(slice.getStep());
  if (axis < 0 || axis >= rank || (axis == rank - 1 && step != 1))
    return view;
  for (int64_t a = 0; a < rank; ++a)
    view.perm.push_back(static_cast<int32_t>(a));
  view.axis = static_cast<int32_t>(axis);
  view.start = static_cast<int64_t>(slice.getStart());
  view.step = step;
  view.strided = readOnlyByKernels(slice.getResult());
  return view;
}

/// The memory order of the result of a kernel step `op` whose one use is a
/// transpose that keeps the last axis last (rt::PlanStep::layout): that
/// transpose's permutation, so that the transpose reads it densely and is
/// a view. Attention's result before the head merge. Otherwise row-major
/// (empty).
static std::vector<int32_t> layoutOf(Operation *op,
                                     const rt::PlanStep::StridedView &view) {
  auto family = dyn_cast<mlir::tfc::KernelFamilyOpInterface>(op);
  if (op->getNumResults() != 1 || !op->getResult(0).hasOneUse() ||
      !view.empty() || !family ||
      family.getKernelFamily() == rt::KernelFamily::View)
    return {};
  auto transpose =
      dyn_cast<mlir::tfc::TransposeOp>(*op->getResult(0).getUsers().begin());
  if (!transpose)
    return {};
  rt::PlanStep::StridedView read = stridedViewOf(transpose);
  return read.empty() ? std::vector<int32_t>() : read.perm;
}

llvm::Error EntryBuilder::addStep(Operation *op) {
  for (Value v : op->getOperands())
    if (!ids.count(v))
      return llvm::createStringError(opWhere(op) + ": an operand is not defined before it "
                                     "in the entry");
  for (Value r : op->getResults()) {
    auto type = dyn_cast<RankedTensorType>(r.getType());
    if (!type || !dtypeOf(type.getElementType()))
      return llvm::createStringError(opWhere(op) + ": result type " +
                       typeString(r.getType()) +
                       " has no runtime dtype (ranked f32, i32, i64, i1)");
  }
  if (op->getNumResults() == 0)
    return llvm::createStringError(opWhere(op) + ": an op without results has no kernel");

  llvm::Expected<std::vector<SymShape>> shapes = inferShapes(op);
  if (!shapes)
    return shapes.takeError();
  if (shapes->size() != op->getNumResults())
    return llvm::createStringError(opWhere(op) + ": shape rule gave the wrong number of "
                                   "results");

  rt::PlanStep step;
  for (Value v : op->getOperands())
    step.inputs.push_back(ids.lookup(v));
  for (auto [result, shape] : llvm::zip(op->getResults(), *shapes)) {
    auto type = cast<RankedTensorType>(result.getType());
    if (static_cast<int64_t>(shape.size()) != type.getRank())
      return llvm::createStringError(opWhere(op) + ": symbolic shape " +
                       symbolsString(shape) + " has a different rank than " +
                       typeString(type));
    // Reconcile with the IR: a static IR dim is authoritative (it is what
    // the kernel is compiled for), and must not contradict a static rule.
    for (int64_t d = 0; d < type.getRank(); ++d) {
      DimExpr &dim = shape[static_cast<size_t>(d)];
      if (type.isDynamicDim(d))
        continue;
      if (dim.isStatic() && dim.constant != type.getDimSize(d))
        return llvm::createStringError(opWhere(op) + ": inferred shape " +
                         symbolsString(shape) + " disagrees with the IR type " +
                         typeString(type));
      dim = DimExpr::of(type.getDimSize(d));
    }
    rt::PlanValue value;
    value.kind = rt::PlanValue::Kind::Temp;
    value.dtype = *dtypeOf(type.getElementType());
    value.shape = shape;
    step.outputs.push_back(addValue(result, value));
  }
  if (llvm::Error e = addChecks(op))
    return e;

  // Every tfc op states its family; only param and constant have no kernel,
  // and they are not steps.
  auto family = dyn_cast<mlir::tfc::KernelFamilyOpInterface>(op);
  if (!family || family.getKernelFamily() == rt::KernelFamily::None)
    return llvm::createStringError(opWhere(op) + ": the op has no kernel");
  step.kernel = module.kernelOf(op, family);
  if (auto attention = dyn_cast<mlir::tfc::FusedAttentionOp>(op))
    addOneRowVariant(attention, step);
  step.view = stridedViewOf(op);
  step.layout = layoutOf(op, step.view);
  step.location = locationString(op->getLoc());
  entry.steps.push_back(std::move(step));
  return llvm::Error::success();
}

/// Fused attention in a decode step (a dynamic Sq, keys that are not just
/// the queries: Sk = past + seq) gets a second kernel for one query row,
/// compiled from a copy of the op with Sq = 1 in its types (the code
/// generator's one-row variant, codegen/FusedKernels.cpp); the executor
/// calls it when the step's Sq is 1. Where Sk is Sq (prefill, forward),
/// Sq = 1 means a single key and the general kernel serves: the entry
/// compiles no one-row kernel.
void EntryBuilder::addOneRowVariant(mlir::tfc::FusedAttentionOp op,
                                    rt::PlanStep &step) {
  auto q = cast<RankedTensorType>(op.getQ().getType());
  if (q.getRank() != 4 || !q.isDynamicDim(kQueryRowAxis) ||
      shapeOf(op.getQ())[kQueryRowAxis] == shapeOf(op.getK())[kQueryRowAxis])
    return;
  auto [it, inserted] = module.oneRowOf.try_emplace(step.kernel, -1);
  if (inserted)
    it->second = module.kernelOf(
        module.oneRowCopy(op),
        cast<mlir::tfc::KernelFamilyOpInterface>(op.getOperation()));
  step.variant = {it->second, /*input=*/0, kQueryRowAxis, /*extent=*/1};
}

/// tfc.kv_append / tfc.kv_stack (ir/TfcCacheOps.td): steps without a kernel
/// that grow cache `cacheOf[arg]` in place. The cache is created by the
/// first append to an argument; a cache that no entry output returns is an
/// error in addReturn's caller (build).
llvm::Error EntryBuilder::addCacheStep(Operation *op) {
  auto arg = dyn_cast<BlockArgument>(op->getOperand(0));
  if (!arg || !ids.count(arg))
    return llvm::createStringError(opWhere(op) + ": the cache must be an entry input");
  for (Value v : op->getOperands())
    if (!ids.count(v))
      return llvm::createStringError(opWhere(op) + ": an operand is not defined before it "
                                     "in the entry");
  auto append = dyn_cast<mlir::tfc::KvAppendOp>(op);
  auto stack = dyn_cast<mlir::tfc::KvStackOp>(op);
  int32_t axis = static_cast<int32_t>(append ? append.getAxis()
                                             : stack.getAxis());
  auto [it, inserted] = cacheOf.try_emplace(
      arg, static_cast<int32_t>(entry.caches.size()));
  if (inserted)
    entry.caches.push_back({static_cast<int32_t>(arg.getArgNumber()), -1,
                            axis});
  rt::PlanStep step;
  step.kernel = -1;
  step.cache = it->second;
  llvm::Expected<std::vector<SymShape>> shapes = inferShapes(op);
  if (!shapes)
    return shapes.takeError();
  if (append) {
    step.op = rt::PlanStep::Op::CacheAppend;
    step.layer = static_cast<int32_t>(append.getLayer());
  } else {
    step.op = rt::PlanStep::Op::CacheStack;
  }
  for (Value v : op->getOperands())
    step.inputs.push_back(ids.lookup(v));
  rt::PlanValue value;
  value.dtype = rt::DType::F32;
  value.shape = std::move(shapes->front());
  step.outputs.push_back(addValue(op->getResult(0), value));
  if (stack)
    cacheOf[op->getResult(0)] = it->second;
  step.location = locationString(op->getLoc());
  entry.steps.push_back(std::move(step));
  return llvm::Error::success();
}

/// Parses a declared result dim: "past + seq", "2*seq - 1", "512". Unknown
/// symbols or other syntax give nullopt (the declaration is then not
/// checked).
std::optional<DimExpr> EntryBuilder::parseDeclaredDim(llvm::StringRef text) {
  DimExpr d;
  llvm::StringRef rest = text.trim();
  int64_t sign = 1;
  while (true) {
    llvm::StringRef term;
    size_t cut = rest.find_first_of("+-", 1);
    term = rest.substr(0, cut).trim();
    llvm::StringRef coeffText = "1", symbol = term;
    if (term.contains('*'))
      std::tie(coeffText, symbol) = term.split('*');
    int64_t coeff, number;
    if (coeffText.trim().getAsInteger(10, coeff))
      return std::nullopt;
    symbol = symbol.trim();
    if (!symbol.getAsInteger(10, number)) {
      d.constant += sign * coeff * number;
    } else {
      auto it = symbolByName.find(symbol);
      if (it == symbolByName.end())
        return std::nullopt;
      d.terms.emplace_back(it->second, sign * coeff);
    }
    if (cut == llvm::StringRef::npos)
      break;
    sign = rest[cut] == '-' ? -1 : 1;
    rest = rest.substr(cut + 1).trim();
  }
  return rt::canonical(d);
}

llvm::Error EntryBuilder::addReturn(func::ReturnOp ret) {
  for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
    if (!ids.count(v))
      return llvm::createStringError("entry '" + func.getName() +
                       "': a returned value is not defined in the entry");
    auto nameAttr = func.getResultAttrOfType<StringAttr>(
        static_cast<unsigned>(i), "tfc.name");
    std::string name =
        nameAttr ? nameAttr.getValue().str() : "output" + std::to_string(i);
    // The declared dims are what the generated API documents; a different
    // inferred shape means one of them is wrong.
    if (auto dims = func.getResultAttrOfType<ArrayAttr>(
            static_cast<unsigned>(i), "tfc.dims")) {
      const SymShape &shape = shapeOf(v);
      bool checked = dims.size() == shape.size();
      bool same = checked;
      for (size_t d = 0; checked && d < shape.size(); ++d) {
        auto s = dyn_cast<StringAttr>(dims[d]);
        std::optional<DimExpr> declared =
            s ? parseDeclaredDim(s.getValue()) : std::nullopt;
        if (!declared)
          checked = false;
        else if (!(*declared == shape[d]))
          same = false;
      }
      if (checked && !same) {
        std::string text;
        for (auto [k, a] : llvm::enumerate(dims))
          text += (k ? ", " : "") + (isa<StringAttr>(a)
                                         ? cast<StringAttr>(a).getValue().str()
                                         : std::string("?"));
        return llvm::createStringError("entry '" + func.getName() + "': output '" + name +
                         "' is declared [" + text + "] but its shape is " +
                         symbolsString(shape));
      }
    }
    auto cache = cacheOf.find(v);
    if (cache != cacheOf.end() && !isa<BlockArgument>(v) &&
        entry.caches[static_cast<size_t>(cache->second)].output < 0)
      entry.caches[static_cast<size_t>(cache->second)].output =
          static_cast<int32_t>(entry.outputs.size());
    entry.outputs.push_back(ids.lookup(v));
    entry.outputNames.push_back(name);
  }
  return llvm::Error::success();
}

void EntryBuilder::computeReleases() {
  const size_t n = entry.values.size();
  std::vector<int64_t> lastUse(n, -1);
  for (size_t s = 0; s < entry.steps.size(); ++s) {
    for (int32_t id : entry.steps[s].inputs)
      lastUse[static_cast<size_t>(id)] = static_cast<int64_t>(s);
    // A result nobody reads is freed right after the step that makes it.
    for (int32_t id : entry.steps[s].outputs)
      lastUse[static_cast<size_t>(id)] =
          std::max(lastUse[static_cast<size_t>(id)], static_cast<int64_t>(s));
  }
  std::vector<char> isOutput(n, 0);
  for (int32_t id : entry.outputs)
    isOutput[static_cast<size_t>(id)] = 1;
  for (size_t id = 0; id < n; ++id) {
    if (entry.values[id].kind != rt::PlanValue::Kind::Temp || isOutput[id] ||
        lastUse[id] < 0)
      continue;
    entry.steps[static_cast<size_t>(lastUse[id])].release.push_back(
        static_cast<int32_t>(id));
  }
}

llvm::Error EntryBuilder::build() {
  entry.name = func.getName().str();
  if (!func.getBody().hasOneBlock())
    return llvm::createStringError("entry '" + entry.name + "' must have a single block");
  if (llvm::Error e = addArguments())
    return e;
  auto addOp = [&](Operation &op) -> llvm::Error {
    if (auto ret = dyn_cast<func::ReturnOp>(op))
      return addReturn(ret);
    if (isa<mlir::tfc::ParamOp>(op))
      return addParam(&op);
    if (isa<mlir::tfc::ConstantOp>(op))
      return addConstant(&op);
    if (isa<mlir::tfc::KvAppendOp, mlir::tfc::KvStackOp>(op))
      return addCacheStep(&op);
    if (op.getName().getStringRef().starts_with("tfc.") &&
        op.getNumRegions() == 0)
      return addStep(&op);
    return llvm::createStringError(opWhere(&op) + ": only tfc ops can be compiled");
  };
  for (Operation &op : func.getBody().front())
    if (llvm::Error e = addOp(op))
      return e;
  for (const rt::PlanCache &c : entry.caches)
    if (c.output < 0)
      return llvm::createStringError("entry '" + entry.name + "': the cache grown from "
                       "input '" + entry.inputNames[static_cast<size_t>(
                           c.input)] + "' is not returned (tfc.kv_stack)");
  computeReleases();
  return llvm::Error::success();
}

//===----------------------------------------------------------------------===//
// Entry point
//===----------------------------------------------------------------------===//

llvm::Expected<BuiltPlan> buildPlan(ModuleOp module, const PlanOptions &options,
                                    KernelSignatureFn signature) {
  ModuleState state;
  state.signature = signature;
  state.options = options;
  if (auto model = module->getAttrOfType<StringAttr>("tfc.model"))
    state.plan.modelName = model.getValue().str();
  if (auto bounds = module->getAttrOfType<DictionaryAttr>("tfc.dim_bounds"))
    for (NamedAttribute b : bounds)
      if (auto v = dyn_cast<IntegerAttr>(b.getValue()))
        state.bounds[b.getName().getValue()] = v.getValue().getSExtValue();

  for (func::FuncOp func : module.getOps<func::FuncOp>()) {
    // Entries are the public functions with a body; a private function
    // would be a helper, which the frontend inlines.
    if (func.isExternal() || func.isPrivate())
      continue;
    EntryBuilder builder(state, func);
    if (llvm::Error e = builder.build())
      return std::move(e);
    state.plan.entries.push_back(std::move(builder.entry));
  }

  // The plan must be one the runtime accepts; anything else is a bug here.
  rt::Status valid = rt::verifyPlan(state.plan);
  if (!valid.ok())
    return llvm::createStringError("internal error: the plan does not verify: " +
                     valid.message());
  BuiltPlan built;
  built.plan = std::move(state.plan);
  built.kernelOps = std::move(state.kernelOps);
  built.variantOps = std::move(state.variantOps);
  return built;
}

} // namespace tfc
