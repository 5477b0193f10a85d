//===- Driver.h - Shared plumbing of the tfc subcommands --------*- C++ -*-===//
//
// Every subcommand starts the same way: read a model file with its --set
// overrides, print diagnostics, and get verified IR. This is that path.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_TOOLS_TFC_DRIVER_H
#define TFC_TOOLS_TFC_DRIVER_H

#include "frontend/Diagnostics.h"
#include "frontend/Elaborator.h"
#include "frontend/ModelLoader.h"
#include "passes/FusionReport.h"

#include "mlir/IR/MLIRContext.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace CLI {
class App;
} // namespace CLI

namespace tfc::driver {

/// Options every command that reads a model accepts.
struct ModelOptions {
  std::string path;
  std::vector<std::string> sets; // "key=value"
  /// Pass pipeline (DESIGN §5) controls.
  std::vector<std::string> disabledPasses;
  bool printIRAfterAll = false;
  bool noFusion = false;
};

void addModelOptions(CLI::App &command, ModelOptions &options);
/// Adds --disable-pass, --print-ir-after-all and --no-fusion.
void addPipelineOptions(CLI::App &command, ModelOptions &options);

/// A model read from disk: sources, diagnostics and (if asked) its IR.
struct Session {
  Session() : diags(sources) {}
  SourceManager sources;
  DiagnosticEngine diags;
  std::unique_ptr<ModelLoader> loader;
  std::vector<const ast::Module *> modules;
  ElaboratedModel model;
};

/// A context with the dialects tfc uses registered and loaded.
std::unique_ptr<mlir::MLIRContext> makeContext();

/// Parses the model (and elaborates it when `elaborateIR`), printing
/// diagnostics to stderr. Returns null on any error.
std::unique_ptr<Session>
openModel(const ModelOptions &options, mlir::MLIRContext &context,
          bool elaborateIR, const std::map<std::string, int64_t> &dimValues = {});

/// Runs the default pass pipeline (fusion) on the session's module, as
/// `options` configure it; fills `report` when given. Prints errors.
bool optimize(Session &session, const ModelOptions &options,
              FusionReport *report = nullptr);

/// "124,439,808"
std::string withThousands(double value);

} // namespace tfc::driver

#endif // TFC_TOOLS_TFC_DRIVER_H
