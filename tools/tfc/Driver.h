//===- Driver.h - Shared plumbing of the tfc subcommands --------*- C++ -*-===//
//
// The command-line face of the compile session (session/): the options every
// command that reads a model shares, and how the session's errors print.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_TOOLS_TFC_DRIVER_H
#define TFC_TOOLS_TFC_DRIVER_H

#include "session/Session.h"

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
  /// Pass pipeline controls (docs/passes.md).
  std::vector<std::string> disabledPasses;
  bool printIRAfterAll = false;
  bool noFusion = false;
  /// --dtype: "f32" or "bf16" (product weights).
  std::string dtype = "f32";
};

void addModelOptions(CLI::App &command, ModelOptions &options);
/// Adds --disable-pass, --print-ir-after-all, --no-fusion and --dtype.
void addPipelineOptions(CLI::App &command, ModelOptions &options);

/// A model read from disk (session/Session.h).
using Session = session::Session;

/// The session library's settings for these options.
session::ModelSource modelSource(const ModelOptions &options);
session::PipelineSettings pipelineSettings(const ModelOptions &options);

/// Prints an error of the session library: diagnostics as rendered, anything
/// else after "error: ".
void reportError(llvm::Error error);

/// "124,439,808"
std::string withThousands(double value);

} // namespace tfc::driver

#endif // TFC_TOOLS_TFC_DRIVER_H
