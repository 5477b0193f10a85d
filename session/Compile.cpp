//===- Compile.cpp - A model compiled for in-process execution ------------===//

#include "session/Compile.h"

#include "session/KernelDiskCache.h"

#include "codegen/KernelBuilder.h"
#include "codegen/KernelCache.h"
#include "codegen/Parallel.h"

#include "llvm/Support/FileSystem.h"

#include <chrono>
#include <mutex>
#include <optional>
#include <set>

using namespace tfc;
using namespace tfc::session;

struct CompiledModel::Anchor {
  std::mutex mutex;
  CompiledModel *model = nullptr;
  /// The settings compileKernels deferred kernels with.
  CacheSettings cache;
  bool report = false;
};

CompiledModel::CompiledModel() : anchor(std::make_shared<Anchor>()) {
  anchor->model = this;
}

CompiledModel::~CompiledModel() {
  if (!anchor)
    return;
  std::lock_guard<std::mutex> lock(anchor->mutex);
  anchor->model = nullptr;
}

CompiledModel::CompiledModel(CompiledModel &&other) noexcept {
  *this = std::move(other);
}

// Member by member, so that the anchor can follow the model: every member
// of CompiledModel (Compile.h) is moved here.
CompiledModel &CompiledModel::operator=(CompiledModel &&other) noexcept {
  if (this == &other)
    return *this;
  if (anchor) {
    std::lock_guard<std::mutex> lock(anchor->mutex);
    anchor->model = nullptr;
  }
  context = std::move(other.context);
  session = std::move(other.session);
  built = std::move(other.built);
  kernels = std::move(other.kernels);
  stats = std::move(other.stats);
  stage = other.stage;
  jit = std::move(other.jit);
  disk = std::move(other.disk);
  anchor = std::move(other.anchor);
  if (anchor) {
    std::lock_guard<std::mutex> lock(anchor->mutex);
    anchor->model = this;
  }
  return *this;
}

const rt::PlanEntry *CompiledModel::entry(const std::string &name) const {
  if (name.empty())
    return plan().entries.empty() ? nullptr : &plan().entries.front();
  return plan().findEntry(name);
}

llvm::Expected<const rt::PlanEntry *>
CompiledModel::requireEntry(const std::string &name) const {
  if (const rt::PlanEntry *found = entry(name))
    return found;
  return llvm::createStringError("the model has no entry '" + name +
                                 "' (it has: " + session::entryNames(plan()) +
                                 ")");
}

std::string session::entryNames(const rt::Plan &plan) {
  std::string names;
  for (const rt::PlanEntry &e : plan.entries)
    names += (names.empty() ? "" : ", ") + e.name;
  return names;
}

llvm::Expected<CompiledModel> session::openUpTo(const CompileOptions &options,
                                                Stage last) {
  CompiledModel model;
  model.context = makeContext();
  llvm::Expected<std::unique_ptr<Session>> opened =
      openModel(options.model, *model.context,
                /*elaborateIR=*/last != Stage::Parsed, options.dimValues);
  if (!opened)
    return opened.takeError();
  model.session = std::move(*opened);
  model.stage = last == Stage::Parsed ? Stage::Parsed : Stage::Elaborated;
  if (llvm::Error err = advance(model, options, last))
    return std::move(err);
  return model;
}

llvm::Error session::advance(CompiledModel &model,
                             const CompileOptions &options, Stage last) {
  if (model.stage == Stage::Parsed && last > Stage::Parsed)
    return llvm::createStringError(
        "the model was opened without its IR: open it up to a later stage");
  if (model.stage < Stage::Optimized && last >= Stage::Optimized) {
    if (llvm::Error err = optimize(*model.session, options.pipeline,
                                   options.fusionReport))
      return err;
    model.stage = Stage::Optimized;
  }
  if (model.stage < Stage::Planned && last >= Stage::Planned) {
    PlanOptions planOptions;
    planOptions.genericPanelProducts =
        options.hostKernels && codegen::hostKernelOptions().f32PanelStage;
    llvm::Expected<BuiltPlan> built =
        buildPlan(*model.session->model.module, planOptions);
    if (!built)
      return built.takeError();
    model.built = std::move(*built);
    model.kernels.assign(model.built.plan.kernels.size(), nullptr);
    model.stage = Stage::Planned;
  }
  return llvm::Error::success();
}

