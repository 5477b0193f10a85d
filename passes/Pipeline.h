//===- Pipeline.h - the default tfc optimization pipeline -------*- C++ -*-===//
//
// The default pipeline (docs/passes.md): verify, then the passes of the step
// table in Pipeline.cpp, the one list of them: cleanups (tfc-simplify as
// "canonicalize", cse), recognition, fusion, cleanups and dce, and last
// weight-layout.
//
// Shape inference needs no pass of its own: every tfc op infers its type
// when it is built and the verifier (run after every pass) checks it.
//
// Each step can be disabled by its name (defaultPipelinePassNames(): the
// passes' arguments from Passes.td, "canonicalize" for tfc-simplify, whose
// argument is accepted too). Disabling "canonicalize" or "cse" disables both
// of its runs.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_PASSES_PIPELINE_H
#define TFC_PASSES_PIPELINE_H

#include "passes/FusionReport.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <set>
#include <string>

namespace tfc {

struct PipelineOptions {
  /// Names of steps not to run (see defaultPipelinePassNames()).
  std::set<std::string> disabled;
  /// Print the module after every pass (MLIR's IR printing).
  bool printIRAfterAll = false;
  /// Where the IR is printed; llvm::errs() when null.
  llvm::raw_ostream *printStream = nullptr;
  /// Product weights in bf16 (`--dtype bf16`): run `bf16-weights` after the
  /// default steps (it is not one of them: not disabled by name).
  bool bf16Weights = false;
};

/// The step names, in pipeline order, each once: "verify", then the
/// pipeline's passes.
llvm::ArrayRef<std::string> defaultPipelinePassNames();

/// defaultPipelinePassNames() joined by `separator` (help texts, errors).
std::string defaultPipelinePassList(llvm::StringRef separator);

/// Whether `name` names a step that can be disabled (aliases included).
bool isPipelinePassName(llvm::StringRef name);

/// Adds the pipeline's passes (all but the initial verify) to `pm`.
/// Fails, adding nothing, if `disabled` holds an unknown name; `error` then
/// says which one and lists the valid names.
mlir::LogicalResult buildDefaultPipeline(mlir::OpPassManager &pm,
                                         const std::set<std::string> &disabled,
                                         std::string *error = nullptr);

/// Verifies `module`, runs the pipeline on it, and, if `report` is given,
/// fills it from the optimized module. Errors (an unknown pass name, IR that
/// does not verify, a pass failure) are emitted as diagnostics on the
/// module's context and give failure.
mlir::LogicalResult runDefaultPipeline(mlir::ModuleOp module,
                                       const PipelineOptions &options,
                                       FusionReport *report = nullptr);

/// Registers every tfc pass (Passes.td, the fusion report included) and the
/// default pipeline as `tfc-default-pipeline` (option `disable=NAME,...`;
/// an unknown name is an error of the pass manager, not a crash) with
/// MLIR's pass registry, for opt drivers (tfc-opt).
void registerTfcPassesAndPipeline();

} // namespace tfc

#endif // TFC_PASSES_PIPELINE_H
