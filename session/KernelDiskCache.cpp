//===- KernelDiskCache.cpp - Compiled kernels kept on disk ----------------===//

#include "session/KernelDiskCache.h"

#include "codegen/CompileTime.h"
#include "codegen/KernelBuilder.h"
#include "codegen/Parallel.h"
#include "runtime/FileWriter.h"
#include "runtime/ThreadPool.h"

#include "mlir/IR/Operation.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SHA256.h"

#include <dlfcn.h>
#include <map>
#include <mutex>
#include <optional>
#include <unistd.h>

#ifndef TFC_VERSION
#define TFC_VERSION "unknown"
#endif
#ifndef TFC_CODEGEN_HASH
#define TFC_CODEGEN_HASH "unknown"
#endif
#ifndef TFC_HALIDE_IDENTITY
#define TFC_HALIDE_IDENTITY "unknown"
#endif
#ifndef TFC_PREBUILT_RUNTIME_DIR
#define TFC_PREBUILT_RUNTIME_DIR ""
#endif

using namespace tfc;
using namespace tfc::session;

namespace {

/// Hex SHA-256 of the parts, each followed by a NUL so that ("ab", "c")
/// and ("a", "bc") differ.
std::string hashOf(std::initializer_list<llvm::StringRef> parts) {
  llvm::SHA256 sha;
  for (llvm::StringRef part : parts) {
    sha.update(part);
    sha.update(llvm::StringRef("\0", 1));
  }
  return llvm::toHex(sha.final(), /*LowerCase=*/true);
}

/// A name in `folder` that no other writer uses: "<stem>.tmp.<pid>.<n>".
std::string temporaryPath(const std::string &folder, llvm::StringRef stem,
                          llvm::StringRef extension) {
  static std::atomic<unsigned> counter{0};
  llvm::SmallString<256> path(folder);
  llvm::sys::path::append(path, stem + ".tmp." + llvm::Twine(getpid()) + "." +
                                    llvm::Twine(counter++) + extension);
  return std::string(path);
}

/// The C compiler driver that links objects into shared objects.
llvm::Expected<std::string> findLinker() {
  for (const char *name : {"cc", "gcc", "clang", "c++"})
    if (llvm::ErrorOr<std::string> path = llvm::sys::findProgramByName(name))
      return *path;
  return llvm::createStringError(
      "no C compiler (cc, gcc, clang) on PATH to link cached "
      "kernels");
}

/// Writes `module`'s object code to `path`: compiled in memory and written
/// with checked writes (a full disk is an error, never Halide's LLVM
/// aborting on a failed file write).
llvm::Error writeObject(const Halide::Module &module, const std::string &path) {
  Halide::Buffer<uint8_t> bytes;
  if (llvm::Error err = codegen::withHalideErrors([&] {
        bytes = module.submodules().empty()
                    ? module.compile_to_buffer()
                    : module.resolve_submodules().compile_to_buffer();
      }))
    return err;
  rt::Status written =
      rt::writeFileAtomically(path, bytes.data(), bytes.size_in_bytes());
  if (!written.ok())
    return llvm::createStringError(written.message());
  return llvm::Error::success();
}

/// Removes a temporary file if the process is interrupted while it exists.
class TempGuard {
public:
  explicit TempGuard(const std::string &path)
      : path(path), slot(rt::registerTempPath(path)) {}
  ~TempGuard() {
    llvm::sys::fs::remove(path);
    if (slot >= 0)
      rt::unregisterTempPath(slot);
  }

private:
  std::string path;
  int slot;
};

/// `cc -shared -o so objects...`; the objects are removed either way.
llvm::Error linkShared(const std::string &linker,
                       llvm::ArrayRef<std::string> objects,
                       const std::string &so) {
  llvm::SmallVector<llvm::StringRef, 8> args = {linker, "-shared", "-o", so};
  for (const std::string &object : objects)
    args.push_back(object);
  std::string message;
  llvm::StringRef devNull("/dev/null");
  std::optional<llvm::StringRef> redirects[] = {devNull, devNull, devNull};
  int rc = llvm::sys::ExecuteAndWait(linker, args, std::nullopt, redirects,
                                     /*SecondsToWait=*/120, 0, &message);
  for (const std::string &object : objects)
    llvm::sys::fs::remove(object);
  if (rc != 0) {
    llvm::sys::fs::remove(so);
    return llvm::createStringError("linking " + so + " with " + linker +
                                   " failed" +
                                   (message.empty() ? "" : ": " + message));
  }
  return llvm::Error::success();
}

/// Moves a finished temporary file to its final name.
llvm::Error publish(const std::string &temporary, const std::string &path) {
  if (std::error_code ec = llvm::sys::fs::rename(temporary, path)) {
    llvm::sys::fs::remove(temporary);
    return llvm::createStringError("cannot rename " + temporary + " to " +
                                   path + ": " + ec.message());
  }
  return llvm::Error::success();
}

/// Gives the finished file `shared` a second name `path` (a hard link made
/// under a temporary name and renamed; a copy where the file system has no
/// hard links).
llvm::Error publishLink(const std::string &shared, const std::string &folder,
                        const std::string &path) {
  std::string temporary =
      temporaryPath(folder, llvm::sys::path::stem(path), ".so");
  if (llvm::sys::fs::create_hard_link(shared, temporary))
    if (std::error_code ec = llvm::sys::fs::copy_file(shared, temporary)) {
      llvm::sys::fs::remove(temporary);
      return llvm::createStringError("cannot write " + temporary + ": " +
                                     ec.message());
    }
  return publish(temporary, path);
}

/// The file name of Halide's runtime for `targetString`, in a cache folder
/// and in the prebuilt runtime's folder alike.
std::string runtimeFileName(const std::string &targetString) {
  std::string key = hashOf({codegenIdentity(), targetString, "runtime"});
  return "runtime-" + key.substr(0, 16) + ".so";
}

/// Writes the object of Halide's standalone runtime for `target`.
llvm::Error writeRuntimeObject(const Halide::Target &target,
                               const std::string &object) {
  Halide::Target t = target.without_feature(Halide::Target::NoRuntime)
                         .without_feature(Halide::Target::JIT);
  return writeObject(Halide::Module("standalone_runtime", t), object);
}

void runtimeErrorHandler(void *, const char *msg) {
  codegen::recordKernelRuntimeError(msg);
}

} // namespace

