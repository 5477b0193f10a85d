//===- tfc.cpp - The tfc command-line driver ------------------------------===//
//
// tfc info|dump|... MODEL: one subcommand per job. See README.md.
//
//===----------------------------------------------------------------------===//

#include "tools/tfc/Commands.h"

#include "codegen/aot/AotProcessSafety.h"

#include <CLI/CLI.hpp>

#include <iostream>
#include <map>
#include <string>

#ifndef TFC_VERSION
#define TFC_VERSION "unknown"
#endif

int main(int argc, char **argv) {
  // Before anything else: signals remove temporary files, LLVM's fatal
  // errors become messages (codegen/aot/AotProcessSafety.h).
  tfc::codegen::installProcessSafetyHandlers();
  CLI::App app{"tfc: a compiler for Transformer models (.tfm -> MLIR -> "
               "Halide)"};
  app.set_version_flag("--version", std::string("tfc ") + TFC_VERSION +
                                        " (MLIR 19, Halide 14)");
  app.require_subcommand(1);

  std::map<CLI::App *, tfc::driver::CommandRunner> runners;
  auto add = [&](tfc::driver::CommandRunner (*reg)(CLI::App &)) {
    size_t before = app.get_subcommands({}).size();
    tfc::driver::CommandRunner runner = reg(app);
    runners[app.get_subcommands({})[before]] = std::move(runner);
  };
  add(tfc::driver::registerInfoCommand);
  add(tfc::driver::registerDumpCommand);
  add(tfc::driver::registerRunCommand);
  add(tfc::driver::registerCheckCommand);
  add(tfc::driver::registerCompileCommand);
  add(tfc::driver::registerEmitCommand);
  add(tfc::driver::registerBenchCommand);
  add(tfc::driver::registerTokenizeCommand);
  add(tfc::driver::registerGenerateCommand);
  add(tfc::driver::registerEmbedCommand);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    return app.exit(e);
  }
  for (auto &[command, runner] : runners)
    if (command->parsed())
      return runner();
  return 1;
}
