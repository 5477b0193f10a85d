//===- KernelCache.cpp - JIT-compiled kernels keyed by signature ----------===//
//
// JIT compilation follows Pipeline::compile_jit (Halide 14), minus its
// JITUserContext argument: the kernel is lowered with compile_to_module for
// the target plus Target::JIT (so that it links against Halide's shared JIT
// runtime instead of embedding a runtime of its own), and a JITModule turns
// the module into machine code. The module exports `<name>_argv`, the same
// argv wrapper an AOT object has. Without a user context the runtime calls
// the process-wide handlers installed by installHalideErrorHandlers.
//
//===----------------------------------------------------------------------===//

#include "codegen/KernelCache.h"
#include "codegen/AmxMatmul.h"
#include "codegen/AttentionStage.h"
#include "codegen/PanelMatmul.h"
#include "codegen/Parallel.h"

#include "llvm/ADT/StringSet.h"

#include <mutex>

#include "plan/KernelSignature.h"

#include "mlir/IR/Operation.h"

using namespace Halide;

namespace tfc::codegen {

/// The C functions kernels call that are not Halide's: the extern stages
/// (AmxMatmul.h, PanelMatmul.h, AttentionStage.h).
static Internal::JITModule externs() {
  static const Internal::JITModule module = [] {
    Internal::JITModule m;
    m.add_symbol_for_export(
        kAmxMatmulSymbol,
        Internal::JITModule::Symbol(
            reinterpret_cast<void *>(&tfc_amx_matmul_bf16)));
    m.add_symbol_for_export(
        kPanelMatmulSymbol,
        Internal::JITModule::Symbol(
            reinterpret_cast<void *>(&tfc_panel_matmul_f32)));
    m.add_symbol_for_export(
        kBf16PanelMatmulSymbol,
        Internal::JITModule::Symbol(
            reinterpret_cast<void *>(&tfc_panel_matmul_bf16)));
    m.add_symbol_for_export(kAttentionSymbol,
                            Internal::JITModule::Symbol(
                                reinterpret_cast<void *>(&tfc_attention_f32)));
    return m;
  }();
  return module;
}

KernelCache::KernelCache(Target target, KernelOptions options)
    : jitTarget(std::move(target)), options(options) {
  installHalideErrorHandlers();
}

KernelCache::~KernelCache() = default;

std::string KernelCache::nextName(mlir::Operation *op, size_t ahead) const {
  return ("tfc_" + op->getName().stripDialect() + "_" +
          llvm::Twine(ordered.size() + ahead))
      .str();
}

llvm::Expected<Kernel> KernelCache::build(mlir::Operation *op) const {
  if (!op)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "KernelCache: no op");
  if (const CompiledKernel *known = lookup(kernelSignature(op)))
    return buildKernel(op, jitTarget, known->name, options);
  return buildKernel(op, jitTarget, nextName(op), options);
}

llvm::Expected<std::unique_ptr<CompiledKernel>>
KernelCache::compile(mlir::Operation *op, const std::string &signature,
                     const std::string &name) const {
  KernelCompileTime time;
  time.begin(name, op->getName().getStringRef().str(), signature);
  PhaseClock clock;
  llvm::Expected<Kernel> kernel =
      buildKernel(op, jitTarget, name, options);
  if (!kernel)
    return kernel.takeError();
  time.buildSeconds = clock.lap();

  auto compiled = std::make_unique<CompiledKernel>();
  compiled->name = kernel->name;
  compiled->signature = signature;
  compiled->numInputs = static_cast<int>(kernel->inputs.size());
  compiled->numOutputs = static_cast<int>(op->getNumResults());
  if (llvm::Error err = withHalideErrors([&] {
        InProcessLowering lowering(*kernel);
        Target target = lowering.target().with_feature(Target::JIT);
        Pipeline pipeline = kernel->pipeline;
        Module module =
            pipeline.compile_to_module(kernel->arguments, kernel->name, target)
                .resolve_submodules();
        time.lowerSeconds = clock.lap();
        compiled->module = Internal::JITModule(
            module, module.get_function_by_name(kernel->name), {externs()});
        compiled->fn = reinterpret_cast<KernelFn>(
            reinterpret_cast<void *>(compiled->module.argv_function()));
      }))
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "compiling " + kernel->name + " (" +
                                       signature +
                                       "): " + llvm::toString(std::move(err)));
  if (!compiled->fn)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "compiling " + kernel->name +
                                       ": the JIT module has no argv entry");
  time.codegenSeconds = clock.lap();
  time.finish();
  time.name = kernel->name;
  time.variants = countVariants(kernel->pipeline);
  compiled->time = std::move(time);
  compiled->kernel = std::move(*kernel);
  return std::move(compiled);
}

void KernelCache::add(std::unique_ptr<CompiledKernel> compiled) {
  ordered.push_back(compiled.get());
  std::string signature = compiled->signature;
  bySignature[signature] = std::move(compiled);
}

llvm::Expected<const CompiledKernel &>
KernelCache::getOrCompile(mlir::Operation *op) {
  if (!op)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "KernelCache: no op");
  std::string signature = kernelSignature(op);
  if (const CompiledKernel *known = lookup(signature))
    return *known;
  llvm::Expected<std::unique_ptr<CompiledKernel>> compiled =
      compile(op, signature, nextName(op));
  if (!compiled)
    return compiled.takeError();
  const CompiledKernel &result = **compiled;
  add(std::move(*compiled));
  return result;
}

llvm::Error KernelCache::getOrCompileAll(llvm::ArrayRef<mlir::Operation *> ops,
                                         unsigned jobs,
                                         std::function<void()> compiledOne) {
  // Names first, in order, so that they do not depend on scheduling.
  struct Pending {
    mlir::Operation *op;
    std::string signature, name;
    std::unique_ptr<CompiledKernel> compiled;
  };
  std::vector<Pending> pending;
  llvm::StringSet<> seen;
  for (mlir::Operation *op : ops) {
    if (!op)
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "KernelCache: no op");
    std::string signature = kernelSignature(op);
    if (lookup(signature) || !seen.insert(signature).second)
      continue;
    std::string name = nextName(op, pending.size());
    pending.push_back({op, std::move(signature), std::move(name), nullptr});
  }
  std::mutex progressMutex;
  auto compileOne = [&](size_t i) -> llvm::Error {
    llvm::Expected<std::unique_ptr<CompiledKernel>> compiled =
        compile(pending[i].op, pending[i].signature, pending[i].name);
    if (!compiled)
      return compiled.takeError();
    pending[i].compiled = std::move(*compiled);
    if (compiledOne) {
      std::lock_guard<std::mutex> lock(progressMutex);
      compiledOne();
    }
    return llvm::Error::success();
  };
  std::vector<unsigned> costs;
  for (const Pending &p : pending)
    costs.push_back(compileCostHint(p.op));
  if (llvm::Error err =
          forEachIndex(pending.size(), jobs, compileOne, longestFirst(costs)))
    return err;
  for (Pending &p : pending)
    add(std::move(p.compiled));
  return llvm::Error::success();
}

const CompiledKernel *KernelCache::lookup(llvm::StringRef signature) const {
  auto it = bySignature.find(signature);
  return it == bySignature.end() ? nullptr : it->second.get();
}

std::vector<const CompiledKernel *> KernelCache::kernels() const {
  return ordered;
}

} // namespace tfc::codegen
