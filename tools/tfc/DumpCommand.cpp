//===- DumpCommand.cpp - tfc dump: print any stage of the pipeline --------===//
//
// --emit=ast prints the parsed tree, --emit=ir the elaborated tfc dialect
// (verified). Later stages (fused IR, Halide, lowered statements) plug in
// here as they exist.
//
//===----------------------------------------------------------------------===//

#include "tools/tfc/Commands.h"
#include "tools/tfc/Driver.h"

#include "frontend/ASTPrinter.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/OperationSupport.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <CLI/CLI.hpp>

using namespace tfc;
using namespace tfc::driver;

namespace {

struct DumpOptions {
  ModelOptions model;
  std::string emit = "ir";
  std::string output = "-";
  bool locations = false;
  bool includePrelude = false;
};

int runDump(const DumpOptions &options) {
  auto context = makeContext();
  bool needIR = options.emit != "ast";
  auto session = openModel(options.model, *context, needIR);
  if (!session)
    return 1;

  std::error_code error;
  llvm::ToolOutputFile out(options.output, error, llvm::sys::fs::OF_Text);
  if (error) {
    llvm::errs() << "error: cannot write '" << options.output
                 << "': " << error.message() << "\n";
    return 1;
  }
  if (options.emit == "ast") {
    // The prelude is module 0; show it only when asked.
    for (size_t i = options.includePrelude ? 0 : 1;
         i < session->modules.size(); ++i)
      printAST(*session->modules[i], out.os());
  } else {
    mlir::OpPrintingFlags flags;
    if (options.locations)
      flags.enableDebugInfo(/*enable=*/true, /*prettyForm=*/false)
          .useLocalScope(); // inline locations, not #loc aliases
    session->model.module->print(out.os(), flags);
    out.os() << "\n";
  }
  out.keep();
  return 0;
}

} // namespace

CommandRunner driver::registerDumpCommand(CLI::App &app) {
  auto options = std::make_shared<DumpOptions>();
  CLI::App *command = app.add_subcommand(
      "dump", "Print a stage of the compiler: the AST or the tfc IR");
  addModelOptions(*command, options->model);
  command
      ->add_option("--emit", options->emit,
                   "What to print: ast (parsed model), ir (elaborated tfc "
                   "dialect, verified)")
      ->check(CLI::IsMember({"ast", "ir"}))
      ->default_val("ir");
  command->add_option("-o,--output", options->output,
                      "Write to this file instead of stdout");
  command->add_flag("--locations", options->locations,
                    "Print each op's .tfm source location");
  command->add_flag("--prelude", options->includePrelude,
                    "With --emit=ast, also print the prelude");
  return [options] { return runDump(*options); };
}
