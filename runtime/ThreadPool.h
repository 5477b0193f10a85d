//===- ThreadPool.h - The parallel loops of the compiled kernels -*- C++ -*-===//
//
// tfc's replacement for the thread pool of Halide's runtime: the kernels'
// parallel loops (halide_do_par_for) run here once the runtime is told so
// (halide_set_custom_do_par_for; session/KernelDiskCache.cpp does it when it
// loads the runtime). Folders that `tfc emit` writes use it too: their
// runtime shim (codegen/aot/AotHalideShim.cpp) forwards halide_do_par_for
// and halide_set_num_threads here, and the folder ships this library.
//
// Why: a model at M = 32 (Transformer base) is ~300 parallel loops of tens
// of microseconds each per run. Halide's workers sleep on a condition
// variable between loops, so every loop pays a futex wake-up of the worker
// (and of the caller, which sleeps until the last task ends) before the
// second core helps. Here the workers spin for kSpinMicroseconds after a
// loop before they sleep, and the caller spins for the last tasks, so loops
// that follow each other closely start on all threads at once.
//
// The number of threads (the caller included) is HL_NUM_THREADS, else one
// per hardware thread, read once at the first loop, as Halide's pool does;
// setParallelThreads changes it (workers beyond the count sleep until it
// covers them again).
// A loop's indices are cut into one contiguous chunk per thread: each thread
// runs its own chunk in order, then helps with the others' from their ends
// (instead of all threads taking the next index from one counter). A
// thread's blocks of an extern product stage then follow each other, so the
// stage's guess of the block it computes next, for its prefetch, holds
// (PanelBlocks.h); from one counter, 2 threads did not strictly alternate
// and about half the guesses missed (BERT-base b1 at 2 threads 3-9 %
// faster, docs/benchmarks.md "Session 22").
//
// One loop runs at a time: callers on several threads take turns. A loop
// started inside a task runs serially on that thread.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_RUNTIME_THREADPOOL_H
#define TFC_RUNTIME_THREADPOOL_H

#include <cstdint>

namespace tfc::rt {

/// A task of a parallel loop: halide_task_t.
using ParallelTask = int (*)(void *userContext, int index, uint8_t *closure);

/// Runs `task` for every index in [min, min + size) on the pool and returns
/// 0, or the first non-zero code a task returned (the remaining tasks are
/// then skipped). halide_do_par_for's contract and signature.
int parallelFor(void *userContext, ParallelTask task, int min, int size,
                uint8_t *closure);

/// Sets the number of threads (the caller included) of the loops that start
/// afterwards and returns the previous number; `n` <= 0 restores the default
/// (HL_NUM_THREADS, else one per hardware thread). halide_set_num_threads's
/// contract, except that it leaves negative counts to its caller.
int setParallelThreads(int n);

} // namespace tfc::rt

#endif // TFC_RUNTIME_THREADPOOL_H
