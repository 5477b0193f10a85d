//===- SignatureAttrs.cpp - the tfc.* attributes of modules and functions -===//
//
// The frontend describes entry points with discardable attributes:
//   module attributes {tfc.model = "bert_base", tfc.dim_bounds = {seq = 512 :
//   i64}} func.func @encode(%ids: tensor<?x?xi32> {tfc.dims = ["batch",
//   "seq"]})
//       -> (tensor<?x?x768xf32> {tfc.name = "last_hidden_state"})
// The runtime and the generated API read them, so their form is checked here.
// Other tfc.* attributes are accepted as they are (passes may add their own).
//
//===----------------------------------------------------------------------===//

#include "ir/TfcDialect.h"
#include "ir/TfcOps.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

using namespace mlir;
using namespace mlir::tfc;

/// `tfc.dims`: one string per dimension of `type` (a symbolic name for a
/// dynamic dim; the frontend's choice for a static one).
static LogicalResult verifyDims(Operation *op, Attribute value, Type type,
                                StringRef what) {
  auto dims = dyn_cast<ArrayAttr>(value);
  if (!dims ||
      !llvm::all_of(dims, [](Attribute a) { return isa<StringAttr>(a); }))
    return op->emitOpError("'tfc.dims' of ")
           << what << " must be an array of strings, got " << value;
  auto ranked = dyn_cast<RankedTensorType>(type);
  if (ranked && static_cast<int64_t>(dims.size()) != ranked.getRank())
    return op->emitOpError("'tfc.dims' of ")
           << what << " has " << dims.size() << " names for "
           << mlir::tfc::detail::str(type) << " (rank " << ranked.getRank() << ")";
  return success();
}

/// Checks the tfc.* attribute `attr` of argument or result `index` of `op`.
static LogicalResult verifySignatureAttr(Operation *op, bool isResult,
                                         unsigned index, NamedAttribute attr) {
  std::string what =
      (isResult ? "result #" : "argument #") + std::to_string(index);
  StringRef name = attr.getName().getValue();
  if (name == "tfc.name") {
    auto str = dyn_cast<StringAttr>(attr.getValue());
    if (!str || str.getValue().empty())
      return op->emitOpError("'tfc.name' of ")
             << what << " must be a non-empty string, got " << attr.getValue();
    return success();
  }
  if (name == "tfc.dims") {
    Type type;
    // Function declarations have no region arguments; ask the signature.
    if (auto function = dyn_cast<FunctionOpInterface>(op)) {
      ArrayRef<Type> types =
          isResult ? function.getResultTypes() : function.getArgumentTypes();
      if (index < types.size())
        type = types[index];
    }
    return verifyDims(op, attr.getValue(), type, what);
  }
  return success();
}

LogicalResult TfcDialect::verifyOperationAttribute(Operation *op,
                                                   NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  if (name == "tfc.model") {
    if (!isa<StringAttr>(attr.getValue()))
      return op->emitError("'tfc.model' must be a string, got ")
             << attr.getValue();
    return success();
  }
  if (name == "tfc.dim_bounds") {
    auto bounds = dyn_cast<DictionaryAttr>(attr.getValue());
    if (!bounds)
      return op->emitError("'tfc.dim_bounds' must be a dictionary from "
                           "dimension name to maximum size, got ")
             << attr.getValue();
    for (NamedAttribute bound : bounds) {
      auto size = dyn_cast<IntegerAttr>(bound.getValue());
      if (!size || size.getValue().getBitWidth() > 64 ||
          size.getValue().getSExtValue() <= 0)
        return op->emitError("'tfc.dim_bounds' entry '")
               << bound.getName().getValue()
               << "' must be a positive integer, got " << bound.getValue();
    }
    return success();
  }
  return success();
}

LogicalResult TfcDialect::verifyRegionArgAttribute(Operation *op,
                                                   unsigned regionIndex,
                                                   unsigned argIndex,
                                                   NamedAttribute attr) {
  return verifySignatureAttr(op, /*isResult=*/false, argIndex, attr);
}

LogicalResult TfcDialect::verifyRegionResultAttribute(Operation *op,
                                                      unsigned regionIndex,
                                                      unsigned resultIndex,
                                                      NamedAttribute attr) {
  return verifySignatureAttr(op, /*isResult=*/true, resultIndex, attr);
}
