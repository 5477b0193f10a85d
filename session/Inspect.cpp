//===- Inspect.cpp - What a compile session built, as text ----------------===//

#include "session/Inspect.h"

#include "codegen/KernelBuilder.h"
#include "codegen/aot/AotDump.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

using namespace tfc;
using namespace tfc::session;

static Halide::Target halideTarget(KernelTarget target) {
  return target == KernelTarget::Cuda ? codegen::cudaTarget()
                                      : codegen::hostTarget();
}

std::string session::targetName(KernelTarget target) {
  return halideTarget(target).to_string();
}

llvm::Expected<std::string> session::kernelText(const CompiledModel &model,
                                                size_t index, KernelText what,
                                                KernelTarget target) {
  if (model.stage != Stage::Planned || index >= model.plan().kernels.size())
    return llvm::createStringError("no kernel " + std::to_string(index) +
                                   " in the model's plan");
  if (what == KernelText::Ptx && target != KernelTarget::Cuda)
    return llvm::createStringError("PTX exists only for the CUDA schedules");
  const rt::PlanKernel &info = model.plan().kernels[index];
  Halide::Target halide = halideTarget(target);
  // Host kernels as `tfc run` compiles them in this process (AMX tiles
  // where the CPU has them; AOT libraries never use them).
  codegen::KernelOptions options = target == KernelTarget::Cuda
                                       ? codegen::KernelOptions()
                                       : codegen::hostKernelOptions();
  llvm::Expected<codegen::Kernel> kernel = codegen::buildKernel(
      model.built.kernelOps[index], halide, "tfc_" + info.name, options);
  if (!kernel)
    return kernel.takeError();
  Halide::Target code = halide.with_feature(Halide::Target::NoRuntime);
  switch (what) {
  case KernelText::Halide:
    return codegen::describePipeline(*kernel);
  case KernelText::Stmt:
  case KernelText::StmtHtml: {
    // As `tfc run` compiles the kernel (C sources keep every check).
    codegen::InProcessLowering asRun(*kernel);
    Halide::Target run = asRun.target().with_feature(Halide::Target::NoRuntime);
    return what == KernelText::Stmt ? codegen::loweredStmt(*kernel, run)
                                    : codegen::stmtHtml(*kernel, run);
  }
  case KernelText::C:
    return codegen::cSource(*kernel, code);
  case KernelText::Ptx:
    return codegen::ptxSource(*kernel, code);
  }
  return llvm::createStringError("unknown kernel text");
}

std::vector<EntryFlops> session::entryFlops(const CompiledModel &model) {
  std::vector<EntryFlops> result;
  if (model.stage == Stage::Parsed)
    return result;
  for (auto func : model.session->model.module->getOps<mlir::func::FuncOp>())
    result.push_back({func.getName().str(), countFlops(func)});
  return result;
}
