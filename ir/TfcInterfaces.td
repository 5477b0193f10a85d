//===- TfcInterfaces.td - per-op facts of the tfc dialect -*- tablegen -*-===//
//
// What the compiler must know of every op besides its semantics, stated on
// the op: its kernel family, its FLOP count and its symbolic shape rule.
// Tfc_Op (TfcDialect.td) attaches the three interfaces to every op and none
// has a default implementation, so an op without one of these facts does not
// compile: the generated interface model calls a method the op lacks.
//
// An op states each fact with a trait below: a common rule (`Tfc_Family<...>`,
// `Tfc_FlopsPerElement<n>`, `Tfc_BroadcastShape`, ...) or a rule of its own
// (`Tfc_CustomFlops`, `Tfc_CustomSymbolicShape`: the method is declared on
// the op and defined in OpFacts.cpp; forgetting the definition fails to
// link). The C++ side is ir/OpFacts.h.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_IR_TFCINTERFACES_TD
#define TFC_IR_TFCINTERFACES_TD

include "mlir/IR/OpBase.td"

//===----------------------------------------------------------------------===//
// Interfaces
//===----------------------------------------------------------------------===//

def Tfc_KernelFamilyOpInterface : OpInterface<"KernelFamilyOpInterface"> {
  let cppNamespace = "::mlir::tfc";
  let description = [{
    Which codegen builder compiles the op, and what the runtime may assume of
    its kernel (runtime/KernelFamily.h). The plan records it per kernel.
  }];
  let methods = [
    StaticInterfaceMethod<"the op's kernel family", "::tfc::rt::KernelFamily",
                          "getKernelFamily">,
  ];
}

def Tfc_FlopCountOpInterface : OpInterface<"FlopCountOpInterface"> {
  let cppNamespace = "::mlir::tfc";
  let description = [{
    The floating-point operations of one execution of the op (matmul and
    other, as `tfc bench` reports them); empty when a shape it needs is
    dynamic. Conventions (passes/FlopCount.h): a matmul of [M, K] x [K, N]
    is 2*M*N*K, an elementwise op a few FLOPs per result element.
  }];
  let methods = [
    InterfaceMethod<"FLOPs of one execution, or none for dynamic shapes",
                    "std::optional<::mlir::tfc::OpFlops>", "countFlops">,
  ];
}

def Tfc_SymbolicShapeOpInterface : OpInterface<"SymbolicShapeOpInterface"> {
  let cppNamespace = "::mlir::tfc";
  let description = [{
    The symbolic counterpart of the op's `inferShape`: from the operands'
    shapes as DimExprs over an entry's symbolic dimensions, the results'.
    The planner sizes every buffer with it before any kernel runs. Static IR
    dims are authoritative: the planner checks the rule against them.
  }];
  let methods = [
    InterfaceMethod<"appends one symbolic shape per result to `results`",
                    "::llvm::LogicalResult", "inferSymbolicShapes",
                    (ins "::mlir::tfc::SymbolicShapeContext &":$ctx,
                         "std::vector<::mlir::tfc::SymShape> &":$results)>,
  ];
}

//===----------------------------------------------------------------------===//
// Traits stating the facts
//===----------------------------------------------------------------------===//

// Kernel family: Elementwise, Matmul, Reduction, DataMovement, View, Fused, or
// None (no kernel: tfc.param, tfc.constant).
class Tfc_Family<string family>
    : ParamNativeOpTrait<"KernelFamilyIs",
                         "::tfc::rt::KernelFamily::" # family> {
  let cppNamespace = "::mlir::tfc";
}

// FLOPs: `n` per result element (elementwise ops, softmax, norms; 0 for ops
// that only move data), or `n` per operand-0 element (reductions).
class Tfc_FlopsPerElement<int n>
    : ParamNativeOpTrait<"FlopsPerElement", !cast<string>(n)> {
  let cppNamespace = "::mlir::tfc";
}
class Tfc_FlopsPerInputElement<int n>
    : ParamNativeOpTrait<"FlopsPerInputElement", !cast<string>(n)> {
  let cppNamespace = "::mlir::tfc";
}
def Tfc_CustomFlops : NativeOpTrait<"CustomFlops", [], [{
    /// FLOPs of one execution (OpFacts.cpp).
    std::optional<::mlir::tfc::OpFlops> countFlops();
  }]> {
  let cppNamespace = "::mlir::tfc";
}

// Symbolic shapes: the broadcast of all operands; the shape of operand `i`;
// the static result type; or a rule of the op's own.
def Tfc_BroadcastShape : NativeOpTrait<"BroadcastShape"> {
  let cppNamespace = "::mlir::tfc";
}
class Tfc_ShapeOfOperand<int i>
    : ParamNativeOpTrait<"ShapeOfOperand", !cast<string>(i)> {
  let cppNamespace = "::mlir::tfc";
}
def Tfc_StaticShape : NativeOpTrait<"StaticShape"> {
  let cppNamespace = "::mlir::tfc";
}
def Tfc_CustomSymbolicShape : NativeOpTrait<"CustomSymbolicShape", [], [{
    /// Result shapes over the entry's symbolic dims (OpFacts.cpp).
    ::llvm::LogicalResult
    inferSymbolicShapes(::mlir::tfc::SymbolicShapeContext &ctx,
                        std::vector<::mlir::tfc::SymShape> &results);
  }]> {
  let cppNamespace = "::mlir::tfc";
}

#endif // TFC_IR_TFCINTERFACES_TD
