//===- Parallel.h - Compile kernels on several threads ----------*- C++ -*-===//
//
// Kernel compilation (Halide lowering, LLVM code generation, linking) takes
// most of a cold start and each kernel is independent of the others, so the
// compile session and the AOT compiler run them on a small thread pool.
// Halide supports compiling and JIT-loading distinct pipelines from several
// threads at once (its runtime registry and LLVM initialization are
// guarded; each compile has its own LLVMContext); the IR is only read.
//
//   llvm::Error err = forEachIndex(kernels.size(), jobs, [&](size_t i) {
//     return compileOne(i);   // writes only slot i of its outputs
//   });
//
//===----------------------------------------------------------------------===//

#ifndef TFC_CODEGEN_PARALLEL_H
#define TFC_CODEGEN_PARALLEL_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/Error.h"

#include <cstddef>
#include <vector>

namespace tfc::codegen {

/// The number of threads `jobs` asks for: itself when positive, else one per
/// hardware thread (at least 1).
unsigned compileJobs(unsigned jobs);

/// Runs fn(0), ..., fn(count - 1) on up to compileJobs(jobs) threads (the
/// calling thread alone when that is 1 or count is 1) and waits for all.
/// Every index runs even after a failure; the result is the error of the
/// lowest failing index (the others are dropped), so what is reported does
/// not depend on scheduling. `fn` must be safe to call concurrently for
/// distinct indices. `startOrder`, if given (a permutation of the indices),
/// is the order in which the indices are started: the longest tasks first
/// let the threads finish together.
llvm::Error forEachIndex(size_t count, unsigned jobs,
                         llvm::function_ref<llvm::Error(size_t)> fn,
                         llvm::ArrayRef<size_t> startOrder = {});

/// The indices 0..costs.size()-1, the highest cost first (ties in index
/// order): a start order for forEachIndex.
std::vector<size_t> longestFirst(llvm::ArrayRef<unsigned> costs);

} // namespace tfc::codegen

#endif // TFC_CODEGEN_PARALLEL_H