llvm::Expected<CompiledModel> session::plan(const CompileOptions &options) {
  if (options.pipeline.bf16Weights)
    if (llvm::Error err = codegen::checkBf16Products(codegen::hostTarget()))
      return std::move(err);
  CompileOptions host = options;
  host.hostKernels = true;
  llvm::Expected<CompiledModel> model = openUpTo(host, Stage::Planned);
  if (!model)
    return model.takeError();
  for (const std::string &name : options.entries)
    if (llvm::Expected<const rt::PlanEntry *> found = model->requireEntry(name);
        !found)
      return found.takeError();
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
    for (const rt::PlanStep &step : entry.steps) {
      if (step.op != rt::PlanStep::Op::Kernel)
        continue;
      for (int32_t kernel : {step.kernel, step.variant.kernel})
        if (kernel >= 0 && seen.insert(static_cast<size_t>(kernel)).second)
          order.push_back(static_cast<size_t>(kernel));
    }
  }
  return order;
}

/// Opens the disk cache, or says in `stats` why it is not used. Without a
/// cache (--no-cache) the kernels still compile to objects linked into a
/// shared object, in a temporary folder (returned: the caller removes it
/// once they are loaded) that no other process reads: Halide's JIT builds
/// its own runtime in every process (~0.5 s of one core, which every
/// compile thread waits for), this path loads the runtime prebuilt with tfc.
/// Where that is not possible (no C compiler), the JIT compiles them.
static std::string openDiskCache(CompiledModel &model,
                                 const CacheSettings &cache) {
  std::string temporary;
  if (!cache.enabled) {
    llvm::SmallString<128> path;
    if (llvm::sys::fs::createUniqueDirectory("tfc-kernels", path))
      return "";
    temporary = std::string(path);
  }
  std::string dir = !temporary.empty()   ? temporary
                    : cache.dir.empty() ? defaultCacheDir()
                                        : cache.dir;
  auto disk = KernelDiskCache::open(dir, codegen::hostTarget());
  if (!disk) {
    if (temporary.empty())
      model.stats.cacheProblem = llvm::toString(disk.takeError());
    else
      llvm::consumeError(disk.takeError());
    return temporary;
  }
  model.disk = std::move(*disk);
  return temporary;
}

/// Counts finished kernels for the progress callback (called from the
/// compiling threads).
class Progress {
public:
  Progress(const CompileOptions &options, size_t count)
      : callback(options.progress), count(count) {}
  void step() {
    if (!callback)
      return;
    std::lock_guard<std::mutex> lock(mutex);
    callback(++done, count);
  }

private:
  const std::function<void(size_t, size_t)> &callback;
  size_t count;
  size_t done = 0;
  std::mutex mutex;
};

/// Fetches the `needed` kernels from the disk cache (loaded, or compiled and
/// stored), in parallel. Those it could not get (a failed link, a full disk)
/// are returned for the JIT, whose errors are the kernel's own; the cache's
/// problem goes to the stats.
static std::vector<size_t> fromDiskCache(CompiledModel &model,
                                         const std::vector<size_t> &needed,
                                         const CompileOptions &options,
                                         Progress &progress) {
  std::vector<mlir::Operation *> ops;
  std::vector<std::string> signatures;
  for (size_t index : needed) {
    ops.push_back(model.built.kernelOps[index]);
    signatures.push_back(model.plan().kernels[index].signature);
  }
  std::vector<char> hits;
  std::vector<llvm::Expected<rt::KernelFn>> results =
      model.disk->getOrCompileAll(ops, signatures, options.jobs, hits,
                                  [&progress] { progress.step(); },
                                  options.report ? &model.stats.report
                                                 : nullptr);
  std::vector<size_t> missed;
  for (size_t i = 0; i < needed.size(); ++i) {
    llvm::Expected<rt::KernelFn> &fn = results[i];
    if (fn) {
      model.kernels[needed[i]] = *fn;
      ++(hits[i] ? model.stats.cacheHits : model.stats.compiled);
    } else {
      // The first problem, in kernel order (deterministic).
      std::string problem = llvm::toString(fn.takeError());
      if (model.stats.cacheProblem.empty())
        model.stats.cacheProblem = problem;
      missed.push_back(needed[i]);
    }
  }
  return missed;
}

