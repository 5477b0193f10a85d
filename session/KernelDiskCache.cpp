//===- KernelDiskCache.cpp - Compiled kernels kept on disk ----------------===//

#include "session/KernelDiskCache.h"

#include "codegen/KernelBuilder.h"
#include "runtime/FileWriter.h"

#include "mlir/IR/Operation.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SHA256.h"

#include <dlfcn.h>
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

/// `cc -shared -o so object`; the object is removed either way.
llvm::Error linkShared(const std::string &linker, const std::string &object,
                       const std::string &so) {
  llvm::SmallVector<llvm::StringRef, 8> args = {linker, "-shared", "-o", so,
                                                object};
  std::string message;
  llvm::StringRef devNull("/dev/null");
  std::optional<llvm::StringRef> redirects[] = {devNull, devNull, devNull};
  int rc = llvm::sys::ExecuteAndWait(linker, args, std::nullopt, redirects,
                                     /*SecondsToWait=*/120, 0, &message);
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

struct KernelDiskCache::Impl {
  std::string folder;
  std::string linker;
  std::string targetString;
  Halide::Target target;
  void *runtime = nullptr;
  std::mutex handlesMutex; // guards handles (getOrCompile is thread-safe)
  std::vector<void *> handles;

  llvm::Error loadRuntime();
  llvm::Expected<rt::KernelFn> load(const std::string &path,
                                    const std::string &symbol);
  llvm::Error compile(mlir::Operation *op, const std::string &name,
                      const std::string &path);
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
  if (llvm::Error err = impl->loadRuntime())
    return std::move(err);
  return std::unique_ptr<KernelDiskCache>(new KernelDiskCache(std::move(impl)));
}

llvm::Error KernelDiskCache::Impl::loadRuntime() {
  // One runtime per process and target: a second cache object (another
  // model in the same process) reuses it.
  static std::mutex mutex;
  static std::map<std::string, void *> loaded;
  std::lock_guard<std::mutex> lock(mutex);
  if (void *known = loaded[targetString]) {
    runtime = known;
    return llvm::Error::success();
  }
  std::string key = hashOf({codegenIdentity(), targetString, "runtime"});
  std::string path = folder + "/runtime-" + key.substr(0, 16) + ".so";
  if (!llvm::sys::fs::exists(path)) {
    std::string object = temporaryPath(folder, "runtime", ".o");
    std::string so = temporaryPath(folder, "runtime", ".so");
    TempGuard objectGuard(object), soGuard(so);
    Halide::Target t = target.without_feature(Halide::Target::NoRuntime)
                           .without_feature(Halide::Target::JIT);
    if (llvm::Error err =
            writeObject(Halide::Module("standalone_runtime", t), object))
      return err;
    if (llvm::Error err = linkShared(linker, object, so))
      return err;
    if (llvm::Error err = publish(so, path))
      return err;
  }
  runtime = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (!runtime)
    return llvm::createStringError("cannot load " + path + ": " + dlerror());
  using Handler = void (*)(void *, const char *);
  using SetHandler = Handler (*)(Handler);
  if (auto set = reinterpret_cast<SetHandler>(
          dlsym(runtime, "halide_set_error_handler")))
    set(runtimeErrorHandler);
  loaded[targetString] = runtime;
  return llvm::Error::success();
}

llvm::Expected<rt::KernelFn>
KernelDiskCache::Impl::load(const std::string &path,
                            const std::string &symbol) {
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

llvm::Error KernelDiskCache::Impl::compile(mlir::Operation *op,
                                           const std::string &name,
                                           const std::string &path) {
  llvm::Expected<codegen::Kernel> kernel =
      codegen::buildKernel(op, target, name);
  if (!kernel)
    return kernel.takeError();
  std::string object = temporaryPath(folder, name, ".o");
  std::string so = temporaryPath(folder, name, ".so");
  TempGuard objectGuard(object), soGuard(so);
  Halide::Target t = kernel->target.with_feature(Halide::Target::NoRuntime);
  std::optional<Halide::Module> module;
  if (llvm::Error err = codegen::withHalideErrors([&] {
        module = kernel->pipeline.compile_to_module(kernel->arguments,
                                                    kernel->name, t);
      }))
    return err;
  if (llvm::Error err = writeObject(*module, object))
    return err;
  if (llvm::Error err = linkShared(linker, object, so))
    return err;
  return publish(so, path);
}

llvm::Expected<rt::KernelFn>
KernelDiskCache::getOrCompile(mlir::Operation *op, const std::string &signature,
                              bool &hit) {
  std::string key =
      hashOf({codegenIdentity(), impl->targetString, signature});
  std::string name = "tfc_k_" + key.substr(0, 16);
  std::string path = impl->folder + "/" + key + ".so";
  hit = llvm::sys::fs::exists(path);
  if (hit) {
    llvm::Expected<rt::KernelFn> fn = impl->load(path, name + "_argv");
    if (fn)
      return fn;
    // A damaged entry: compile it again below.
    llvm::consumeError(fn.takeError());
    hit = false;
  }
  if (llvm::Error err = impl->compile(op, name, path))
    return std::move(err);
  return impl->load(path, name + "_argv");
}
