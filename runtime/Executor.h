//===- Executor.h - Runs a Plan with compiled kernels -----------*- C++ -*-===//
//
// The executor is the runtime half of the Plan contract (Plan.h): it checks
// the caller's inputs against an entry's signature, evaluates every value's
// symbolic shape, allocates the intermediate tensors, wraps each tensor in a
// halide_buffer_t and calls the entry's steps in order, freeing temps after
// their last use. It knows nothing of MLIR or Halide's compiler: kernels are
// plain function pointers in Halide's argv form, so the same executor runs
// JIT-compiled kernels (tfc run) and kernels linked from an AOT library.
//
// Everything a user can get wrong is checked before the first kernel runs and
// reported by name, e.g.
//
//   entry 'forward': input 'ids': expected i32[batch, seq], found i32[2, 3, 4]
//   entry 'forward': input 'mask': seq is 7 here (axis 1), but 5 in input 'ids'
//   entry 'forward': token id 50300 at [0, 3] of input 'ids' is outside
//     [0, 50257)
//
// because a wrong-sized buffer handed to a Halide kernel is, at best, an
// opaque Halide error and, at worst, an out-of-bounds read.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_RUNTIME_EXECUTOR_H
#define TFC_RUNTIME_EXECUTOR_H

#include "runtime/KvCache.h"
#include "runtime/Plan.h"
#include "runtime/Status.h"
#include "runtime/Tensor.h"
#include "runtime/WeightBinding.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

// Only the plain C structs halide_buffer_t / halide_dimension_t / halide_type_t
// are used; the header has no link-time dependency on libHalide.
#include "HalideRuntime.h"

namespace tfc::rt {

/// A compiled kernel in Halide's argv calling convention: args[i] is a
/// `halide_buffer_t *` for the step's inputs in order, then its outputs.
/// Returns 0 on success, a Halide error code otherwise.
using KernelFn = int (*)(void **args);

/// The Halide element type a tensor of `dtype` is passed as. Bool tensors
/// hold one byte per element (0 or 1) and are passed as uint8, which is what
/// the kernels declare for i1 values.
halide_type_t halideTypeOf(DType dtype);

/// Fills `buffer` to describe `tensor` (host memory only): dim 0 is the last
/// axis, strides in elements. `dims` must hold tensor.rank() entries and
/// outlive the buffer. Fails when an extent or stride does not fit in the
/// int32 fields of halide_dimension_t.
Status describeTensor(Tensor &tensor, halide_buffer_t &buffer,
                      halide_dimension_t *dims);

/// Optional hooks into the Halide runtime the kernels were built with.
///
/// Device support: CUDA kernels leave their outputs in device
/// memory (halide_buffer_t::device) and copy host inputs up themselves; the
/// executor needs these two Halide runtime functions to bring entry outputs
/// back and to free device copies of released temps, params and constants.
/// Pass halide_copy_to_host / halide_device_free for GPU kernels; leave null
/// for CPU kernels (a kernel that does produce device memory is then an
/// error rather than a leak).
struct ExecutorOptions {
  int (*copyToHost)(void *userContext, halide_buffer_t *buffer) = nullptr;
  int (*deviceFree)(void *userContext, halide_buffer_t *buffer) = nullptr;
  /// Halide kernels report the reason of a failure through the runtime's
  /// error handler, not their return code. When set, this is called after a
  /// kernel fails and its (non-empty) result is added to the error, e.g.
  /// codegen::takeKernelRuntimeError for JIT kernels.
  std::string (*kernelErrorMessage)() = nullptr;
  /// Transposes and slices that a plan marks as strided views
  /// (PlanStep::StridedView) bind their result as a view of their input on
  /// host buffers instead of copying it, and outputs with a layout
  /// (PlanStep::layout) are allocated in it; false runs their kernels on
  /// row-major outputs (tests compare the two).
  bool stridedViews = true;
  /// Compiles kernel `index` of the plan when a step must call it. Only
  /// for kernels that views stand for (viewOnlyKernels): with this set,
  /// create() accepts them null, and the first step that calls one (on
  /// device buffers, without strided views) compiles it, once.
  std::function<Expected<KernelFn>(size_t index)> compileKernel;
};

/// Per kernel of `plan`: whether a run on host buffers with strided views
/// (ExecutorOptions::stridedViews) binds every step that calls it as a view
/// of its input instead (Executor::Run::bindView, bindStridedView), for
/// inputs of any size: a tfc.reshape of a kernel's result; a slice or
/// transpose that may be strided (PlanStep::StridedView::strided), or that
/// reads a kernel's result laid out for it (PlanStep::layout). Such a kernel
/// may be left uncompiled until a step needs one
/// (ExecutorOptions::compileKernel). Only the steps of the entries named
/// in `entries` count (empty: every entry); false for kernels none of their
/// steps calls.
std::vector<bool> viewOnlyKernels(const Plan &plan,
                                  const std::vector<std::string> &entries = {});

/// What the last run did, for tests and `tfc bench` memory reports.
struct RunStats {
  /// Steps (kernel calls) executed.
  size_t steps = 0;
  /// Of those, steps bound as strided views of their input instead of
  /// calling their kernel (ExecutorOptions::stridedViews).
  size_t views = 0;
  /// Of those, steps that called a kernel (not a view, a cache step or a
  /// step the weight prologue ran).
  size_t kernelCalls = 0;
  /// The largest total size of temps alive at once, in bytes: what the
  /// plan's `release` lists buy over keeping every intermediate.
  size_t peakTempBytes = 0;
};

/// The checks Executor::run makes before running anything (inputs, ids,
/// the plan's dim checks), without an executor: callers can refuse bad
/// inputs before compiling kernels or loading weights.
Status checkInputs(const PlanEntry &entry, const std::vector<Tensor> &inputs);

class Executor {
public:
  /// `kernels[i]` implements `plan.kernels[i]`; `weights` holds every
  /// parameter the plan's entries read (from bindWeights or randomWeights).
  /// Fails for a plan that does not verify (verifyPlan), a kernel count that
  /// differs from the plan's or a null kernel (but see
  /// ExecutorOptions::compileKernel), and for weights that do not
  /// match the Param values: every missing tensor and wrong dtype or shape is
  /// listed, by name, with the expected and found type.
  static Expected<Executor> create(const Plan &plan,
                                   std::vector<KernelFn> kernels,
                                   WeightMap weights,
                                   ExecutorOptions options = {});

