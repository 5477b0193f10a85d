//===- Compile.cpp - A model compiled for in-process execution ------------===//

#include "session/Compile.h"

#include "session/KernelDiskCache.h"

#include "codegen/KernelBuilder.h"
#include "codegen/KernelCache.h"

#include <chrono>
#include <set>

using namespace tfc;
using namespace tfc::session;

CompiledModel::CompiledModel() = default;
CompiledModel::~CompiledModel() = default;
CompiledModel::CompiledModel(CompiledModel &&) noexcept = default;
CompiledModel &CompiledModel::operator=(CompiledModel &&) noexcept = default;

const rt::PlanEntry *CompiledModel::entry(const std::string &name) const {
  if (name.empty())
    return plan().entries.empty() ? nullptr : &plan().entries.front();
  return plan().findEntry(name);
}

std::string session::entryNames(const rt::Plan &plan) {
  std::string names;
  for (const rt::PlanEntry &e : plan.entries)
    names += (names.empty() ? "" : ", ") + e.name;
  return names;
}

static llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

llvm::Expected<CompiledModel> session::plan(const CompileOptions &options) {
  CompiledModel model;
  model.context = makeContext();
  llvm::Expected<std::unique_ptr<Session>> opened =
      openModel(options.model, *model.context, /*elaborateIR=*/true);
  if (!opened)
    return opened.takeError();
  model.session = std::move(*opened);
  if (llvm::Error err = optimize(*model.session, options.pipeline))
    return std::move(err);
  llvm::Expected<BuiltPlan> built =
      buildPlan(*model.session->model.module, codegen::kernelSignature);
  if (!built)
    return built.takeError();
  model.built = std::move(*built);
  model.kernels.assign(model.built.plan.kernels.size(), nullptr);
  for (const std::string &name : options.entries)
    if (!model.plan().findEntry(name))
      return makeError("the model has no entry '" + name + "' (it has: " +
                       entryNames(model.plan()) + ")");
  return model;
}

/// The kernel indices the entries use, in first-use order.
static std::vector<size_t> kernelsOf(const rt::Plan &plan,
                                     const std::vector<std::string> &entries) {
  std::vector<size_t> order;
  std::set<size_t> seen;
  for (const rt::PlanEntry &entry : plan.entries) {
    bool wanted = entries.empty();
    for (const std::string &name : entries)
      wanted = wanted || name == entry.name;
    if (!wanted)
      continue;
    for (const rt::PlanStep &step : entry.steps)
      if (seen.insert(static_cast<size_t>(step.kernel)).second)
        order.push_back(static_cast<size_t>(step.kernel));
  }
  return order;
}

/// Opens the disk cache, or says in `stats` why it is not used.
static void openDiskCache(CompiledModel &model, const CacheSettings &cache) {
  if (!cache.enabled)
    return;
  std::string dir = cache.dir.empty() ? defaultCacheDir() : cache.dir;
  auto disk = KernelDiskCache::open(dir, codegen::hostTarget());
  if (!disk) {
    model.stats.cacheProblem = llvm::toString(disk.takeError());
    return;
  }
  model.disk = std::move(*disk);
}

/// Kernel `index` from the disk cache when there is one, else by JIT.
static llvm::Expected<rt::KernelFn> getKernel(CompiledModel &model,
                                              size_t index) {
  mlir::Operation *op = model.built.kernelOps[index];
  const std::string &signature = model.plan().kernels[index].signature;
  if (model.disk) {
    bool hit = false;
    llvm::Expected<rt::KernelFn> fn =
        model.disk->getOrCompile(op, signature, hit);
    if (fn) {
      ++(hit ? model.stats.cacheHits : model.stats.compiled);
      return fn;
    }
    // Keep going without the cache (a failed link, a full disk): the JIT
    // below reports the kernel's own errors.
    model.stats.cacheProblem = llvm::toString(fn.takeError());
  }
  if (!model.jit)
    model.jit = std::make_unique<codegen::KernelCache>(codegen::hostTarget());
  llvm::Expected<const codegen::CompiledKernel &> compiled =
      model.jit->getOrCompile(op);
  if (!compiled)
    return compiled.takeError();
  ++model.stats.compiled;
  return compiled->fn;
}

llvm::Error session::compileKernels(CompiledModel &model,
                                    const CompileOptions &options) {
  auto start = std::chrono::steady_clock::now();
  openDiskCache(model, options.cache);
  std::vector<size_t> needed = kernelsOf(model.plan(), options.entries);
  for (size_t i = 0; i < needed.size(); ++i) {
    size_t index = needed[i];
    if (model.kernels[index])
      continue;
    if (options.progress)
      options.progress(i, needed.size());
    llvm::Expected<rt::KernelFn> fn = getKernel(model, index);
    if (!fn)
      return makeError("compiling kernel " +
                       model.plan().kernels[index].signature + ": " +
                       llvm::toString(fn.takeError()));
    model.kernels[index] = *fn;
  }
  model.stats.seconds += std::chrono::duration<double>(
                             std::chrono::steady_clock::now() - start)
                             .count();
  return llvm::Error::success();
}

llvm::Expected<CompiledModel> session::compile(const CompileOptions &options) {
  llvm::Expected<CompiledModel> model = plan(options);
  if (!model)
    return model.takeError();
  if (llvm::Error err = compileKernels(*model, options))
    return std::move(err);
  return model;
}
