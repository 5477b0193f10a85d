//===- Driver.cpp - Shared plumbing of the tfc subcommands ----------------===//

#include "tools/tfc/Driver.h"

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

void driver::addPipelineOptions(CLI::App &command, ModelOptions &options) {
  command.add_option("--disable-pass", options.disabledPasses,
                     "Skip one pass of the pipeline (repeatable): " +
                         session::pipelinePassList());
  command.add_flag("--print-ir-after-all", options.printIRAfterAll,
                   "Print the IR after every pass (to stderr)");
  command.add_flag("--no-fusion", options.noFusion,
                   "Run no optimization passes (primitive ops only)");
  command
      .add_option("--dtype", options.dtype,
                  "Weights of matmuls and linears: f32 (default) or bf16 "
                  "(AMX tiles where the CPU has them, else AVX512_BF16 "
                  "dot products; f32 accumulation; docs/runtime.md#bf16)")
      ->check(CLI::IsMember({"f32", "bf16"}));
}

session::ModelSource driver::modelSource(const ModelOptions &options) {
  return session::ModelSource{options.path, options.sets};
}

session::PipelineSettings driver::pipelineSettings(const ModelOptions &options) {
  session::PipelineSettings settings;
  settings.disabledPasses = options.disabledPasses;
  settings.noFusion = options.noFusion;
  settings.bf16Weights = options.dtype == "bf16";
  settings.printIRAfterAll = options.printIRAfterAll ? &llvm::errs() : nullptr;
  return settings;
}

void driver::reportError(llvm::Error error) {
  llvm::handleAllErrors(
      std::move(error),
      [](const session::DiagnosticsError &diags) {
        llvm::errs() << diags.text();
      },
      [](const llvm::ErrorInfoBase &other) {
        llvm::errs() << "error: " << other.message() << "\n";
      });
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
