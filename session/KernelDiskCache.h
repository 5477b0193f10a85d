//===- KernelDiskCache.h - Compiled kernels kept on disk --------*- C++ -*-===//
//
// Compile once, run many: each kernel is compiled to a shared object under
// the cache folder, named by a hash of everything its machine code depends
// on, and later processes load it with dlopen instead of compiling again.
//
//   <dir>/v1/<key>.so         one kernel: `tfc_k_<key16>_argv(void **)`
//   <dir>/v1/runtime-<t>.so   Halide's runtime for target t, loaded once
//                             per process with RTLD_GLOBAL; every kernel of
//                             the target binds to it (one thread pool). A
//                             folder without one uses the runtime prebuilt
//                             with tfc (prebuiltRuntimeDir) when its target
//                             is t.
//
// key = SHA-256 of (tfc version, hash of the code generator's sources,
// Halide's version, Halide target string, kernel signature). A changed
// schedule, a new tfc or Halide, or another CPU gets other keys, never a
// stale kernel.
//
// getOrCompileAll compiles the missing kernels of a call on several threads
// (codegen/Parallel.h), and may itself be called from several threads.
// Writers are safe to run concurrently: each file is written under a unique
// temporary name in the same folder and renamed into place, so a reader sees
// a complete file or none. A file that fails to load (truncated by hand,
// say) is replaced by a fresh compile.
//
// Kernels are compiled with Target::NoRuntime to objects, and the objects of
// one call are linked into one shared object by the system C compiler (one
// `cc -shared` per call, not per kernel); each kernel's <key>.so is a hard
// link to it (a copy where the file system has none), and dlopen of the
// several names gives one handle. Where no C compiler is installed the cache
// reports an error and the caller falls back to JIT.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_SESSION_KERNELDISKCACHE_H
#define TFC_SESSION_KERNELDISKCACHE_H

#include "runtime/Executor.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <functional>

#include <memory>
#include <string>
#include <vector>

namespace mlir {
class Operation;
} // namespace mlir

namespace Halide {
struct Target;
} // namespace Halide

namespace tfc::codegen {
struct CompileReport;
} // namespace tfc::codegen

namespace tfc::session {

/// `$XDG_CACHE_HOME/tfc`, else `$HOME/.cache/tfc`; empty when neither is
/// set.
std::string defaultCacheDir();

/// The code generator's identity that keys depend on: tfc's version, a hash
/// of the sources that decide what a kernel compiles to, Halide's version.
std::string codegenIdentity();

/// The folder of the runtime built with tfc for the build machine
/// (TFC_PREBUILT_RUNTIME_DIR, `<build>/lib/tfc`; empty if none): a cache
/// folder without a runtime loads it from there when the target is the same,
/// instead of building one (0.7 s of a compile thread).
std::string prebuiltRuntimeDir();

/// Builds Halide's runtime for `target` into `dir`, under the name a cache
/// looks for (`runtime-<t>.so`), and returns that file's path. The build
/// runs it for the host target (session/PrebuildRuntime.cpp).
llvm::Expected<std::string> writeRuntime(const std::string &dir,
                                         const Halide::Target &target);

class KernelDiskCache {
public:
  /// Opens (creating if needed) the cache under `dir` for `target`, and
  /// loads the target's runtime if it is there (else the first compile
  /// builds it).
  static llvm::Expected<std::unique_ptr<KernelDiskCache>>
  open(const std::string &dir, const Halide::Target &target);
  ~KernelDiskCache();

  /// The kernels of `ops` (whose kernelSignatures are `signatures`): each
  /// loaded from the cache, or compiled, stored and loaded; `hits[i]` says
  /// which. The missing ones (and the runtime, if it is missing) compile on
  /// up to `jobs` threads, the costliest first, and are linked together
  /// into one shared object that each kernel's file is a name of (a hard
  /// link). `compiledOne`, if given, is called (one call at a time) as each
  /// kernel is compiled or loaded. Result i is kernel i's error where it
  /// could not be had (a failed compile or link is every missing kernel's).
  /// `report`, if given, gets the compile times of the kernels compiled
  /// (and of the runtime) and the link's.
  std::vector<llvm::Expected<rt::KernelFn>>
  getOrCompileAll(llvm::ArrayRef<mlir::Operation *> ops,
                  llvm::ArrayRef<std::string> signatures, unsigned jobs,
                  std::vector<char> &hits,
                  const std::function<void()> &compiledOne = nullptr,
                  codegen::CompileReport *report = nullptr);

  /// getOrCompileAll of one kernel; `hit` says whether it was loaded.
  llvm::Expected<rt::KernelFn> getOrCompile(mlir::Operation *op,
                                            const std::string &signature,
                                            bool &hit);

  /// The folder that holds the files (`<dir>/v1`).
  const std::string &folder() const;

private:
  struct Impl;
  explicit KernelDiskCache(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl;
};

} // namespace tfc::session

#endif // TFC_SESSION_KERNELDISKCACHE_H
