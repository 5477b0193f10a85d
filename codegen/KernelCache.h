//===- KernelCache.h - JIT-compiled kernels keyed by signature --*- C++ -*-===//
//
// Compiles each distinct kernel once: ops with the same kernelSignature (the
// same op, attributes and types, e.g. the matmuls of all twelve layers)
// share one compiled function, called with each layer's buffers.
//
// Compiled kernels are argv-style functions (runtime/Plan.h):
//   int kernel(void **args)
// args[i] is a `halide_buffer_t *` for operand i, then one for the result.
// A non-zero return means the kernel refused its buffers (wrong type or
// shape) or failed at run time; takeKernelRuntimeError() says why.
//
// Not thread-safe: one cache per compiling thread (getOrCompileAll compiles
// on several threads itself). Compiled functions may be called from any
// thread while the cache is alive.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_CODEGEN_KERNELCACHE_H
#define TFC_CODEGEN_KERNELCACHE_H

#include "codegen/CompileTime.h"
#include "codegen/KernelBuilder.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringMap.h"

#include <functional>
#include <memory>
#include <vector>

namespace tfc::codegen {

/// The argv calling convention of every kernel.
using KernelFn = int (*)(void **args);

/// A kernel compiled in process. Owns the JIT module its function lives in.
struct CompiledKernel {
  std::string name;      // "tfc_matmul_3"
  std::string signature; // kernelSignature of the ops it serves
  int numInputs = 0;
  int numOutputs = 1; // results of the op (add_layer_norm with_sum: two)
  KernelFn fn = nullptr;
  /// The built pipeline, for AOT compilation and .stmt dumps of the same
  /// kernel (compileToFiles, loweredStmt).
  Kernel kernel;
  Halide::Internal::JITModule module;
  /// Where its compile time went (--compile-report).
  KernelCompileTime time;
};

class KernelCache {
public:
  /// Kernels are scheduled and compiled for `target` (default: the host)
  /// with `options` (default: this process's, AMX tiles where it may use
  /// them). JIT execution needs a target this process can run: the host,
  /// or a GPU target on a machine with that GPU.
  explicit KernelCache(Halide::Target target = hostTarget(),
                       KernelOptions options = hostKernelOptions());
  ~KernelCache();
  KernelCache(const KernelCache &) = delete;
  KernelCache &operator=(const KernelCache &) = delete;

  /// The compiled kernel of `op`, compiling it on first use. The reference
  /// stays valid while the cache lives. Errors (an unsupported op, a Halide
  /// error) come back as values.
  llvm::Expected<const CompiledKernel &> getOrCompile(mlir::Operation *op);

  /// Compiles the kernels of `ops` that are not compiled yet, on up to
  /// `jobs` threads (0: one per hardware thread; see Parallel.h). Names are
  /// given in the order of `ops`, as getOrCompile one by one would give
  /// them. On an error (the first failing op's) nothing is added.
  /// `compiledOne`, if given, is called (from the compiling threads, one
  /// call at a time) as each kernel is done.
  llvm::Error getOrCompileAll(llvm::ArrayRef<mlir::Operation *> ops,
                              unsigned jobs = 0,
                              std::function<void()> compiledOne = nullptr);

  /// Only builds and lowers (no JIT): `op`'s kernel as getOrCompile would
  /// name and schedule it, for AOT and dumps without paying for codegen.
  llvm::Expected<Kernel> build(mlir::Operation *op) const;

  /// The compiled kernel with this signature, or null.
  const CompiledKernel *lookup(llvm::StringRef signature) const;

  /// All compiled kernels, in compilation order.
  std::vector<const CompiledKernel *> kernels() const;
  size_t size() const { return ordered.size(); }
  const Halide::Target &target() const { return jitTarget; }
  const KernelOptions &kernelOptions() const { return options; }

private:
  /// The kernel name for `op` if it were compiled `ahead` kernels after the
  /// next one: tfc_<mnemonic>_<n>.
  std::string nextName(mlir::Operation *op, size_t ahead = 0) const;
  /// Builds and JIT-compiles `op`'s kernel as `name`; touches no member but
  /// the target, so distinct ops may compile on several threads.
  llvm::Expected<std::unique_ptr<CompiledKernel>>
  compile(mlir::Operation *op, const std::string &signature,
          const std::string &name) const;
  void add(std::unique_ptr<CompiledKernel> compiled);

  Halide::Target jitTarget;
  KernelOptions options;
  llvm::StringMap<std::unique_ptr<CompiledKernel>> bySignature;
  std::vector<const CompiledKernel *> ordered;
};

} // namespace tfc::codegen

#endif // TFC_CODEGEN_KERNELCACHE_H
