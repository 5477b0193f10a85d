//===- Session.cpp - Open a model file and optimize its IR ----------------===//

#include "session/Session.h"

#include "ir/TfcDialect.h"
#include "passes/Pipeline.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/raw_ostream.h"

using namespace tfc;
using namespace tfc::session;

char DiagnosticsError::ID = 0;

void DiagnosticsError::log(llvm::raw_ostream &os) const { os << rendered; }

std::error_code DiagnosticsError::convertToErrorCode() const {
  return llvm::inconvertibleErrorCode();
}

std::unique_ptr<mlir::MLIRContext> session::makeContext() {
  auto context = std::make_unique<mlir::MLIRContext>();
  context->loadDialect<mlir::tfc::TfcDialect, mlir::func::FuncDialect>();
  // The elaborator creates ops by name; they must all be registered.
  context->allowUnregisteredDialects(false);
  return context;
}

/// The `--set key=value` overrides as the elaborator takes them.
static llvm::Expected<std::vector<std::pair<std::string, Value>>>
parseOverrides(const std::vector<std::string> &sets) {
  std::vector<std::pair<std::string, Value>> overrides;
  for (const std::string &set : sets) {
    size_t eq = set.find('=');
    std::optional<Value> value;
    if (eq != std::string::npos && eq > 0)
      value = parseOverrideValue(set.substr(eq + 1));
    if (!value)
      return llvm::createStringError(
          "--set expects key=value with an int, float, bool or "
          "name as value, got '" +
          set + "'");
    overrides.emplace_back(set.substr(0, eq), *value);
  }
  return overrides;
}

llvm::Expected<std::unique_ptr<Session>>
session::openModel(const ModelSource &source, mlir::MLIRContext &context,
                   bool elaborateIR,
                   const std::map<std::string, int64_t> &dimValues) {
  ElaborateOptions options;
  options.dimValues = dimValues;
  auto overrides = parseOverrides(source.sets);
  if (!overrides)
    return overrides.takeError();
  options.overrides = std::move(*overrides);

  auto session = std::make_unique<Session>();
  session->loader =
      std::make_unique<ModelLoader>(session->sources, session->diags);
  session->modules = session->loader->load(source.path);
  if (!session->diags.hasErrors() && elaborateIR && !session->modules.empty())
    session->model =
        elaborate(session->modules, context, session->diags, options);
  if (session->diags.hasErrors() || session->modules.empty()) {
    std::string rendered;
    llvm::raw_string_ostream os(rendered);
    session->diags.print(os);
    if (rendered.empty())
      os << "error: " << source.path << ": the model could not be read\n";
    return llvm::make_error<DiagnosticsError>(std::move(os.str()));
  }
  return session;
}

std::string session::pipelinePassList() {
  return defaultPipelinePassList(", ");
}

llvm::Error session::optimize(Session &session,
                              const PipelineSettings &settings,
                              FusionReport *report) {
  for (const std::string &name : settings.disabledPasses)
    if (!isPipelinePassName(name))
      return llvm::createStringError("--disable-pass: unknown pass '" + name +
                                     "' (passes: " + pipelinePassList() + ")");
  if (settings.noFusion && !settings.bf16Weights)
    return llvm::Error::success();
  PipelineOptions pipeline;
  pipeline.disabled.insert(settings.disabledPasses.begin(),
                           settings.disabledPasses.end());
  // --no-fusion --dtype bf16: only the weight casts.
  if (settings.noFusion)
    for (const std::string &name : defaultPipelinePassNames())
      if (name != "verify")
        pipeline.disabled.insert(name);
  pipeline.bf16Weights = settings.bf16Weights;
  pipeline.printIRAfterAll = settings.printIRAfterAll != nullptr;
  pipeline.printStream = settings.printIRAfterAll;

  // Pass failures are reported through MLIR's diagnostics: keep them for
  // the error instead of letting the default handler print them.
  std::string messages;
  llvm::raw_string_ostream os(messages);
  mlir::MLIRContext *context = session.model.module->getContext();
  mlir::ScopedDiagnosticHandler handler(context, [&](mlir::Diagnostic &diag) {
    os << "\n  " << diag.getLocation() << ": " << diag.str();
    return mlir::success();
  });
  if (mlir::failed(runDefaultPipeline(*session.model.module, pipeline, report)))
    return llvm::createStringError("the optimization pipeline failed" +
                                   os.str());
  return llvm::Error::success();
}
