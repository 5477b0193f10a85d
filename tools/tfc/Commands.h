//===- Commands.h - The tfc subcommands -------------------------*- C++ -*-===//
//
// Each subcommand registers its options on the CLI11 app and returns the
// callback that runs it; the callback's result is the process exit status.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_TOOLS_TFC_COMMANDS_H
#define TFC_TOOLS_TFC_COMMANDS_H

#include <functional>

namespace CLI {
class App;
} // namespace CLI

namespace tfc::driver {

using CommandRunner = std::function<int()>;

CommandRunner registerInfoCommand(CLI::App &app);
CommandRunner registerDumpCommand(CLI::App &app);

} // namespace tfc::driver

#endif // TFC_TOOLS_TFC_COMMANDS_H
