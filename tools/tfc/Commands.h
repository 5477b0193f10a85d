//===- Commands.h - The tfc subcommands -------------------------*- C++ -*-===//
//
// Each subcommand registers its options on the CLI11 app and returns the
// callback that runs it; the callback's result is the process exit status.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_TOOLS_TFC_COMMANDS_H
#define TFC_TOOLS_TFC_COMMANDS_H

#include <functional>
#include <string>

namespace CLI {
class App;
} // namespace CLI

namespace tfc::driver {

using CommandRunner = std::function<int()>;

CommandRunner registerInfoCommand(CLI::App &app);
CommandRunner registerDumpCommand(CLI::App &app);
CommandRunner registerRunCommand(CLI::App &app);
CommandRunner registerCheckCommand(CLI::App &app);
CommandRunner registerCompileCommand(CLI::App &app);
CommandRunner registerEmitCommand(CLI::App &app);
CommandRunner registerBenchCommand(CLI::App &app);
CommandRunner registerTokenizeCommand(CLI::App &app);
CommandRunner registerGenerateCommand(CLI::App &app);
CommandRunner registerEmbedCommand(CLI::App &app);

/// compile and emit differ only in their output (CompileCommand.cpp):
/// registers subcommand `name` with their shared options.
CommandRunner registerAotCommand(CLI::App &app, bool emitSources,
                                 const std::string &name,
                                 const std::string &description);

} // namespace tfc::driver

#endif // TFC_TOOLS_TFC_COMMANDS_H
