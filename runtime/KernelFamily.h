//===- KernelFamily.h - Which kind of kernel an op compiles to --*- C++ -*-===//
//
// The kernel family of a tfc op: which kernel builder in codegen/ compiles
// it, and what the runtime may assume of the kernel. Each op states its
// family in ODS (ir/TfcInterfaces.td, `Tfc_Family`); the plan records it per
// kernel (runtime/Plan.h, PlanKernel::family), so that the runtime and
// `tfc bench` know an op's kind as data, without parsing signatures.
//
// Header-only and dependency-free: the dialect, codegen and the runtime (and
// thus generated standalone sources) share it. The names are part of the
// JSON plan format: renaming one is a format change.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_RUNTIME_KERNELFAMILY_H
#define TFC_RUNTIME_KERNELFAMILY_H

#include <cstdint>
#include <optional>
#include <string_view>

namespace tfc::rt {

enum class KernelFamily : uint8_t {
  /// No kernel: the value is bound (tfc.param) or stored in the plan
  /// (tfc.constant). Never the family of a plan kernel.
  None,
  /// One pure function of the broadcast operands per result element
  /// (codegen/ElementwiseKernels.cpp).
  Elementwise,
  /// A contraction (codegen/MatmulKernel.cpp).
  Matmul,
  /// Reductions and normalizations along an axis, and scans
  /// (codegen/ReductionKernels.cpp).
  Reduction,
  /// Copies, index lookups and index generators
  /// (codegen/DataMovementKernels.cpp).
  DataMovement,
  /// A row-major reinterpretation of its single input: the runtime may pass
  /// a contiguous input through as a view instead of running the kernel
  /// (codegen/DataMovementKernels.cpp builds the copy it otherwise runs).
  View,
  /// The ops the fusion passes create (codegen/FusedKernels.cpp).
  Fused,
};

/// "elementwise", "matmul", ...: the family's name in plans and reports.
constexpr std::string_view kernelFamilyName(KernelFamily family) {
  switch (family) {
  case KernelFamily::None:
    return "none";
  case KernelFamily::Elementwise:
    return "elementwise";
  case KernelFamily::Matmul:
    return "matmul";
  case KernelFamily::Reduction:
    return "reduction";
  case KernelFamily::DataMovement:
    return "data_movement";
  case KernelFamily::View:
    return "view";
  case KernelFamily::Fused:
    return "fused";
  }
  return "none";
}

/// The family named `name`, or nullopt.
inline std::optional<KernelFamily> parseKernelFamily(std::string_view name) {
  for (KernelFamily f :
       {KernelFamily::None, KernelFamily::Elementwise, KernelFamily::Matmul,
        KernelFamily::Reduction, KernelFamily::DataMovement, KernelFamily::View,
        KernelFamily::Fused})
    if (kernelFamilyName(f) == name)
      return f;
  return std::nullopt;
}

} // namespace tfc::rt

#endif // TFC_RUNTIME_KERNELFAMILY_H
