//===- Compile.h - A model compiled for in-process execution ----*- C++ -*-===//
//
// The compile session every tfc command shares: open the model, optimize
// it, build its Plan, then compile the kernels of the entries that will run,
// from the persistent kernel cache (KernelDiskCache.h) when it holds them,
// else with Halide. The front half (openUpTo/advance) stops at any Stage:
// `tfc dump` and `tfc info` look at the AST or the IR, `tfc compile` hands
// the Plan to the AOT compiler (Aot.h). Planning and kernel compilation are
// separate steps so that a caller can check its inputs against the Plan
// (lengths, ids) before paying for compilation. Nothing here prints;
// progress goes to a callback, warnings stay in the session's diagnostics.
//
//   llvm::Expected<CompiledModel> model = session::compile(options);
//   rt::Executor::create(model->plan(), model->kernels, weights,
//                        session::executorOptions(*model));
//
// Kernels of steps that always bind as views of their input (reshapes,
// head-split slices; rt::viewOnlyKernels) are not compiled up front: the
// executor options compile one the first time a step must call it.
//===----------------------------------------------------------------------===//

#ifndef TFC_SESSION_COMPILE_H
#define TFC_SESSION_COMPILE_H

#include "session/Session.h"

#include "codegen/CompileTime.h"

#include "plan/PlanBuilder.h"
#include "runtime/Executor.h"

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace tfc::codegen {
class KernelCache;
} // namespace tfc::codegen

namespace tfc::session {

class KernelDiskCache;

/// Where compiled kernels are kept between processes.
struct CacheSettings {
  /// Off: compile every kernel every time, keeping nothing (objects linked
  /// in a temporary folder, removed once loaded; Halide's JIT where that
  /// fails).
  bool enabled = true;
  /// Empty: defaultCacheDir().
  std::string dir;
};

/// How far the front half of a session has gone, in order.
enum class Stage {
  Parsed,     // the AST (session->modules); no IR
  Elaborated, // the tfc dialect as the frontend builds it
  Optimized,  // after the pass pipeline
  Planned,    // with its Plan (CompiledModel::built)
};

struct CompileOptions {
  ModelSource model;
  PipelineSettings pipeline;
  /// Symbolic dimensions bound to sizes when elaborating (static shapes,
  /// e.g. to count FLOPs); empty: the IR keeps them symbolic.
  std::map<std::string, int64_t> dimValues;
  /// When set, the pass pipeline says here what fused (`--fusion-report`).
  FusionReport *fusionReport = nullptr;
  CacheSettings cache;
  /// Compile only the kernels these entries use (empty: every entry). The
  /// others stay null, and the Executor refuses to run their entries.
  std::vector<std::string> entries;
  /// Threads that compile kernels (0: one per hardware thread).
  unsigned jobs = 0;
  /// Leave the kernels of steps that always bind as views of their input on
  /// the host (rt::viewOnlyKernels: reshapes, head-split slices) for the
  /// first step that calls one: an Executor made with executorOptions(model)
  /// compiles it then. GPT-2 small's forward calls none of its 6. Off where
  /// views are not bound (--no-strided-views).
  bool deferViewKernels = true;
  /// The kernels are for this process (codegen::hostKernelOptions): the plan
  /// may share kernels that only those options build (PlanOptions). plan()
  /// sets it; AOT libraries, emitted sources and GPU kernels leave it off.
  bool hostKernels = false;
  /// Keep where each kernel's compile time went in CompileStats::report.
  bool report = false;
  /// Called when `done` of the `count` kernels being fetched are ready
  /// (from the compiling threads, one call at a time).
  std::function<void(size_t done, size_t count)> progress;
};

/// What compiling cost, for `tfc run`'s report and tests.
struct CompileStats {
  size_t compiled = 0;  // kernels compiled by Halide in this process
  size_t cacheHits = 0; // kernels loaded from the disk cache
  size_t deferred = 0;  // left for a step that needs one (deferViewKernels)
  double seconds = 0;   // time spent getting kernels
  /// Why the disk cache was not used (empty when it was, or was off).
  std::string cacheProblem;
  /// Threads the kernels compiled on (codegen::compileJobs of the option).
  unsigned jobs = 0;
  /// Where the time of each kernel compiled by the last compileKernels went,
  /// when CompileOptions::report asks for it (--compile-report).
  codegen::CompileReport report;
};

/// A planned model and, after compileKernels, its kernels.
class CompiledModel {
public:
  CompiledModel();
  ~CompiledModel();
  CompiledModel(CompiledModel &&) noexcept;
  CompiledModel &operator=(CompiledModel &&) noexcept;

  std::unique_ptr<mlir::MLIRContext> context;
  std::unique_ptr<Session> session;
  BuiltPlan built;
  /// kernels[i] implements plan().kernels[i]; null if not compiled.
  std::vector<rt::KernelFn> kernels;
  CompileStats stats;

  /// The last stage done; the members of later stages are empty.
  Stage stage = Stage::Parsed;

  const rt::Plan &plan() const { return built.plan; }
  /// The entry `name`, or the first entry when `name` is empty; null if
  /// there is no such entry.
  const rt::PlanEntry *entry(const std::string &name) const;
  /// entry(name), or the error "the model has no entry 'name' (it has:
  /// forward, decode)".
  llvm::Expected<const rt::PlanEntry *>
  requireEntry(const std::string &name) const;

  // Owners of the compiled code: kernels stay valid while these live.
  std::unique_ptr<codegen::KernelCache> jit;
  std::unique_ptr<KernelDiskCache> disk;

  /// Where executorOptions(model) finds the model to compile a deferred
  /// kernel in: follows its moves, null once it is destroyed.
  struct Anchor;
  std::shared_ptr<Anchor> anchor;
};

/// Opens the model and takes it up to stage `last`; compiles no kernel.
llvm::Expected<CompiledModel> openUpTo(const CompileOptions &options,
                                       Stage last);

/// Takes a model from its stage up to `last` (nothing when it is there).
llvm::Error advance(CompiledModel &model, const CompileOptions &options,
                    Stage last);

/// openUpTo(Stage::Planned) with hostKernels, after checking that the host
/// can run what is asked (bf16 products) and that `options.entries` exist.
llvm::Expected<CompiledModel> plan(const CompileOptions &options);

/// Compiles the kernels that `options.entries` need.
llvm::Error compileKernels(CompiledModel &model, const CompileOptions &options);

/// plan() then compileKernels().
llvm::Expected<CompiledModel> compile(const CompileOptions &options);

/// Options for an Executor of kernels compiled here: a kernel that fails
/// says why (the message its Halide runtime or the AMX stage reported),
/// and a kernel compileKernels deferred is compiled in `model` (with the
/// same cache settings, on one thread) the first time a step needs it. The
/// Executor must not outlive `model` (it owns the kernels' code).
rt::ExecutorOptions executorOptions(CompiledModel &model);

/// The names of the entries a plan has, "forward, prefill, decode".
std::string entryNames(const rt::Plan &plan);

} // namespace tfc::session

#endif // TFC_SESSION_COMPILE_H
