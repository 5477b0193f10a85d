//===- ModelRunner.h - Compile a model and run it in process ----*- C++ -*-===//
//
// The path shared by `tfc run`, `tfc check` and `tfc bench`: elaborate the
// model, build its Plan, JIT-compile one Halide kernel per distinct op
// signature (layers share kernels), bind weights from a checkpoint or draw
// random ones, and hand everything to the runtime Executor.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_TOOLS_TFC_MODELRUNNER_H
#define TFC_TOOLS_TFC_MODELRUNNER_H

#include "tools/tfc/Driver.h"

#include "codegen/PlanBuilder.h"
#include "runtime/Executor.h"
#include "runtime/Safetensors.h"

#include <memory>
#include <optional>
#include <string>

namespace tfc::codegen {
class KernelCache;
} // namespace tfc::codegen

namespace tfc::driver {

/// Where weights come from.
struct WeightOptions {
  std::string path;      // a .safetensors checkpoint, or
  bool random = false;   // --random-weights
  uint64_t seed = 0;
};

void addWeightOptions(CLI::App &command, WeightOptions &options);

/// A model compiled for in-process execution.
class CompiledModel {
public:
  CompiledModel();
  ~CompiledModel();
  CompiledModel(CompiledModel &&) noexcept;

  std::unique_ptr<mlir::MLIRContext> context;
  std::unique_ptr<Session> session;
  BuiltPlan built;
  std::unique_ptr<codegen::KernelCache> cache;
  std::vector<rt::KernelFn> kernels;
  double compileSeconds = 0;

  const rt::Plan &plan() const { return built.plan; }
  /// The entry to run: `name` if given, else the model's first entry.
  const rt::PlanEntry *entry(const std::string &name) const;
};

/// Elaborates, runs the optimization pipeline (unless options disable it),
/// plans and JIT-compiles. Prints errors to stderr and returns nullopt on
/// failure.
std::optional<CompiledModel> compileModel(const ModelOptions &options);

/// Binds or draws the weights of `plan`. Warnings (unused checkpoint
/// tensors) go to stderr unless they start with one of `quietPrefixes`.
rt::Expected<rt::WeightMap>
loadWeights(const rt::Plan &plan, const WeightOptions &options,
            const std::vector<std::string> &quietPrefixes = {});

/// "f32[2, 7, 512]"
std::string describe(const rt::Tensor &tensor);
/// The first `count` values of a tensor, as text.
std::string firstValues(const rt::Tensor &tensor, size_t count);

/// True when stderr is a terminal (progress lines are only drawn there).
bool stderrIsTerminal();

} // namespace tfc::driver

#endif // TFC_TOOLS_TFC_MODELRUNNER_H