std::string session::defaultCacheDir() {
  if (const char *xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    return std::string(xdg) + "/tfc";
  if (const char *home = std::getenv("HOME"); home && *home)
    return std::string(home) + "/.cache/tfc";
  return "";
}

std::string session::codegenIdentity() {
  return std::string("tfc ") + TFC_VERSION + " codegen " + TFC_CODEGEN_HASH +
         " Halide " + TFC_HALIDE_IDENTITY;
}

std::string session::prebuiltRuntimeDir() { return TFC_PREBUILT_RUNTIME_DIR; }

llvm::Expected<std::string>
session::writeRuntime(const std::string &dir, const Halide::Target &target) {
  if (std::error_code ec = llvm::sys::fs::create_directories(dir))
    return llvm::createStringError("cannot create " + dir + ": " +
                                   ec.message());
  llvm::Expected<std::string> linker = findLinker();
  if (!linker)
    return linker.takeError();
  std::string object = temporaryPath(dir, "runtime", ".o");
  std::string so = temporaryPath(dir, "runtime", ".so");
  TempGuard objectGuard(object), soGuard(so);
  if (llvm::Error err = writeRuntimeObject(target, object))
    return std::move(err);
  if (llvm::Error err = linkShared(*linker, {object}, so))
    return std::move(err);
  std::string path = dir + "/" + runtimeFileName(target.to_string());
  if (llvm::Error err = publish(so, path))
    return std::move(err);
  return path;
}

struct KernelDiskCache::Impl {
  std::string folder;
  std::string linker;
  std::string targetString;
  Halide::Target target;
  /// This process's kernel options (AMX tiles), part of every kernel's key:
  /// the AMX kernels call a function of this executable.
  codegen::KernelOptions options;
  void *runtime = nullptr;
  std::mutex handlesMutex; // guards handles (getOrCompile is thread-safe)
  std::vector<void *> handles;

  /// The runtime's file, and the runtime loaded from it if it is there.
  std::string runtimePath() const;
  llvm::Error loadRuntime();
  /// Writes the runtime's object to `object`, and its time to `time`.
  llvm::Error runtimeObject(const std::string &object,
                            codegen::KernelCompileTime &time) const;
  llvm::Expected<rt::KernelFn> load(const std::string &path,
                                    const std::string &symbol);
  struct Entry {
    mlir::Operation *op;
    std::string signature, name, path;
  };
  /// Builds and lowers `entry`'s kernel (for Target::NoRuntime), saying in
  /// `time` how long that took.
  llvm::Expected<Halide::Module>
  lowerKernel(const Entry &entry, codegen::KernelCompileTime &time) const;
  /// Writes the object of `entry`'s kernel to `object`, and where its time
  /// went to `time`.
  llvm::Error kernelObject(const Entry &entry, const std::string &object,
                           codegen::KernelCompileTime &time) const;
  /// Compiles `entries` on up to `jobs` threads (the runtime too when it is
  /// not loaded), links them into one shared object and stores it under
  /// each entry's path.
  llvm::Error compileAll(llvm::ArrayRef<Entry> entries, unsigned jobs,
                         const std::function<void()> &compiledOne,
                         codegen::CompileReport *report);
};

KernelDiskCache::KernelDiskCache(std::unique_ptr<Impl> impl)
    : impl(std::move(impl)) {}

// Handles stay open: compiled functions may be called until the process
// ends, and the runtime must outlive every kernel bound to it.
KernelDiskCache::~KernelDiskCache() = default;

const std::string &KernelDiskCache::folder() const { return impl->folder; }

llvm::Expected<std::unique_ptr<KernelDiskCache>>
KernelDiskCache::open(const std::string &dir, const Halide::Target &target) {
  if (dir.empty())
    return llvm::createStringError(
        "no kernel cache folder: set XDG_CACHE_HOME or HOME, or "
        "pass --cache-dir");
  auto impl = std::make_unique<Impl>();
  llvm::SmallString<256> folder(dir);
  llvm::sys::path::append(folder, "v1");
  impl->folder = std::string(folder);
  if (std::error_code ec = llvm::sys::fs::create_directories(impl->folder))
    return llvm::createStringError("cannot create the kernel cache folder " +
                                   impl->folder + ": " + ec.message());
  llvm::Expected<std::string> linker = findLinker();
  if (!linker)
    return linker.takeError();
  impl->linker = *linker;
  impl->target = target;
  impl->targetString = target.to_string();
  impl->options = codegen::hostKernelOptions();
  // A missing runtime is built with the first kernels (compileAll), on the
  // same threads.
  if (llvm::Error err = impl->loadRuntime())
    return std::move(err);
  return std::unique_ptr<KernelDiskCache>(new KernelDiskCache(std::move(impl)));
}

std::string KernelDiskCache::Impl::runtimePath() const {
  return folder + "/" + runtimeFileName(targetString);
}

llvm::Error
KernelDiskCache::Impl::runtimeObject(const std::string &object,
                                     codegen::KernelCompileTime &time) const {
  time.begin("halide_runtime", "runtime");
  codegen::PhaseClock clock;
  llvm::Error err = writeRuntimeObject(target, object);
  time.codegenSeconds = clock.lap();
  time.finish();
  return err;
}

/// One runtime per process and target: a second cache object (another model
/// in the same process) reuses it. It is loaded from the cache folder, else
/// from the runtime prebuilt with tfc when that one is for this target (the
/// same file name); a runtime in neither stays unloaded (`runtime` null) and
/// compileAll builds it with the kernels.
llvm::Error KernelDiskCache::Impl::loadRuntime() {
  static std::mutex mutex;
  static std::map<std::string, void *> loaded;
  std::lock_guard<std::mutex> lock(mutex);
  if (void *known = loaded[targetString]) {
    runtime = known;
    return llvm::Error::success();
  }
  std::string path = runtimePath();
  if (!llvm::sys::fs::exists(path))
    path = prebuiltRuntimeDir() + "/" + runtimeFileName(targetString);
  if (!llvm::sys::fs::exists(path))
    return llvm::Error::success();
  runtime = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (!runtime)
    return llvm::createStringError("cannot load " + path + ": " + dlerror());
  using Handler = void (*)(void *, const char *);
  using SetHandler = Handler (*)(Handler);
  if (auto set = reinterpret_cast<SetHandler>(
          dlsym(runtime, "halide_set_error_handler")))
    set(runtimeErrorHandler);
  // The kernels' parallel loops run on tfc's pool (runtime/ThreadPool.h).
  using ParallelFor = int (*)(void *, rt::ParallelTask, int, int, uint8_t *);
  using SetParallelFor = ParallelFor (*)(ParallelFor);
  if (auto set = reinterpret_cast<SetParallelFor>(
          dlsym(runtime, "halide_set_custom_do_par_for")))
    set(&rt::parallelFor);
  loaded[targetString] = runtime;
  return llvm::Error::success();
}

llvm::Expected<rt::KernelFn>
KernelDiskCache::Impl::load(const std::string &path,
                            const std::string &symbol) {
  // The kernels compiled together are one file under several names:
  // dlopen gives the same handle for each (it compares files, not names).
  void *handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle)
    return llvm::createStringError("cannot load " + path + ": " + dlerror());
  void *fn = dlsym(handle, symbol.c_str());
  if (!fn) {
    dlclose(handle);
    return llvm::createStringError(path + " has no function " + symbol);
  }
  std::lock_guard<std::mutex> lock(handlesMutex);
  handles.push_back(handle);
  return reinterpret_cast<rt::KernelFn>(fn);
}

