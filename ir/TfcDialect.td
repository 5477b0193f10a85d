//===- TfcDialect.td - tfc dialect and op base classes ---*- tablegen -*-===//
//
// The dialect definition, the tensor type constraints shared by all ops and the
// op base classes. Op definitions live in TfcOps.td (primitive ops) and, once
// the fusion passes exist, in further files included from TfcOps.td.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_IR_TFCDIALECT_TD
#define TFC_IR_TFCDIALECT_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/EnumAttr.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "ir/TfcInterfaces.td"

//===----------------------------------------------------------------------===//
// Dialect
//===----------------------------------------------------------------------===//

def Tfc_Dialect : Dialect {
  let name = "tfc";
  let cppNamespace = "::mlir::tfc";
  let summary = "Graph IR of Transformer models";
  let description = [{
    The `tfc` dialect is the graph IR of the tfc compiler. Values are builtin
    ranked tensors whose batch and sequence dimensions usually stay dynamic
    (`tensor<?x?x768xf32>`). The frontend emits the primitive ops; the fusion
    passes replace groups of them by fused ops; codegen builds one Halide Func
    per op. Every op is side-effect free and infers its result type from its
    operands and attributes (except `tfc.param` and `tfc.cast`, whose result
    type is part of what they say).

    The dialect also checks the `tfc.*` attributes the frontend attaches to
    modules and function signatures (`tfc.model`, `tfc.dim_bounds`,
    `tfc.dims`, `tfc.name`).
  }];
  let hasConstantMaterializer = 1;
  let hasOperationAttrVerify = 1;
  let hasRegionArgAttrVerify = 1;
  let hasRegionResultAttrVerify = 1;
}

//===----------------------------------------------------------------------===//
// Type constraints
//===----------------------------------------------------------------------===//

// Operands are ranked: every op's shape function needs the rank. Element
// types are the ones the frontend produces; fp16/bf16 checkpoints are
// converted to f32 when loaded. The one exception is bf16 product weights:
// `--dtype bf16` (pass `bf16-weights`) casts the weights of tfc.matmul and
// tfc.linear to bf16, so those operands and tfc.cast also accept bf16.
def Tfc_AnyTensor : RankedTensorOf<[F32, I32, I64, I1]>;
def Tfc_CastableTensor : RankedTensorOf<[F32, BF16, I32, I64, I1]>;
def Tfc_WeightTensor : RankedTensorOf<[F32, BF16]>;
def Tfc_NumericTensor : RankedTensorOf<[F32, I32, I64]>;
def Tfc_FloatTensor : RankedTensorOf<[F32]>;
def Tfc_BoolTensor : RankedTensorOf<[I1]>;
def Tfc_IndexTensor : RankedTensorOf<[I32, I64]>;

// The result of an op whose type is inferred. Left loose on purpose: the op's
// verifier recomputes the exact type and rejects any other, with a message
// that names the operand shapes. A tighter constraint would be checked first
// and would hide that message behind a generic one.
def Tfc_InferredTensor
    : Type<CPred<"::llvm::isa<::mlir::TensorType>($_self)">,
           "tensor (type inferred from operands and attributes)",
           "::mlir::TensorType">;

//===----------------------------------------------------------------------===//
// Op base classes
//===----------------------------------------------------------------------===//

// Every tfc op is a pure function of its operands, and states its kernel
// family, FLOP count and symbolic shape rule (TfcInterfaces.td): `traits`
// must provide all three, or the op does not compile.
class Tfc_Op<string mnemonic, list<Trait> traits = []>
    : Op<Tfc_Dialect, mnemonic, !listconcat([Pure,
          Tfc_KernelFamilyOpInterface, Tfc_FlopCountOpInterface,
          Tfc_SymbolicShapeOpInterface], traits)>;

