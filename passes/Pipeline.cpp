//===- Pipeline.cpp - the default tfc optimization pipeline ---------------===//

#include "passes/Pipeline.h"

#include "passes/Passes.h"

#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;

namespace tfc {

namespace {

/// One step of the default pipeline.
struct Step {
  std::unique_ptr<Pass> (*create)();
  /// The name the step is disabled by when it is not the pass's argument
  /// (which is then accepted too).
  llvm::StringRef name = {};
};

/// The default pipeline after the initial verify, in order: the one list of
/// its passes. The step names (tfc --disable-pass, tfc-opt
/// --tfc-default-pipeline="disable=...", the help texts, the error for an
/// unknown name) are the passes' arguments (Passes.td), read from here.
const Step kSteps[] = {
    {createTfcSimplify, "canonicalize"},
    {createCSEPass},
    {createRecognizeLayerNorm},
    {createRecognizeGelu},
    {createFuseAttention},
    {createFuseAddLayerNorm},
    {createFuseBiasActivation},
    {createMergeQKV},
    {createKvCache},
    {createTfcSimplify, "canonicalize"},
    {createCSEPass},
    {createDeadCodeElimination},
    // Last: tfc-simplify would fold matmul(x, transpose(w)) back.
    {createWeightLayout},
};

/// The pass argument of a step.
std::string argumentOf(const Step &step) {
  return step.create()->getArgument().str();
}

std::string nameOf(const Step &step) {
  return step.name.empty() ? argumentOf(step) : step.name.str();
}

/// "verify", then every step's name once, in pipeline order.
const std::vector<std::string> &stepNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> result = {"verify"};
    for (const Step &step : kSteps)
      if (!llvm::is_contained(result, nameOf(step)))
        result.push_back(nameOf(step));
    return result;
  }();
  return names;
}

} // namespace

llvm::ArrayRef<std::string> defaultPipelinePassNames() { return stepNames(); }

std::string defaultPipelinePassList(llvm::StringRef separator) {
  std::string list;
  for (const std::string &name : stepNames())
    list += (list.empty() ? "" : separator.str()) + name;
  return list;
}

bool isPipelinePassName(llvm::StringRef name) {
  return llvm::is_contained(stepNames(), name) ||
         llvm::any_of(kSteps, [&](const Step &step) {
           return argumentOf(step) == name;
         });
}

LogicalResult buildDefaultPipeline(OpPassManager &pm,
                                   const std::set<std::string> &disabled,
                                   std::string *error) {
  for (const std::string &name : disabled) {
    if (isPipelinePassName(name))
      continue;
    if (error)
      *error = "unknown pass '" + name +
               "'; the passes are: " + defaultPipelinePassList(" ");
    return failure();
  }
  for (const Step &step : kSteps) {
    std::unique_ptr<Pass> pass = step.create();
    if (!disabled.count(nameOf(step)) &&
        !disabled.count(pass->getArgument().str()))
      pm.addPass(std::move(pass));
  }
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
  if (options.bf16Weights)
    pm.addPass(createBf16Weights());
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

namespace {

/// "Steps of the pipeline not to run (verify, ...)": kept alive, because
/// cl::desc holds only a reference.
const std::string &disableDescription() {
  static const std::string text = "Steps of the pipeline not to run (" +
                                  defaultPipelinePassList(", ") + ")";
  return text;
}

struct DefaultPipelineOptions : PassPipelineOptions<DefaultPipelineOptions> {
  ListOption<std::string> disable{*this, "disable",
                                  llvm::cl::desc(disableDescription())};
};

} // namespace

void registerTfcPassesAndPipeline() {
  registerTfcPasses();
  registerPassPipeline(
      "tfc-default-pipeline",
      "The default tfc pipeline: cleanups, recognition and fusion "
      "(passes/Pipeline.h)",
      [](OpPassManager &pm, llvm::StringRef text,
         llvm::function_ref<LogicalResult(const llvm::Twine &)> errorHandler) {
        DefaultPipelineOptions options;
        if (failed(options.parseFromString(text)))
          return failure();
        std::set<std::string> disabled(options.disable.begin(),
                                       options.disable.end());
        disabled.erase("verify"); // an opt driver verifies its input anyway
        std::string error;
        if (failed(buildDefaultPipeline(pm, disabled, &error)))
          return errorHandler(error);
        return success();
      },
      [](llvm::function_ref<void(const mlir::detail::PassOptions &)> handler) {
        handler(DefaultPipelineOptions());
      });
}

} // namespace tfc