llvm::Expected<Halide::Module>
KernelDiskCache::Impl::lowerKernel(const Entry &entry,
                                   codegen::KernelCompileTime &time) const {
  time.begin(entry.name, entry.op->getName().getStringRef().str(),
             entry.signature);
  codegen::PhaseClock clock;
  llvm::Expected<codegen::Kernel> kernel =
      codegen::buildKernel(entry.op, target, entry.name, options);
  if (!kernel)
    return kernel.takeError();
  time.buildSeconds = clock.lap();
  codegen::InProcessLowering lowering(*kernel);
  Halide::Target t = lowering.target().with_feature(Halide::Target::NoRuntime);
  std::optional<Halide::Module> module;
  if (llvm::Error err = codegen::withHalideErrors([&] {
        module = kernel->pipeline.compile_to_module(kernel->arguments,
                                                    kernel->name, t);
      }))
    return std::move(err);
  time.lowerSeconds = clock.lap();
  time.variants = codegen::countVariants(kernel->pipeline);
  return std::move(*module);
}

llvm::Error
KernelDiskCache::Impl::kernelObject(const Entry &entry,
                                    const std::string &object,
                                    codegen::KernelCompileTime &time) const {
  llvm::Expected<Halide::Module> module = lowerKernel(entry, time);
  if (!module)
    return module.takeError();
  codegen::PhaseClock clock;
  if (llvm::Error err = writeObject(*module, object))
    return err;
  time.codegenSeconds = clock.lap();
  time.finish();
  return llvm::Error::success();
}

