//===- tfc-opt.cpp - mlir-opt for the tfc dialect -------------------------===//
//
// Parses, verifies, transforms and prints IR that uses the tfc dialect. The
// lit tests drive the dialect and the passes through it:
//
//   tfc-opt --fuse-attention in.mlir          one pass (passes/Passes.td)
//   tfc-opt --tfc-default-pipeline in.mlir    the default pipeline
//   tfc-opt --tfc-default-pipeline="disable=fuse-attention,merge-qkv"
//   tfc-opt --tfc-default-pipeline --tfc-fusion-report -o /dev/null in.mlir
//                                             the fusion report on stdout
//   tfc-opt --tfc-default-pipeline="disable=merge-qkv"
//           --tfc-fusion-report="disabled=merge-qkv" ...
//
//===----------------------------------------------------------------------===//

#include "ir/TfcDialect.h"
#include "passes/FusionReport.h"
#include "passes/Passes.h"
#include "passes/Pipeline.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/raw_ostream.h"

#include <set>
#include <string>

namespace {

struct DefaultPipelineOptions
    : mlir::PassPipelineOptions<DefaultPipelineOptions> {
  ListOption<std::string> disable{
      *this, "disable",
      llvm::cl::desc("Steps of the pipeline not to run (verify, "
                     "canonicalize, cse, recognize-layernorm, "
                     "recognize-gelu, fuse-attention, fuse-add-layernorm, "
                     "fuse-bias-activation, merge-qkv, dce)")};
};

/// Prints tfc::buildFusionReport of the module to stdout (lit tests of the
/// report; `tfc dump --fusion-report` is the user's way).
struct FusionReportPass
    : mlir::PassWrapper<FusionReportPass, mlir::OperationPass<mlir::ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(FusionReportPass)
  llvm::StringRef getArgument() const final { return "tfc-fusion-report"; }
  llvm::StringRef getDescription() const final {
    return "Print the fusion report of the module to stdout";
  }
  FusionReportPass() = default;
  FusionReportPass(const FusionReportPass &other) : PassWrapper(other) {}

  ListOption<std::string> disabled{
      *this, "disabled",
      llvm::cl::desc("Passes that were disabled (the report then says so)")};

  void runOnOperation() override {
    std::set<std::string> names(disabled.begin(), disabled.end());
    tfc::buildFusionReport(getOperation(), names).print(llvm::outs());
    markAllAnalysesPreserved();
  }
};

} // namespace

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  registry.insert<mlir::tfc::TfcDialect, mlir::func::FuncDialect,
                  mlir::arith::ArithDialect>();
  // canonicalize, cse, symbol-dce, inline, ... and the tfc passes.
  mlir::registerTransformsPasses();
  tfc::registerTfcPasses();
  mlir::PassRegistration<FusionReportPass>();
  mlir::PassPipelineRegistration<DefaultPipelineOptions>(
      "tfc-default-pipeline",
      "The default tfc pipeline: cleanups, recognition and fusion "
      "(passes/Pipeline.h)",
      [](mlir::OpPassManager &pm, const DefaultPipelineOptions &options) {
        std::set<std::string> disabled(options.disable.begin(),
                                       options.disable.end());
        disabled.erase("verify"); // tfc-opt verifies its input anyway
        std::string error;
        if (mlir::failed(tfc::buildDefaultPipeline(pm, disabled, &error)))
          llvm::report_fatal_error(llvm::StringRef(error),
                                   /*gen_crash_diag=*/false);
      });
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "tfc optimizer driver\n", registry));
}
