//===- Pipeline.cpp - the default tfc optimization pipeline ---------------===//

#include "passes/Pipeline.h"

#include "passes/Passes.h"

#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

namespace tfc {

static const llvm::StringRef kPassNames[] = {
    "verify",          "canonicalize",        "cse",
    "recognize-layernorm", "recognize-gelu",  "fuse-attention",
    "fuse-add-layernorm",  "fuse-bias-activation", "merge-qkv",
    "dce",             "weight-layout"};

llvm::ArrayRef<llvm::StringRef> defaultPipelinePassNames() {
  return kPassNames;
}

bool isPipelinePassName(llvm::StringRef name) {
  return name == "tfc-simplify" || llvm::is_contained(kPassNames, name);
}

LogicalResult buildDefaultPipeline(OpPassManager &pm,
                                   const std::set<std::string> &disabled,
                                   std::string *error) {
  for (const std::string &name : disabled) {
    if (isPipelinePassName(name))
      continue;
    if (error) {
      *error = "unknown pass '" + name + "'; the passes are:";
      for (llvm::StringRef known : kPassNames)
        *error += " " + known.str();
    }
    return failure();
  }
  auto enabled = [&](llvm::StringRef name) {
    if (disabled.count(name.str()))
      return false;
    return !(name == "canonicalize" && disabled.count("tfc-simplify"));
  };
  auto cleanup = [&](bool withDce) {
    if (enabled("canonicalize"))
      pm.addPass(createTfcSimplify());
    if (enabled("cse"))
      pm.addPass(createCSEPass());
    if (withDce && enabled("dce"))
      pm.addPass(createDeadCodeElimination());
  };
  cleanup(/*withDce=*/false);
  if (enabled("recognize-layernorm"))
    pm.addPass(createRecognizeLayerNorm());
  if (enabled("recognize-gelu"))
    pm.addPass(createRecognizeGelu());
  if (enabled("fuse-attention"))
    pm.addPass(createFuseAttention());
  if (enabled("fuse-add-layernorm"))
    pm.addPass(createFuseAddLayerNorm());
  if (enabled("fuse-bias-activation"))
    pm.addPass(createFuseBiasActivation());
  if (enabled("merge-qkv"))
    pm.addPass(createMergeQKV());
  cleanup(/*withDce=*/true);
  // Last: tfc-simplify would fold matmul(x, transpose(w)) back.
  if (enabled("weight-layout"))
    pm.addPass(createWeightLayout());
  return success();
}

LogicalResult runDefaultPipeline(ModuleOp module,
                                 const PipelineOptions &options,
                                 FusionReport *report) {
  MLIRContext *context = module.getContext();
  if (!options.disabled.count("verify") && failed(verify(module)))
    return failure();
  PassManager pm(context, module->getName().getStringRef());
  std::string error;
  if (failed(buildDefaultPipeline(pm, options.disabled, &error)))
    return module.emitError(error);
  if (options.printIRAfterAll) {
    // The passes run on the module itself, so printing the op a pass ran
    // on prints the whole module; module scope printing would require
    // disabling the context's multithreading.
    pm.enableIRPrinting(
        /*shouldPrintBeforePass=*/[](Pass *, Operation *) { return false; },
        /*shouldPrintAfterPass=*/[](Pass *, Operation *) { return true; },
        /*printModuleScope=*/false, /*printAfterOnlyOnChange=*/false,
        /*printAfterOnlyOnFailure=*/false,
        options.printStream ? *options.printStream : llvm::errs());
  }
  if (failed(pm.run(module)))
    return failure();
  if (report)
    *report = buildFusionReport(module, options.disabled);
  return success();
}

} // namespace tfc