/// The runtime's compile time in compileCostHint's units (0.73 s).
constexpr unsigned kRuntimeCostHint = 750;

llvm::Error
KernelDiskCache::Impl::compileAll(llvm::ArrayRef<Entry> entries, unsigned jobs,
                                  const std::function<void()> &compiledOne,
                                  codegen::CompileReport *report) {
  // Task i < entries.size() compiles entry i; the last one, if the runtime
  // is not loaded, the runtime.
  bool withRuntime = runtime == nullptr;
  size_t count = entries.size() + (withRuntime ? 1 : 0);
  std::vector<codegen::KernelCompileTime> times(count);
  std::vector<std::string> objects;
  std::vector<std::unique_ptr<TempGuard>> guards;
  std::vector<unsigned> costs;
  for (const Entry &e : entries) {
    objects.push_back(temporaryPath(folder, e.name, ".o"));
    costs.push_back(codegen::compileCostHint(e.op));
  }
  std::string runtimeObjectPath = temporaryPath(folder, "runtime", ".o");
  objects.push_back(runtimeObjectPath);
  costs.push_back(kRuntimeCostHint);
  for (const std::string &object : objects)
    guards.push_back(std::make_unique<TempGuard>(object));
  std::mutex progressMutex;
  auto compileOne = [&](size_t i) -> llvm::Error {
    if (i == entries.size())
      return runtimeObject(runtimeObjectPath, times[i]);
    if (llvm::Error err = kernelObject(entries[i], objects[i], times[i]))
      return err;
    if (compiledOne) {
      std::lock_guard<std::mutex> lock(progressMutex);
      compiledOne();
    }
    return llvm::Error::success();
  };
  costs.resize(count);
  if (llvm::Error err = codegen::forEachIndex(count, jobs, compileOne,
                                              codegen::longestFirst(costs)))
    return err;
  if (report)
    report->kernels.insert(report->kernels.end(), times.begin(), times.end());
  auto linkStart = std::chrono::steady_clock::now();
  auto linked = llvm::make_scope_exit([&] {
    if (report)
      report->linkSeconds += std::chrono::duration<double>(
                                 std::chrono::steady_clock::now() - linkStart)
                                 .count();
  });

  if (withRuntime) {
    std::string so = temporaryPath(folder, "runtime", ".so");
    TempGuard soGuard(so);
    if (llvm::Error err = linkShared(linker, {runtimeObjectPath}, so))
      return err;
    if (llvm::Error err = publish(so, runtimePath()))
      return err;
    if (llvm::Error err = loadRuntime())
      return err;
    if (!runtime)
      return llvm::createStringError("cannot load " + runtimePath() +
                                     ": it is gone after being written");
  }
  if (entries.empty())
    return llvm::Error::success();
  // One link for all the kernels: each kernel's file is a name of it.
  std::string so = temporaryPath(folder, "kernels", ".so");
  TempGuard soGuard(so);
  objects.resize(entries.size());
  if (llvm::Error err = linkShared(linker, objects, so))
    return err;
  for (const Entry &e : entries)
    if (llvm::Error err = publishLink(so, folder, e.path))
      return err;
  return llvm::Error::success();
}

