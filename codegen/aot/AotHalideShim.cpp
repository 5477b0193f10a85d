//===- AotHalideShim.cpp - The halide_* runtime for emitted C++ kernels ---===//
//
// `tfc emit --target host` writes each kernel as C++ with Halide's C backend.
// That code calls a small set of runtime functions (`nm -u` on it lists
// them): memory (halide_malloc/free), the thread pool (halide_do_par_for)
// and one reporter per error kind (halide_error_bad_type, ...). This file
// provides them with the C++17 standard library and, for the thread pool,
// tfc's own (runtime/ThreadPool.h, in the libtfc_runtime.a that the folder
// ships), so an emitted folder builds with a plain C++ compiler: no Halide,
// no LLVM.
//
// tfc copies this file verbatim into the folder it emits (as
// halide_runtime_shim.cpp); the build also compiles it, so it cannot rot.
// It is the project's own code, not Halide's runtime: messages follow
// Halide's wording so that errors read the same as from JIT or AOT kernels.
//
// Policy: errors never abort. Each reporter formats a message, passes it to
// halide_error (which calls the handler installed with
// halide_set_error_handler, by default: print to stderr) and returns the
// error code; the kernel returns that code to its caller.
//
//===----------------------------------------------------------------------===//

#include "HalideRuntime.h"
#include "runtime/ThreadPool.h"

#include <atomic>
#include <chrono>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

//===----------------------------------------------------------------------===//
// Printing and errors
//===----------------------------------------------------------------------===//

void defaultPrint(void *, const char *message) { std::fputs(message, stderr); }

void defaultErrorHandler(void *userContext, const char *message) {
  // Halide's default handler aborts; a library must not, so it only prints.
  std::string line = std::string("Error: ") + message;
  if (line.empty() || line.back() != '\n')
    line += '\n';
  halide_print(userContext, line.c_str());
}

std::atomic<halide_print_t> gPrint{&defaultPrint};
std::atomic<halide_error_handler_t> gErrorHandler{&defaultErrorHandler};

/// Formats and reports one error; returns `code` for the caller to return.
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
int report(void *userContext, int code, const char *format, ...) {
  char message[1024];
  va_list args;
  va_start(args, format);
  std::vsnprintf(message, sizeof message, format, args);
  va_end(args);
  halide_error(userContext, message);
  return code;
}

/// "float32", "int32", "uint8": a halide_type_t passed as its bits.
std::string typeName(uint32_t bits) {
  // halide_type_t's layout: code (8 bits), bits (8), lanes (16).
  const unsigned codeBits = bits & 0xff;
  const unsigned width = (bits >> 8) & 0xff;
  const unsigned lanes = bits >> 16;
  const char *code = "unknown";
  switch (codeBits) {
  case halide_type_int:
    code = "int";
    break;
  case halide_type_uint:
    code = "uint";
    break;
  case halide_type_float:
    code = "float";
    break;
  case halide_type_handle:
    code = "handle";
    break;
  case halide_type_bfloat:
    code = "bfloat";
    break;
  }
  std::string name = code + std::to_string(width);
  if (lanes != 1)
    name += "x" + std::to_string(lanes);
  return name;
}

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

/// Enough for any vector load (AVX-512 needs 64); Halide's contract also
/// asks that a few bytes before and after an allocation be readable.
constexpr size_t kAlignment = 128;

} // namespace