// A builder without result types for a Tfc_InferOp. `params` are the builder
// parameters; `body` adds the operands and sets the properties (attributes)
// of `$_state`. The result types are then inferred. Unlike the builders ODS
// would generate, a failed inference does not abort the process: the result
// gets a placeholder type and the verifier then reports the real problem at
// the op's location (for the frontend: the .tfm line).
class Tfc_InferredBuilder<dag params, code body>
    : OpBuilder<params, body # [{
  ::mlir::tfc::detail::setInferredResultTypes($_builder, $_state);
}]>;

// An op whose result types follow from its operands and attributes by one
// shape function, `inferShape`, written in C++ (ShapeInference.cpp). The same
// function serves every caller, so they cannot disagree:
//  - `inferReturnTypes` (builders, shape inference passes; silent unless it
//    is given a location),
//  - `verify()`, which reports errors on the op and then requires the
//    declared result types to equal the inferred ones.
// Ops list their convenience builders in `inferredBuilders`; the two generic
// builders (used by DRR and by generic code) are added here.
class Tfc_InferOp<string mnemonic, list<Trait> traits = []>
    : Tfc_Op<mnemonic, !listconcat(traits, [
          DeclareOpInterfaceMethods<InferTypeOpInterface>])> {
  let hasVerifier = 1;

  // ODS's own builders without result types call report_fatal_error when the
  // inference fails; library code must not abort, so all builders are ours.
  let skipDefaultBuilders = 1;
  list<OpBuilder> inferredBuilders = [];
  let builders = !listconcat(inferredBuilders, [
    // Explicit result types (the caller is responsible for them; the
    // verifier checks them).
    OpBuilder<(ins "::mlir::TypeRange":$resultTypes,
                   "::mlir::ValueRange":$operands,
                   CArg<"::llvm::ArrayRef<::mlir::NamedAttribute>", "{}">
                     :$attributes), [{
      $_state.addOperands(operands);
      $_state.addAttributes(attributes);
      $_state.addTypes(resultTypes);
      ::mlir::tfc::detail::attributesToProperties<ConcreteOpType>($_state);
    }]>,
    // Inferred result types.
    Tfc_InferredBuilder<(ins "::mlir::ValueRange":$operands,
                   CArg<"::llvm::ArrayRef<::mlir::NamedAttribute>", "{}">
                     :$attributes), [{
      $_state.addOperands(operands);
      $_state.addAttributes(attributes);
      ::mlir::tfc::detail::attributesToProperties<ConcreteOpType>($_state);
    }]>,
  ]);

  code inferShapeDecl = [{
    /// Checks the operands and attributes and computes the result types.
    /// Reports problems through `emitError`. Never asserts on bad input: it
    /// also runs on IR that has not been verified yet.
    static ::llvm::LogicalResult
    inferShape(Adaptor adaptor, ::mlir::tfc::EmitErrorFn emitError,
               ::llvm::SmallVectorImpl<::mlir::Type> &inferredTypes);
  }];
  let extraClassDeclaration = inferShapeDecl;
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(
        ::mlir::MLIRContext *context,
        ::std::optional<::mlir::Location> location,
        ::mlir::ValueRange operands, ::mlir::DictionaryAttr attributes,
        ::mlir::OpaqueProperties properties, ::mlir::RegionRange regions,
        ::llvm::SmallVectorImpl<::mlir::Type> &inferredTypes) {
      return ::mlir::tfc::detail::inferReturnTypes<$cppClass>(
          context, location, operands, attributes, properties, regions,
          inferredTypes);
    }
    ::llvm::LogicalResult $cppClass::verify() {
      ::llvm::SmallVector<::mlir::Type, 1> inferred;
      if (::mlir::failed(inferShape(Adaptor(*this),
                                    [&]() { return emitOpError(); }, inferred)))
        return ::mlir::failure();
      return ::mlir::tfc::detail::verifyResultTypes(getOperation(), inferred);
    }
  }];
}

#endif // TFC_IR_TFCDIALECT_TD