std::vector<llvm::Expected<rt::KernelFn>> KernelDiskCache::getOrCompileAll(
    llvm::ArrayRef<mlir::Operation *> ops,
    llvm::ArrayRef<std::string> signatures, unsigned jobs,
    std::vector<char> &hits, const std::function<void()> &compiledOne,
    codegen::CompileReport *report) {
  hits.assign(ops.size(), 0);
  std::vector<Impl::Entry> entries;
  for (size_t i = 0; i < ops.size(); ++i) {
    std::string key =
        hashOf({codegenIdentity(), impl->targetString,
                impl->options.cacheKey(), signatures[i]});
    entries.push_back({ops[i], signatures[i], "tfc_k_" + key.substr(0, 16),
                       impl->folder + "/" + key + ".so"});
    hits[i] = llvm::sys::fs::exists(entries.back().path);
  }
  // Compile what is missing (and the runtime, if it is), then load
  // everything; an entry that fails to load (damaged) is compiled again.
  // After a failed compile, the entries that were there still load.
  std::vector<size_t> present, missing;
  for (size_t i = 0; i < ops.size(); ++i)
    (hits[i] ? present : missing).push_back(i);
  auto compileSome = [&](const std::vector<size_t> &which) -> llvm::Error {
    std::vector<Impl::Entry> some;
    for (size_t i : which)
      some.push_back(entries[i]);
    if (some.empty() && impl->runtime)
      return llvm::Error::success();
    return impl->compileAll(some, jobs, compiledOne, report);
  };
  std::vector<std::optional<llvm::Expected<rt::KernelFn>>> results(ops.size());
  auto loadSome = [&](const std::vector<size_t> &which) {
    for (size_t i : which)
      results[i].emplace(
          impl->load(entries[i].path, entries[i].name + "_argv"));
  };
  std::string problem;
  if (llvm::Error err = compileSome(missing))
    problem = llvm::toString(std::move(err));
  else
    loadSome(missing);
  if (impl->runtime)
    loadSome(present);
  std::vector<size_t> damaged;
  for (size_t i : present)
    if (results[i] && !*results[i]) {
      llvm::consumeError(results[i]->takeError());
      results[i].reset();
      hits[i] = 0;
      damaged.push_back(i);
    }
  if (!damaged.empty() && problem.empty()) {
    if (llvm::Error err = compileSome(damaged))
      problem = llvm::toString(std::move(err));
    else
      loadSome(damaged);
  }
  std::vector<llvm::Expected<rt::KernelFn>> out;
  for (size_t i = 0; i < ops.size(); ++i) {
    if (results[i])
      out.push_back(std::move(*results[i]));
    else
      out.push_back(llvm::createStringError(
          problem.empty() ? "the kernel cache's runtime is not loaded" : problem));
    if (hits[i] && compiledOne) // compiled ones were counted as they were
      compiledOne();
  }
  return out;
}

llvm::Expected<rt::KernelFn>
KernelDiskCache::getOrCompile(mlir::Operation *op, const std::string &signature,
                              bool &hit) {
  std::vector<char> hits;
  std::vector<llvm::Expected<rt::KernelFn>> fns =
      getOrCompileAll({op}, {signature}, /*jobs=*/1, hits);
  hit = hits[0];
  return std::move(fns[0]);
}