extern "C" {

//===----------------------------------------------------------------------===//
// Core
//===----------------------------------------------------------------------===//

void halide_print(void *userContext, const char *message) {
  (*gPrint.load())(userContext, message);
}

halide_print_t halide_set_custom_print(halide_print_t print) {
  return gPrint.exchange(print ? print : &defaultPrint);
}

void halide_error(void *userContext, const char *message) {
  (*gErrorHandler.load())(userContext, message);
}

halide_error_handler_t
halide_set_error_handler(halide_error_handler_t handler) {
  return gErrorHandler.exchange(handler ? handler : &defaultErrorHandler);
}

void *halide_malloc(void *, size_t size) {
  // Padding of one alignment unit on both sides; the block's start is kept
  // just below the returned pointer for halide_free.
  if (size > SIZE_MAX - 3 * kAlignment)
    return nullptr;
  void *block = std::malloc(size + 3 * kAlignment);
  if (!block)
    return nullptr;
  uintptr_t start = reinterpret_cast<uintptr_t>(block) + 2 * kAlignment;
  start &= ~static_cast<uintptr_t>(kAlignment - 1);
  void *aligned = reinterpret_cast<void *>(start);
  std::memcpy(static_cast<char *>(aligned) - sizeof(void *), &block,
              sizeof(void *));
  return aligned;
}

void halide_free(void *, void *ptr) {
  if (!ptr)
    return;
  void *block;
  std::memcpy(&block, static_cast<char *>(ptr) - sizeof(void *),
              sizeof(void *));
  std::free(block);
}

int halide_do_par_for(void *userContext, halide_task_t task, int min, int size,
                      uint8_t *closure) {
  return tfc::rt::parallelFor(userContext, task, min, size, closure);
}

int halide_set_num_threads(int n) {
  if (n < 0)
    return report(nullptr, halide_error_code_generic_error,
                  "halide_set_num_threads: %d is negative", n);
  return tfc::rt::setParallelThreads(n);
}

// tfc's pool keeps its workers until the process ends; idle ones sleep on a
// condition variable, so there is nothing to release.
void halide_shutdown_thread_pool() {}

int64_t halide_current_time_ns(void *) {
  return static_cast<int64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(
          std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

//===----------------------------------------------------------------------===//
// Error reporters (HalideRuntime.h declares each; kernels call them from
// their argument checks)
//===----------------------------------------------------------------------===//

int halide_error_bounds_inference_call_failed(void *uc, const char *stage,
                                              int result) {
  return report(uc, result,
                "Bounds inference call to external stage %s returned "
                "non-zero value: %d",
                stage, result);
}

int halide_error_extern_stage_failed(void *uc, const char *stage, int result) {
  return report(uc, result,
                "Call to external stage %s returned non-zero value: %d", stage,
                result);
}

int halide_error_explicit_bounds_too_small(void *uc, const char *func,
                                           const char *var, int minBound,
                                           int maxBound, int minRequired,
                                           int maxRequired) {
  return report(uc, halide_error_code_explicit_bounds_too_small,
                "Bounds given for %s in %s (from %d to %d) do not cover "
                "required region (from %d to %d)",
                var, func, minBound, maxBound, minRequired, maxRequired);
}

int halide_error_bad_type(void *uc, const char *func, uint32_t given,
                          uint32_t correct) {
  return report(uc, halide_error_code_bad_type,
                "%s has type %s but type of the buffer passed in is %s", func,
                typeName(correct).c_str(), typeName(given).c_str());
}

int halide_error_bad_dimensions(void *uc, const char *func, int32_t given,
                                int32_t correct) {
  return report(uc, halide_error_code_bad_dimensions,
                "%s requires a buffer of exactly %d dimensions, but the "
                "buffer passed in has %d dimensions",
                func, correct, given);
}

int halide_error_access_out_of_bounds(void *uc, const char *func, int dimension,
                                      int minTouched, int maxTouched,
                                      int minValid, int maxValid) {
  if (minTouched < minValid)
    return report(uc, halide_error_code_access_out_of_bounds,
                  "%s is accessed at %d, which is before the min (%d) in "
                  "dimension %d",
                  func, minTouched, minValid, dimension);
  return report(uc, halide_error_code_access_out_of_bounds,
                "%s is accessed at %d, which is beyond the max (%d) in "
                "dimension %d",
                func, maxTouched, maxValid, dimension);
}

int halide_error_buffer_allocation_too_large(void *uc, const char *buffer,
                                             uint64_t size, uint64_t max) {
  return report(uc, halide_error_code_buffer_allocation_too_large,
                "Total allocation for buffer %s is %llu, which exceeds the "
                "maximum size of %llu",
                buffer, static_cast<unsigned long long>(size),
                static_cast<unsigned long long>(max));
}

int halide_error_buffer_extents_negative(void *uc, const char *buffer,
                                         int dimension, int extent) {
  return report(uc, halide_error_code_buffer_extents_negative,
                "The extents for buffer %s dimension %d is negative (%d)",
                buffer, dimension, extent);
}

int halide_error_buffer_extents_too_large(void *uc, const char *buffer,
                                          int64_t size, int64_t max) {
  return report(uc, halide_error_code_buffer_extents_too_large,
                "Product of extents for buffer %s is %lld, which exceeds the "
                "maximum size of %lld",
                buffer, static_cast<long long>(size),
                static_cast<long long>(max));
}

int halide_error_constraints_make_required_region_smaller(
    void *uc, const char *buffer, int dimension, int constrainedMin,
    int constrainedExtent, int requiredMin, int requiredExtent) {
  return report(uc, halide_error_code_constraints_make_required_region_smaller,
                "Applying the constraints on %s to the required region made "
                "it smaller in dimension %d. Required size: %d to %d. "
                "Constrained size: %d to %d.",
                buffer, dimension, requiredMin,
                requiredMin + requiredExtent - 1, constrainedMin,
                constrainedMin + constrainedExtent - 1);
}

int halide_error_constraint_violated(void *uc, const char *var, int val,
                                     const char *constrainedVar,
                                     int constrainedVal) {
  return report(uc, halide_error_code_constraint_violated,
                "Constraint violated: %s (%d) == %s (%d)", var, val,
                constrainedVar, constrainedVal);
}

int halide_error_param_too_small_i64(void *uc, const char *param, int64_t val,
                                     int64_t min) {
  return report(uc, halide_error_code_param_too_small,
                "Parameter %s is %lld but must be at least %lld", param,
                static_cast<long long>(val), static_cast<long long>(min));
}

int halide_error_param_too_small_u64(void *uc, const char *param, uint64_t val,
                                     uint64_t min) {
  return report(uc, halide_error_code_param_too_small,
                "Parameter %s is %llu but must be at least %llu", param,
                static_cast<unsigned long long>(val),
                static_cast<unsigned long long>(min));
}

int halide_error_param_too_small_f64(void *uc, const char *param, double val,
                                     double min) {
  return report(uc, halide_error_code_param_too_small,
                "Parameter %s is %g but must be at least %g", param, val, min);
}

int halide_error_param_too_large_i64(void *uc, const char *param, int64_t val,
                                     int64_t max) {
  return report(uc, halide_error_code_param_too_large,
                "Parameter %s is %lld but must be at most %lld", param,
                static_cast<long long>(val), static_cast<long long>(max));
}

int halide_error_param_too_large_u64(void *uc, const char *param, uint64_t val,
                                     uint64_t max) {
  return report(uc, halide_error_code_param_too_large,
                "Parameter %s is %llu but must be at most %llu", param,
                static_cast<unsigned long long>(val),
                static_cast<unsigned long long>(max));
}

int halide_error_param_too_large_f64(void *uc, const char *param, double val,
                                     double max) {
  return report(uc, halide_error_code_param_too_large,
                "Parameter %s is %g but must be at most %g", param, val, max);
}

int halide_error_out_of_memory(void *uc) {
  halide_error(uc, "Out of memory (halide_malloc returned nullptr)");
  return halide_error_code_out_of_memory;
}

int halide_error_buffer_argument_is_null(void *uc, const char *buffer) {
  return report(uc, halide_error_code_buffer_argument_is_null,
                "Buffer argument %s is nullptr", buffer);
}

int halide_error_debug_to_file_failed(void *uc, const char *func,
                                      const char *filename, int code) {
  return report(uc, halide_error_code_debug_to_file_failed,
                "Failed to dump function %s to file %s with error %d", func,
                filename, code);
}

int halide_error_unaligned_host_ptr(void *uc, const char *func, int alignment) {
  return report(uc, halide_error_code_unaligned_host_ptr,
                "The host pointer of %s is not aligned to a %d bytes "
                "boundary.",
                func, alignment);
}

int halide_error_host_is_null(void *uc, const char *func) {
  return report(uc, halide_error_code_host_is_null,
                "The host pointer of %s is null, but the pipeline will "
                "access it on the host.",
                func);
}

int halide_error_bad_fold(void *uc, const char *func, const char *var,
                          const char *loop) {
  return report(uc, halide_error_code_bad_fold,
                "The folded storage dimension %s of %s was accessed out of "
                "order by loop %s.",
                var, func, loop);
}

int halide_error_bad_extern_fold(void *uc, const char *func, int dim, int min,
                                 int extent, int validMin, int foldFactor) {
  return report(uc, halide_error_code_bad_extern_fold,
                "Cannot fold dimension %d of %s because an extern stage "
                "accesses [%d, %d], outside [%d, %d] or across the fold",
                dim, func, min, min + extent - 1, validMin,
                validMin + foldFactor - 1);
}

int halide_error_fold_factor_too_small(void *uc, const char *func,
                                       const char *var, int foldFactor,
                                       const char *loop, int requiredExtent) {
  return report(uc, halide_error_code_fold_factor_too_small,
                "The fold factor (%d) of dimension %s of %s is too small to "
                "store the required region accessed by loop %s (%d).",
                foldFactor, var, func, loop, requiredExtent);
}

int halide_error_requirement_failed(void *uc, const char *condition,
                                    const char *message) {
  return report(uc, halide_error_code_requirement_failed,
                "Requirement Failed: (%s) %s", condition, message);
}

int halide_error_specialize_fail(void *uc, const char *message) {
  return report(uc, halide_error_code_specialize_fail,
                "A schedule specialized with specialize_fail() was chosen: "
                "%s",
                message);
}

int halide_error_no_device_interface(void *uc) {
  return report(uc, halide_error_code_no_device_interface,
                "Buffer has a non-zero device but no device interface.");
}

int halide_error_device_interface_no_device(void *uc) {
  return report(uc, halide_error_code_device_interface_no_device,
                "Buffer has a non-null device_interface but device is 0.");
}

int halide_error_host_and_device_dirty(void *uc) {
  return report(uc, halide_error_code_host_and_device_dirty,
                "Buffer has both host and device dirty bits set.");
}

int halide_error_buffer_is_null(void *uc, const char *routine) {
  return report(uc, halide_error_code_buffer_is_null,
                "Buffer pointer passed to %s is null.", routine);
}

int halide_error_device_dirty_with_no_device_support(void *uc,
                                                     const char *buffer) {
  return report(uc, halide_error_code_device_dirty_with_no_device_support,
                "The buffer %s is dirty on device, but this pipeline was "
                "compiled with no support for device to host copies.",
                buffer);
}

int halide_error_storage_bound_too_small(void *uc, const char *func,
                                         const char *var, int provided,
                                         int required) {
  return report(uc, halide_error_code_storage_bound_too_small,
                "The explicit allocation bound (%d) of dimension %s of %s is "
                "too small to store the required region (%d).",
                provided, var, func, required);
}

int halide_error_device_crop_failed(void *uc) {
  return report(uc, halide_error_code_device_crop_failed,
                "Buffer could not be cropped (runtime error or unimplemented "
                "device option).");
}

} // extern "C"
