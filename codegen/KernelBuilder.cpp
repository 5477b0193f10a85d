//===- KernelBuilder.cpp - Dispatch, signatures, Halide errors, AOT -------===//
//
// buildKernel checks the op's types, creates one ImageParam per operand and
// hands the op to its family's builder (ElementwiseKernels.cpp, ...); the
// builders return the output Func, which becomes the Pipeline.
//
// This file and the builders are compiled with exceptions (see
// CMakeLists.txt): Halide reports errors by throwing, and every entry point
// catches them in withHalideErrors.
//
//===----------------------------------------------------------------------===//

#include "codegen/AmxMatmul.h"
#include "codegen/AttentionStage.h"
#include "codegen/KernelSupport.h"
#include "codegen/PanelMatmul.h"

#include "ir/Describe.h"
#include "ir/TfcOps.h"
#include "plan/KernelSignature.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Location.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <mutex>
#include <sstream>

#include <unistd.h>

using namespace Halide;
using namespace tfc::codegen::detail;

namespace tfc::codegen {

// The fused ops' builder (FusedKernels.cpp): tfc.linear,
// tfc.add_layer_norm (one result, or two `with_sum`) and
// tfc.fused_attention.
llvm::Expected<Halide::Func> buildFused(detail::KernelContext &ctx);

namespace {
/// Hands the op to the builder of its kernel family, which the op states
/// (KernelFamilyOpInterface, ir/TfcInterfaces.td).
llvm::Expected<Halide::Func> buildForFamily(detail::KernelContext &ctx) {
  auto op = llvm::dyn_cast<mlir::tfc::KernelFamilyOpInterface>(ctx.op);
  if (!op)
    return ctx.error("not a tfc op");
  switch (op.getKernelFamily()) {
  case rt::KernelFamily::Elementwise:
    return buildElementwise(ctx);
  case rt::KernelFamily::Matmul:
    return buildMatmul(ctx);
  case rt::KernelFamily::Reduction:
    return buildReduction(ctx);
  case rt::KernelFamily::DataMovement:
  case rt::KernelFamily::View:
    return buildDataMovement(ctx);
  case rt::KernelFamily::Fused:
    return buildFused(ctx);
  case rt::KernelFamily::None:
    break;
  }
  return ctx.error("the op has no kernel");
}
} // namespace

//===----------------------------------------------------------------------===//
// Halide errors
//===----------------------------------------------------------------------===//

namespace {

/// Thrown by the compile-time error reporter; caught by withHalideErrors.
struct HalideFailure {
  std::string message;
};

std::string trimmed(llvm::StringRef text) { return text.trim().str(); }

std::mutex gMessagesMutex;
std::vector<std::string> gWarnings;
std::string gRuntimeError;

/// Halide calls error() from ErrorReport's destructor, which is declared
/// noexcept(false) so that Halide's own exceptions can leave it: throwing
/// from here is what Halide expects of a reporter that must not return.
class Reporter final : public CompileTimeErrorReporter {
public:
  void warning(const char *msg) override {
    std::lock_guard<std::mutex> lock(gMessagesMutex);
    // Bounded: a long-running process compiling many kernels must not grow.
    if (gWarnings.size() < 256)
      gWarnings.push_back(trimmed(msg));
  }
  void error(const char *msg) override { throw HalideFailure{trimmed(msg)}; }
};

/// The JIT runtime's error handler (the default one calls abort()). A
/// kernel that reports an error returns non-zero right after; the message
/// waits here for takeKernelRuntimeError. The first message is kept: later
/// ones are usually consequences of it.
void runtimeErrorHandler(JITUserContext *, const char *msg) {
  recordKernelRuntimeError(msg);
}

} // namespace

void installHalideErrorHandlers() {
  static std::once_flag once;
  std::call_once(once, [] {
    // Never destroyed: Halide keeps the pointer for the process' lifetime.
    static Reporter *reporter = new Reporter();
    set_custom_compile_time_error_reporter(reporter);
    // Keep whatever other default handlers are set; replace the error one.
    JITHandlers handlers =
        Internal::JITSharedRuntime::set_default_handlers(JITHandlers());
    handlers.custom_error = runtimeErrorHandler;
    Internal::JITSharedRuntime::set_default_handlers(handlers);
  });
}

llvm::Error withHalideErrors(llvm::function_ref<void()> fn) {
  installHalideErrorHandlers();
  try {
    fn();
    return llvm::Error::success();
  } catch (const HalideFailure &e) {
    return llvm::createStringError("Halide: " + e.message);
  } catch (const Halide::Error &e) {
    // Raised only if a reporter other than ours was installed.
    return llvm::createStringError("Halide: " + trimmed(e.what()));
  } catch (const std::exception &e) {
    return llvm::createStringError(llvm::Twine("Halide: ") + e.what());
  } catch (...) {
    return llvm::createStringError("Halide: unknown error");
  }
}

void recordKernelRuntimeError(const char *msg) {
  std::lock_guard<std::mutex> lock(gMessagesMutex);
  if (gRuntimeError.empty())
    gRuntimeError = trimmed(msg ? msg : "");
}

std::string takeKernelRuntimeError() {
  std::lock_guard<std::mutex> lock(gMessagesMutex);
  std::string message = std::move(gRuntimeError);
  gRuntimeError.clear();
  return message;
}

std::vector<std::string> takeHalideWarnings() {
  std::lock_guard<std::mutex> lock(gMessagesMutex);
  std::vector<std::string> warnings = std::move(gWarnings);
  gWarnings.clear();
  return warnings;
}

//===----------------------------------------------------------------------===//
// Types, targets, signatures
//===----------------------------------------------------------------------===//

llvm::Expected<Halide::Type> storageType(mlir::Type elementType) {
  if (elementType.isF32())
    return Float(32);
  if (elementType.isBF16())
    return BFloat(16);
  if (elementType.isInteger(32))
    return Int(32);
  if (elementType.isInteger(64))
    return Int(64);
  if (elementType.isInteger(1))
    return UInt(8);
  std::string text;
  llvm::raw_string_ostream os(text);
  elementType.print(os);
  return llvm::createStringError("unsupported element type " + text);
}

Halide::Target hostTarget() {
  Target host = get_host_target();
  const char *noBf16 = std::getenv("TFC_HOST_NO_AVX512_BF16");
  if (noBf16 && std::string(noBf16) == "1")
    host = host.without_feature(Target::AVX512_SapphireRapids);
  return host;
}

namespace {
/// The custom lowering passes every kernel for `target` has (buildKernel):
/// on the CPU, the one that lets bf16 products emit vdpbf16ps.
void addKernelLoweringPasses(Pipeline &pipeline, const Target &target) {
  if (!target.has_gpu_feature())
    addBf16DotProductLowering(pipeline);
}

/// Drops the asserts that check what the executor guarantees of every
/// buffer it passes (InProcessLowering): the argument and its memory
/// exist, the element type and rank are the plan's, no extent is negative.
class DropGuaranteedChecks : public Internal::IRMutator {
  using IRMutator::visit;
  Internal::Stmt visit(const Internal::AssertStmt *op) override {
    static const char *const guaranteed[] = {
        "halide_error_buffer_argument_is_null",
        "halide_error_host_is_null",
        "halide_error_device_dirty_with_no_device_support",
        "halide_error_bad_type",
        "halide_error_bad_dimensions",
        "halide_error_buffer_extents_negative",
    };
    if (const auto *call = op->message.as<Internal::Call>())
      for (const char *name : guaranteed)
        if (call->name == name)
          return Internal::Evaluate::make(0);
    return op;
  }
};
} // namespace

InProcessLowering::InProcessLowering(Kernel &kernel)
    : pipeline(kernel.pipeline), loweredFor(kernel.target),
      cpu(!kernel.target.has_gpu_feature()) {
  if (!cpu)
    return;
  pipeline.add_custom_lowering_pass(new DropGuaranteedChecks);
  loweredFor = loweredFor.with_feature(Target::NoBoundsQuery)
                   .with_feature(Target::DisableLLVMLoopOpt);
}

InProcessLowering::~InProcessLowering() {
  // The pipeline is shared with the kernel, which may still be compiled
  // for AOT (CompiledKernel::kernel). Halide clears passes only all at
  // once: the kernel's own are added again.
  if (!cpu)
    return;
  pipeline.clear_custom_lowering_passes();
  addKernelLoweringPasses(pipeline, loweredFor);
}

bool supportsBf16Products(const Halide::Target &target) {
  return target.arch == Target::X86 && !target.has_gpu_feature() &&
         target.has_feature(Target::AVX512_SapphireRapids);
}

llvm::Error checkBf16Products(const Halide::Target &target) {
  if (supportsBf16Products(target))
    return llvm::Error::success();
  return llvm::createStringError(
      "--dtype bf16 needs a CPU with AVX512_BF16 (vdpbf16ps); the target " +
      target.to_string() + " has none");
}

Halide::Target cudaTarget() {
  // The host side of CUDA kernels only checks buffers and launches: on
  // x86-64 it is built for a baseline (AVX2, FMA) rather than this CPU, so
  // that a library built here runs on the GPU machine's CPU too.
  Target host = get_host_target();
  Target target(host.os, host.arch, host.bits);
  if (host.arch == Target::X86 && host.bits == 64)
    for (Target::Feature f : {Target::SSE41, Target::AVX, Target::AVX2,
                              Target::F16C, Target::FMA})
      target = target.with_feature(f);
  return target.with_feature(Target::CUDA)
      .with_feature(Target::CUDACapability80);
}

Halide::Target openclTarget() {
  return get_host_target().with_feature(Target::OpenCL);
}

Halide::Target targetNamed(llvm::StringRef name) {
  if (name == "cuda")
    return cudaTarget();
  if (name == "opencl")
    return openclTarget();
  return hostTarget();
}

bool hasKernel(mlir::Operation *op) {
  auto family = llvm::dyn_cast_or_null<mlir::tfc::KernelFamilyOpInterface>(op);
  return family && family.getKernelFamily() != rt::KernelFamily::None;
}

unsigned compileCostHint(mlir::Operation *op) {
  // Thread CPU time per kernel, GPT-2 small forward, one compile thread:
  // the general fused attention 1.1 s, the tied LM head's matmul on panels
  // and the linears (GEMV and tiled variants) 0.2-0.3 s, add+LayerNorm
  // 0.15 s, the LM head's packing 0.15 s, gathers 0.1 s, data movement
  // 0.07-0.1 s.
  if (llvm::isa_and_nonnull<mlir::tfc::FusedAttentionOp>(op))
    return 1100;
  auto family = llvm::dyn_cast_or_null<mlir::tfc::KernelFamilyOpInterface>(op);
  if (!family)
    return 0;
  switch (family.getKernelFamily()) {
  case rt::KernelFamily::Matmul:
    return 250;
  case rt::KernelFamily::Fused:
  case rt::KernelFamily::Reduction:
    return 200;
  default:
    return 80;
  }
}

//===----------------------------------------------------------------------===//
// buildKernel
//===----------------------------------------------------------------------===//

std::string KernelOptions::cacheKey() const {
  std::string key;
  for (auto [set, name] : {std::pair{amxTiles, "amx-tiles"},
                           std::pair{f32PanelStage, "f32-panel-stage"},
                           std::pair{bf16PanelStage, "bf16-panel-stage"},
                           std::pair{attentionStage, "attention-stage"}})
    if (set)
      key += (key.empty() ? "" : " ") + std::string(name);
  if ((f32PanelStage || bf16PanelStage) && panelL2Bytes > 0)
    key += " panel-l2=" + std::to_string(panelL2Bytes);
  return key;
}

KernelOptions hostKernelOptions() {
  KernelOptions options;
  options.amxTiles = hostHasAmx();
  options.f32PanelStage = hostHasF32PanelStage();
  options.bf16PanelStage = hostHasBf16PanelStage();
  options.attentionStage = hostHasAttentionStage();
  if (options.f32PanelStage || options.bf16PanelStage)
    options.panelL2Bytes = std::max(::sysconf(_SC_LEVEL2_CACHE_SIZE), 0L);
  return options;
}

llvm::Expected<Kernel> buildKernel(mlir::Operation *op,
                                   const Halide::Target &target,
                                   llvm::StringRef name,
                                   const KernelOptions &options) {
  installHalideErrorHandlers();
  if (!op)
    return llvm::createStringError("buildKernel: no op");
  std::string what = describe(op);
  if (!hasKernel(op))
    return llvm::createStringError(what + ": no kernel for this op");
  // One result, or several (tfc.add_layer_norm's output and sum,
  // tfc.topk's values and indices): the builder then returns a Tuple-valued
  // Func, one element per result, and the kernel takes one output buffer per
  // result. ctx.resultStorage is result 0's storage type.
  if (op->getNumResults() < 1)
    return llvm::createStringError(what + ": expected a result");
  std::vector<mlir::RankedTensorType> resultTypes;
  for (mlir::Type type : op->getResultTypes()) {
    auto ranked = llvm::dyn_cast<mlir::RankedTensorType>(type);
    if (!ranked)
      return llvm::createStringError(what +
                                     ": the result is not a ranked tensor");
    resultTypes.push_back(ranked);
  }
  auto resultType = resultTypes.front();
  std::vector<Halide::Type> resultStorages;
  for (mlir::RankedTensorType t : resultTypes) {
    llvm::Expected<Halide::Type> storage = storageType(t.getElementType());
    if (!storage)
      return llvm::createStringError(what +
                       ": result: " + llvm::toString(storage.takeError()));
    resultStorages.push_back(*storage);
  }
  std::vector<std::pair<mlir::RankedTensorType, Halide::Type>> operands;
  for (auto [i, type] : llvm::enumerate(op->getOperandTypes())) {
    auto ranked = llvm::dyn_cast<mlir::RankedTensorType>(type);
    if (!ranked)
      return llvm::createStringError(what + ": operand " + std::to_string(i) +
                                     " is not a ranked tensor");
    llvm::Expected<Halide::Type> storage = storageType(ranked.getElementType());
    if (!storage)
      return llvm::createStringError(what + ": operand " + std::to_string(i) +
                                     ": " +
                                     llvm::toString(storage.takeError()));
    operands.push_back({ranked, *storage});
  }

  Kernel kernel;
  llvm::StringRef mnemonic = op->getName().stripDialect();
  kernel.name = name.empty() ? ("tfc_" + mnemonic).str() : name.str();
  llvm::StringRef base = kernel.name;
  base.consume_front("tfc_");
  kernel.signature = kernelSignature(op);
  kernel.target = target;

  llvm::Error builderError = llvm::Error::success();
  llvm::Error halideError = withHalideErrors([&] {
    KernelContext ctx;
    ctx.op = op;
    ctx.target = target;
    ctx.options = options;
    ctx.base = base.str();
    ctx.resultType = resultType;
    ctx.resultStorage = resultStorages.front();
    for (auto [i, operand] : llvm::enumerate(operands))
      ctx.inputs.emplace_back(operand.first, operand.second,
                              ctx.base + "_in" + std::to_string(i));

    llvm::Expected<Func> out = buildForFamily(ctx);
    if (!out) {
      builderError = out.takeError();
      return;
    }
    if (out->output_types().size() != resultTypes.size()) {
      builderError = ctx.error("kernel computes the wrong number of results");
      return;
    }
    for (auto [t, expected] : llvm::zip(out->output_types(), resultStorages))
      if (t != expected) {
        builderError = ctx.error("kernel computes the wrong element type");
        return;
      }

    // The result buffers follow the same contract as the inputs.
    std::vector<OutputImageParam> results = out->output_buffers();
    for (size_t r = 0; r < results.size(); ++r) {
      mlir::RankedTensorType type = resultTypes[r];
      int rank = static_cast<int>(type.getRank());
      // Halide constrains the min and extent of every output after the
      // first to those of the first (the results share one shape).
      for (int axis = 0; r == 0 && axis < rank; ++axis) {
        Internal::Dimension dim = results[r].dim(rank - 1 - axis);
        dim.set_min(0);
        if (!type.isDynamicDim(axis))
          dim.set_extent(static_cast<int>(type.getDimSize(axis)));
      }
      if (rank > 0)
        results[r].dim(0).set_stride(1);
    }

    kernel.output = *out;
    kernel.pipeline = Pipeline(*out);
    addKernelLoweringPasses(kernel.pipeline, target);
    for (TensorInput &in : ctx.inputs) {
      kernel.inputs.push_back(in.param);
      kernel.arguments.push_back(in.param);
    }
  });
  if (halideError) {
    llvm::consumeError(std::move(builderError));
    return llvm::createStringError(what + ": " +
                                   llvm::toString(std::move(halideError)));
  }
  if (builderError)
    return llvm::createStringError(llvm::toString(std::move(builderError)) +
                                   " (" + what + ")");
  return kernel;
}

//===----------------------------------------------------------------------===//
// AOT and inspection
//===----------------------------------------------------------------------===//

llvm::Expected<Halide::Module> compileToModule(const Kernel &kernel,
                                               const Halide::Target &target) {
  std::optional<Halide::Module> module;
  if (llvm::Error err = withHalideErrors([&] {
        Pipeline pipeline = kernel.pipeline;
        module =
            pipeline.compile_to_module(kernel.arguments, kernel.name, target);
      }))
    return llvm::createStringError(kernel.name + ": " +
                                   llvm::toString(std::move(err)));
  return std::move(*module);
}

llvm::Error
compileToFiles(const Kernel &kernel, const Halide::Target &target,
               const std::map<Halide::OutputFileType, std::string> &outputs) {
  if (llvm::Error err = withHalideErrors([&] {
        Pipeline pipeline = kernel.pipeline;
        pipeline.compile_to(outputs, kernel.arguments, kernel.name, target);
      }))
    return llvm::createStringError(kernel.name + ": " +
                                   llvm::toString(std::move(err)));
  return llvm::Error::success();
}

llvm::Expected<std::string> loweredStmt(const Kernel &kernel,
                                        const Halide::Target &target) {
  llvm::Expected<Halide::Module> module = compileToModule(kernel, target);
  if (!module)
    return module.takeError();
  std::string text;
  if (llvm::Error err = withHalideErrors([&] {
        std::ostringstream os;
        os << *module;
        text = os.str();
      }))
    return llvm::createStringError(kernel.name + ": " +
                                   llvm::toString(std::move(err)));
  return text;
}

} // namespace tfc::codegen
