//===- Driver.cpp - Shared plumbing of the tfc subcommands ----------------===//

#include "tools/tfc/Driver.h"

#include "ir/TfcDialect.h"
#include "passes/Pipeline.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/raw_ostream.h"

#include <CLI/CLI.hpp>

#include <cmath>

using namespace tfc;
using namespace tfc::driver;

void driver::addModelOptions(CLI::App &command, ModelOptions &options) {
  command.add_option("model", options.path, "The model file (.tfm)")
      ->required();
  command.add_option("--set", options.sets,
                     "Override a config value, e.g. --set layers=2 "
                     "(repeatable)");
}

/// "verify, canonicalize, cse, ...": the names --disable-pass accepts.
static std::string pipelinePassList() {
  std::string names;
  for (llvm::StringRef name : defaultPipelinePassNames())
    names += (names.empty() ? "" : ", ") + name.str();
  return names;
}

void driver::addPipelineOptions(CLI::App &command, ModelOptions &options) {
  command.add_option("--disable-pass", options.disabledPasses,
                     "Skip one pass of the pipeline (repeatable): " +
                         pipelinePassList());
  command.add_flag("--print-ir-after-all", options.printIRAfterAll,
                   "Print the IR after every pass (to stderr)");
  command.add_flag("--no-fusion", options.noFusion,
                   "Run no optimization passes (primitive ops only)");
}

bool driver::optimize(Session &session, const ModelOptions &options,
                      FusionReport *report) {
  for (const std::string &name : options.disabledPasses) {
    if (!isPipelinePassName(name)) {
      llvm::errs() << "error: --disable-pass: unknown pass '" << name
                   << "' (passes: " << pipelinePassList() << ")\n";
      return false;
    }
  }
  if (options.noFusion)
    return true;
  PipelineOptions pipeline;
  pipeline.disabled.insert(options.disabledPasses.begin(),
                           options.disabledPasses.end());
  pipeline.printIRAfterAll = options.printIRAfterAll;
  if (mlir::failed(
          runDefaultPipeline(*session.model.module, pipeline, report))) {
    llvm::errs() << "error: the optimization pipeline failed\n";
    return false;
  }
  return true;
}

std::unique_ptr<mlir::MLIRContext> driver::makeContext() {
  auto context = std::make_unique<mlir::MLIRContext>();
  context->loadDialect<mlir::tfc::TfcDialect, mlir::func::FuncDialect>();
  // The elaborator creates ops by name; they must all be registered.
  context->allowUnregisteredDialects(false);
  return context;
}

std::unique_ptr<Session>
driver::openModel(const ModelOptions &options, mlir::MLIRContext &context,
                  bool elaborateIR,
                  const std::map<std::string, int64_t> &dimValues) {
  auto session = std::make_unique<Session>();
  ElaborateOptions elaborateOptions;
  elaborateOptions.dimValues = dimValues;
  for (const std::string &set : options.sets) {
    size_t eq = set.find('=');
    std::optional<Value> value;
    if (eq != std::string::npos && eq > 0)
      value = parseOverrideValue(set.substr(eq + 1));
    if (!value) {
      llvm::errs() << "error: --set expects key=value with an int, float, "
                      "bool or name as value, got '"
                   << set << "'\n";
      return nullptr;
    }
    elaborateOptions.overrides.emplace_back(set.substr(0, eq), *value);
  }

  session->loader =
      std::make_unique<ModelLoader>(session->sources, session->diags);
  session->modules = session->loader->load(options.path);
  if (!session->diags.hasErrors() && elaborateIR && !session->modules.empty())
    session->model = elaborate(session->modules, context, session->diags,
                               elaborateOptions);
  session->diags.print(llvm::errs());
  if (session->diags.hasErrors() || session->modules.empty())
    return nullptr;
  return session;
}

std::string driver::withThousands(double value) {
  std::string digits = std::to_string(static_cast<long long>(std::llround(value)));
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0 && digits[i - 1] != '-')
      out += ',';
    out += digits[i];
  }
  return out;
}
