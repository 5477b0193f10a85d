//===- PrintFusionReport.cpp - print the fusion report --------------------===//
//
// Pass `tfc-fusion-report`: prints tfc::buildFusionReport of the module
// (FusionReport.h) to stdout, for the lit tests of the report
// (`tfc-opt --tfc-default-pipeline --tfc-fusion-report -o /dev/null`). The
// passes named by its `disabled` option are reported as disabled. The module
// is not changed.
//
//===----------------------------------------------------------------------===//

#include "passes/FusionReport.h"
#include "passes/Passes.h"

#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace tfc {
#define GEN_PASS_DEF_PRINTFUSIONREPORT
#include "passes/Passes.h.inc"
} // namespace tfc

namespace tfc {
namespace {

struct PrintFusionReportPass
    : impl::PrintFusionReportBase<PrintFusionReportPass> {
  using PrintFusionReportBase::PrintFusionReportBase;

  void runOnOperation() override {
    std::set<std::string> names(disabled.begin(), disabled.end());
    buildFusionReport(getOperation(), names).print(llvm::outs());
    markAllAnalysesPreserved();
  }
};

} // namespace
} // namespace tfc