/// JIT-compiles the `needed` kernels in parallel.
static llvm::Error byJit(CompiledModel &model,
                         const std::vector<size_t> &needed,
                         const CompileOptions &options, Progress &progress) {
  if (needed.empty())
    return llvm::Error::success();
  if (!model.jit)
    model.jit = std::make_unique<codegen::KernelCache>(codegen::hostTarget());
  std::vector<mlir::Operation *> ops;
  for (size_t index : needed)
    ops.push_back(model.built.kernelOps[index]);
  if (llvm::Error err = model.jit->getOrCompileAll(
          ops, options.jobs, [&progress] { progress.step(); }))
    return llvm::createStringError("compiling kernels: " + llvm::toString(std::move(err)));
  for (size_t index : needed) {
    const codegen::CompiledKernel *compiled =
        model.jit->lookup(model.plan().kernels[index].signature);
    if (!compiled)
      return llvm::createStringError("compiling kernel " +
                       model.plan().kernels[index].signature +
                       ": the JIT did not keep it");
    model.kernels[index] = compiled->fn;
    if (options.report)
      model.stats.report.kernels.push_back(compiled->time);
    ++model.stats.compiled;
  }
  return llvm::Error::success();
}

/// Gets the `needed` kernels (loaded from the disk cache, or compiled).
static llvm::Error getKernels(CompiledModel &model, std::vector<size_t> needed,
                              const CompileOptions &options) {
  auto start = std::chrono::steady_clock::now();
  model.stats.jobs = codegen::compileJobs(options.jobs);
  // The report is of this call's compiles (stats.compiled etc. add up).
  model.stats.report = codegen::CompileReport();
  model.stats.report.start = start;
  std::string temporary = openDiskCache(model, options.cache);
  Progress progress(options, needed.size());
  if (model.disk)
    needed = fromDiskCache(model, needed, options, progress);
  if (!temporary.empty()) {
    // Loaded kernels stay mapped; a problem only sends them to the JIT.
    llvm::sys::fs::remove_directories(temporary);
    model.stats.cacheProblem.clear();
  }
  llvm::Error err = byJit(model, needed, options, progress);
  model.stats.seconds +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  return err;
}

llvm::Error session::compileKernels(CompiledModel &model,
                                    const CompileOptions &options) {
  if (model.stage != Stage::Planned)
    return llvm::createStringError("compiling kernels needs a planned model");
  std::vector<bool> viewOnly =
      options.deferViewKernels
          ? rt::viewOnlyKernels(model.plan(), options.entries)
          : std::vector<bool>();
  std::vector<size_t> needed;
  size_t deferred = 0;
  for (size_t index : kernelsOf(model.plan(), options.entries)) {
    if (model.kernels[index])
      continue;
    if (!viewOnly.empty() && viewOnly[index])
      ++deferred;
    else
      needed.push_back(index);
  }
  model.stats.deferred = deferred;
  model.anchor->cache = options.cache;
  model.anchor->report = options.report;
  return getKernels(model, std::move(needed), options);
}

/// Compiles kernel `index` of the model `anchor` follows, for an Executor
/// (executorOptions).
static rt::Expected<rt::KernelFn> compileDeferred(CompiledModel::Anchor &anchor,
                                                  size_t index) {
  std::lock_guard<std::mutex> lock(anchor.mutex);
  CompiledModel *model = anchor.model;
  if (!model)
    return rt::Status::error("its model is gone");
  if (index >= model->kernels.size())
    return rt::Status::error("the model has no kernel " +
                             std::to_string(index));
  if (!model->kernels[index]) {
    CompileOptions options;
    options.cache = anchor.cache;
    options.jobs = 1;
    options.report = anchor.report;
    if (llvm::Error err = getKernels(*model, {index}, options))
      return rt::Status::error(llvm::toString(std::move(err)));
    if (model->stats.deferred > 0)
      --model->stats.deferred;
  }
  if (!model->kernels[index])
    return rt::Status::error("no kernel came back");
  return model->kernels[index];
}

llvm::Expected<CompiledModel> session::compile(const CompileOptions &options) {
  llvm::Expected<CompiledModel> model = plan(options);
  if (!model)
    return model.takeError();
  if (llvm::Error err = compileKernels(*model, options))
    return std::move(err);
  return model;
}

rt::ExecutorOptions session::executorOptions(CompiledModel &model) {
  rt::ExecutorOptions options;
  options.kernelErrorMessage = codegen::takeKernelRuntimeError;
  if (model.stats.deferred > 0)
    options.compileKernel = [anchor = model.anchor](size_t index) {
      return compileDeferred(*anchor, index);
    };
  return options;
}