  Executor(Executor &&) noexcept;
  Executor &operator=(Executor &&) noexcept;
  ~Executor();

  /// Runs entry `entry` on `inputs` (in the entry's input order) and returns
  /// its outputs in order. Inputs are checked first: count, dtype (an i32
  /// input also accepts i64 values that fit; a bool input accepts bool, u8,
  /// i32 or i64 holding 0/1; an f32 input accepts f16, bf16 and f64), rank,
  /// static dims, consistency of every symbolic dim across inputs, symbol
  /// bounds, the plan's index and dim checks. A kernel's failure is reported
  /// with the step's .tfm location and kernel signature.
  ///
  /// Not thread-safe: on device targets the persistent parameter buffers
  /// record their device copies. Use one Executor per thread.
  Expected<std::vector<Tensor>> run(const std::string &entry,
                                    const std::vector<Tensor> &inputs);

  /// Runs an entry that grows key/value caches in place (PlanEntry::caches)
  /// on `cache` (createKvCache): its cache inputs are the first
  /// `cache.length` positions of `cache.buffers` (the tensors given for them
  /// in `inputs` are ignored; pass null ones), the new positions are written
  /// after them, and on success `cache.length` grows by them. The cache
  /// outputs are returned as null tensors: `cache` holds them. Fails,
  /// before running anything, when the new positions do not fit in
  /// `cache.capacity`. run() without a cache copies the given cache inputs
  /// once into a cache of exactly the grown length and returns it.
  Expected<std::vector<Tensor>> run(const std::string &entry,
                                    const std::vector<Tensor> &inputs,
                                    KvCache &cache);

  const Plan &plan() const;

  /// Statistics of the last successful or failed run.
  const RunStats &lastRunStats() const;

private:
  struct Impl;
  struct Run;
  explicit Executor(std::unique_ptr<Impl> impl);
  Expected<std::vector<Tensor>> runEntry(const std::string &entry,
                                         const std::vector<Tensor> &inputs,
                                         KvCache *cache);
  std::unique_ptr<Impl> impl;
};

} // namespace tfc::rt

#endif // TFC_RUNTIME_EXECUTOR_H
