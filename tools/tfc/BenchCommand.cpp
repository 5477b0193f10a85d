//===- BenchCommand.cpp - tfc bench: time a model's entry -----------------===//
//
// Compiles the model like `tfc run` (disk-cached kernels, random weights drawn
// with seed 0), after the optimization pipeline (fusion; --no-fusion and
// --disable-pass as for the other commands), makes inputs of the requested
// sizes (random valid token ids, all-true padding masks, causal target
// masks, random f32 tensors), runs `--warmup` untimed iterations and then
// `--repeat` timed ones of the entry, and prints the median, min and max
// wall time per run and the GFLOP/s that passes/FlopCount.h counts on the
// IR elaborated with the same static sizes (before fusion).
//
// --profile times every kernel call (a trampoline per plan kernel around the
// JIT function; the timed runs above are not profiled) and prints the time
// per kernel class (matmul/linear, attention, norm/softmax, elementwise,
// reduction, data movement: from each plan kernel's op), with the class's
// GFLOP/s and GB/s as a share of the fp32 FMA peak and of the read bandwidth
// measured in the same run on the same threads (MachineLimits.h), then per
// op kind and the ten most expensive kernels. A class's FLOPs and bytes are
// counted on the entry elaborated with static sizes and optimized like the
// plan (bytes: every operand read and every result written once, a floor).
//
// --serve keeps the compiled model and reads run counts from stdin, so that
// a driver (bench/compare_pytorch.py) can alternate tfc runs with another
// framework's in one process tree without recompiling.
//
// Threads: the kernels run on Halide's thread pool, which reads
// HL_NUM_THREADS when it starts; --threads sets it.
//
//===----------------------------------------------------------------------===//

#include "tools/tfc/Commands.h"
#include "tools/tfc/CompileReport.h"
#include "tools/tfc/Inputs.h"
#include "tools/tfc/MachineLimits.h"
#include "tools/tfc/ModelRunner.h"

#include "session/Inspect.h"

#include "codegen/KernelBuilder.h"
#include "codegen/PanelMatmul.h"
#include "ir/TfcOps.h"

#include "passes/FlopCount.h"
#include "runtime/WeightBinding.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/raw_ostream.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <iostream>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <thread>
#include <utility>

using namespace tfc;
using namespace tfc::driver;

namespace {

struct BenchOptions {
  ModelOptions model;
  CacheOptions cache;
  std::string entry;
  int64_t batch = 1;
  int64_t seq = 128;
  std::vector<std::string> dims;
  int warmup = 3;
  int repeat = 10;
  int threads = 0;
  bool json = false;
  bool profile = false;
  bool serve = false;
  bool checkUnfused = false;
  bool noStridedViews = false;
  uint64_t seed = 0;
};

template <typename... Args> std::string strf(const char *format, Args... args) {
  char buffer[1024];
  std::snprintf(buffer, sizeof(buffer), format, args...);
  return buffer;
}

std::string jsonEscape(const std::string &text) {
  std::string out;
  for (char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += strf("\\u%04x", c);
    } else {
      out += c;
    }
  }
  return out;
}

//===----------------------------------------------------------------------===//
// Profiling trampolines
//===----------------------------------------------------------------------===//

/// Kernel functions are plain `int (*)(void **)`: to time each plan kernel
/// without touching the executor, every kernel i is called through
/// trampoline i, which reads its target and its counters from these tables.
constexpr size_t kMaxProfiledKernels = 1024;
std::array<rt::KernelFn, kMaxProfiledKernels> gTargets;
std::array<double, kMaxProfiledKernels> gSeconds;
std::array<double, kMaxProfiledKernels> gCpuSeconds;
std::array<int64_t, kMaxProfiledKernels> gCalls;
bool gProfiling = false;

/// CPU time of the whole process (all of Halide's worker threads): unlike
/// wall time, it does not count the time other processes held the CPUs.
double processCpuSeconds() {
  timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

template <size_t I> int trampoline(void **args) {
  if (!gProfiling)
    return gTargets[I](args);
  double cpuStart = processCpuSeconds();
  auto start = std::chrono::steady_clock::now();
  int rc = gTargets[I](args);
  gSeconds[I] +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  gCpuSeconds[I] += processCpuSeconds() - cpuStart;
  ++gCalls[I];
  return rc;
}

template <size_t... I>
constexpr std::array<rt::KernelFn, sizeof...(I)>
makeTrampolines(std::index_sequence<I...>) {
  return {&trampoline<I>...};
}

const std::array<rt::KernelFn, kMaxProfiledKernels> kTrampolines =
    makeTrampolines(std::make_index_sequence<kMaxProfiledKernels>());

//===----------------------------------------------------------------------===//
// Inputs
//===----------------------------------------------------------------------===//

/// The largest |a - b| over two f32 tensors of one shape (NaN if they
/// differ in shape or dtype, or either has a NaN where the other has not).
double maxAbsDiff(const rt::Tensor &a, const rt::Tensor &b) {
  if (a.shape() != b.shape() || a.dtype() != b.dtype())
    return std::nan("");
  if (a.dtype() != rt::DType::F32)
    return std::memcmp(a.data(), b.data(), a.byteSize()) == 0 ? 0.0 : 1.0;
  double worst = 0;
  const float *x = a.dataAs<float>(), *y = b.dataAs<float>();
  for (int64_t i = 0; i < a.numElements(); ++i) {
    if (std::isnan(x[i]) != std::isnan(y[i]))
      return std::nan("");
    if (!std::isnan(x[i]))
      worst = std::max(worst, static_cast<double>(std::abs(x[i] - y[i])));
  }
  return worst;
}

/// Symbol values: batch for "batch", --dim NAME=N, else seq.
int64_t symbolValue(const std::string &name, const BenchOptions &options,
                    const std::map<std::string, int64_t> &dims) {
  auto it = dims.find(name);
  if (it != dims.end())
    return it->second;
  return name == "batch" ? options.batch : options.seq;
}

rt::Expected<std::vector<rt::Tensor>>
makeInputs(const rt::PlanEntry &entry, const BenchOptions &options,
           const std::map<std::string, int64_t> &dims) {
  std::vector<int64_t> symbols;
  for (const rt::SymbolSource &s : entry.symbols)
    symbols.push_back(symbolValue(s.name, options, dims));
  std::mt19937_64 rng(options.seed);
  std::vector<rt::Tensor> inputs;
  for (size_t i = 0; i < entry.inputs.size(); ++i) {
    int32_t id = entry.inputs[i];
    const rt::PlanValue &value = entry.values[static_cast<size_t>(id)];
    rt::Shape shape;
    for (const rt::DimExpr &dim : value.shape)
      shape.push_back(rt::evaluate(dim, symbols));
    rt::Expected<rt::Tensor> t = rt::Tensor::zeros(value.dtype, shape);
    if (!t)
      return t.status().withContext("input '" + entry.inputNames[i] + "'");
    int64_t n = t->numElements();
    switch (value.dtype) {
    case rt::DType::I32:
    case rt::DType::I64: {
      // Ids below the smallest limit any index check puts on this input.
      int64_t limit = 1000;
      bool checked = false;
      for (const rt::IndexCheck &c : entry.indexChecks)
        if (c.value == id) {
          limit = checked ? std::min(limit, c.limit) : c.limit;
          checked = true;
        }
      std::uniform_int_distribution<int64_t> pick(
          0, std::max<int64_t>(limit - 1, 0));
      for (int64_t e = 0; e < n; ++e) {
        if (value.dtype == rt::DType::I32)
          t->dataAs<int32_t>()[e] = static_cast<int32_t>(pick(rng));
        else
          t->dataAs<int64_t>()[e] = pick(rng);
      }
      break;
    }
    case rt::DType::Bool: {
      // All tokens real; a [.., n, n] mask whose last two axes are the same
      // symbol is the seed-style target mask: causal.
      uint8_t *bits = t->dataAs<uint8_t>();
      size_t rank = shape.size();
      bool causal = rank >= 2 && !value.shape[rank - 1].isStatic() &&
                    value.shape[rank - 1] == value.shape[rank - 2];
      int64_t cols = rank ? shape[rank - 1] : 1;
      int64_t rows = rank >= 2 ? shape[rank - 2] : 1;
      for (int64_t e = 0; e < n; ++e) {
        int64_t k = cols ? e % cols : 0;
        int64_t q = rows && cols ? (e / cols) % rows : 0;
        bits[e] = causal ? (k <= q) : 1;
      }
      break;
    }
    case rt::DType::F32: {
      std::normal_distribution<float> normal(0.0f, 1.0f);
      for (int64_t e = 0; e < n; ++e)
        t->dataAs<float>()[e] = normal(rng);
      break;
    }
    default:
      return rt::Status::error("input '" + entry.inputNames[i] +
                               "': no random values for dtype " +
                               rt::dtypeName(value.dtype));
    }
    inputs.push_back(t.take());
  }
  return inputs;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int threadCount(int requested) {
  if (requested > 0)
    return requested;
  if (const char *env = std::getenv("HL_NUM_THREADS"))
    if (int n = std::atoi(env); n > 0)
      return n;
  // Halide's default: one worker per CPU.
  unsigned n = std::thread::hardware_concurrency();
  return n ? static_cast<int>(n) : 1;
}

//===----------------------------------------------------------------------===//
// Kernel classes
//===----------------------------------------------------------------------===//

/// What a kernel mostly does, for the profile: the contractions are held
/// against the FMA peak, everything against the read bandwidth.
enum class KernelClass {
  Matmul,
  Attention,
  Norm,
  Elementwise,
  Reduction,
  DataMovement
};

const char *className(KernelClass kind) {
  switch (kind) {
  case KernelClass::Matmul:
    return "matmul/linear";
  case KernelClass::Attention:
    return "attention";
  case KernelClass::Norm:
    return "norm/softmax";
  case KernelClass::Elementwise:
    return "elementwise";
  case KernelClass::Reduction:
    return "reduction";
  case KernelClass::DataMovement:
    return "data movement";
  }
  return "other";
}

/// The class of a kernel's op (the plan's kernel op, or its static twin):
/// its kernel family (ir/TfcInterfaces.td), with the fused ops and the
/// normalizations told apart.
KernelClass classify(mlir::Operation *op) {
  namespace tfc = mlir::tfc;
  using ::tfc::rt::KernelFamily;
  auto facts = llvm::dyn_cast<tfc::KernelFamilyOpInterface>(op);
  switch (facts ? facts.getKernelFamily() : KernelFamily::Elementwise) {
  case KernelFamily::Matmul:
    return KernelClass::Matmul;
  case KernelFamily::Fused:
    if (llvm::isa<tfc::FusedAttentionOp>(op))
      return KernelClass::Attention;
    return llvm::isa<tfc::LinearOp>(op) ? KernelClass::Matmul
                                        : KernelClass::Norm;
  case KernelFamily::Reduction:
    return llvm::isa<tfc::LayerNormOp, tfc::RmsNormOp, tfc::SoftmaxOp>(op)
               ? KernelClass::Norm
               : KernelClass::Reduction;
  case KernelFamily::DataMovement:
  case KernelFamily::View:
    return KernelClass::DataMovement;
  case KernelFamily::Elementwise:
  case KernelFamily::None:
    return KernelClass::Elementwise;
  }
  return KernelClass::Elementwise;
}

/// The bytes a kernel moves at least: every operand read once and every
/// result written once (static shapes; booleans are bytes).
double minimumTraffic(mlir::Operation *op) {
  double bytes = 0;
  auto add = [&](mlir::Type type) {
    auto tensor = llvm::dyn_cast<mlir::RankedTensorType>(type);
    if (!tensor || !tensor.hasStaticShape() ||
        !tensor.getElementType().isIntOrFloat())
      return;
    unsigned bits = tensor.getElementType().getIntOrFloatBitWidth();
    bytes +=
        static_cast<double>(tensor.getNumElements()) * std::max(1u, bits / 8);
  };
  for (mlir::Value operand : op->getOperands())
    add(operand.getType());
  for (mlir::Value result : op->getResults())
    add(result.getType());
  return bytes;
}

struct ClassWork {
  double flops = 0;
  double bytes = 0;
};
using WorkByClass = std::map<KernelClass, ClassWork>;

//===----------------------------------------------------------------------===//
// Counting the work of one run
//===----------------------------------------------------------------------===//

struct RunWork {
  double flops = 0;      // the elaborated IR, before fusion
  int64_t uncounted = 0; // ops with dynamic shapes left
  WorkByClass byClass;   // the fused kernels (only for --profile)
};

/// The entry `entry` of the model elaborated with every symbolic dim bound:
/// FLOPs before fusion (what the GFLOP/s line has always counted) and, when
/// `byClass`, FLOPs and minimum bytes per kernel class after the same
/// optimization pipeline as the plan's, so that its ops are the plan's
/// kernels with static shapes.
std::optional<RunWork> countWork(const ModelOptions &options,
                                 const std::map<std::string, int64_t> &dims,
                                 const std::string &entry, bool byClass) {
  RunWork work;
  session::CompileOptions compile = compileOptions(options);
  compile.dimValues = dims;
  std::optional<CompiledModel> specialized =
      openToStage(compile, session::Stage::Elaborated);
  if (!specialized)
    return std::nullopt;
  for (const session::EntryFlops &count : session::entryFlops(*specialized))
    if (count.entry == entry) {
      work.flops = count.flops.total();
      work.uncounted = count.flops.dynamicOps;
    }
  if (!byClass)
    return work;
  if (llvm::Error err =
          session::advance(*specialized, compile, session::Stage::Optimized)) {
    reportError(std::move(err));
    return std::nullopt;
  }
  auto entryFunc = [&]() -> mlir::Operation * {
    for (auto func :
         specialized->session->model.module->getOps<mlir::func::FuncOp>())
      if (func.getName() == entry)
        return func;
    return nullptr;
  };
  if (mlir::Operation *func = entryFunc())
    func->walk([&](mlir::Operation *op) {
      if (!codegen::hasKernel(op))
        return;
      ClassWork &w = work.byClass[classify(op)];
      w.flops += countFlops(op).total();
      w.bytes += minimumTraffic(op);
    });
  return work;
}

//===----------------------------------------------------------------------===//
// Setting up and timing
//===----------------------------------------------------------------------===//

/// Parses the --dim NAME=SIZE options.
std::optional<std::map<std::string, int64_t>>
parseDims(const std::vector<std::string> &specs) {
  std::map<std::string, int64_t> dims;
  for (const std::string &dim : specs) {
    size_t eq = dim.find('=');
    int64_t value = 0;
    if (eq == std::string::npos || eq == 0 ||
        llvm::StringRef(dim).substr(eq + 1).getAsInteger(10, value) ||
        value < 0) {
      llvm::errs() << "error: --dim expects NAME=SIZE, got '" << dim << "'\n";
      return std::nullopt;
    }
    dims[dim.substr(0, eq)] = value;
  }
  return dims;
}

/// A compiled model, its entry, inputs and executor, ready to time.
struct Bench {
  CompiledModel model;
  const rt::PlanEntry *entry = nullptr;
  std::vector<rt::Tensor> inputs;
  std::optional<rt::Executor> executor;
  /// For an entry that grows key/value caches in place: a cache with room
  /// for one step, reset to `cachedPositions` before each run (makeCache).
  std::optional<rt::KvCache> cache;
  int64_t cachedPositions = 0;
  std::map<std::string, int64_t> dims;
  RunWork work;
  double createSeconds = 0;
  double lastCpuMs = 0;
  int threads = 1;

  /// One run of the entry: its wall time in ms (CPU time in lastCpuMs), or
  /// nullopt after printing the error.
  std::optional<double> runOnce();
};

double cpuMilliseconds() {
  timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

std::optional<double> Bench::runOnce() {
  double cpuStart = cpuMilliseconds();
  auto start = std::chrono::steady_clock::now();
  if (cache)
    cache->length = cachedPositions;
  rt::Expected<std::vector<rt::Tensor>> outputs =
      cache ? executor->run(entry->name, inputs, *cache)
            : executor->run(entry->name, inputs);
  double ms = std::chrono::duration<double, std::milli>(
                  std::chrono::steady_clock::now() - start)
                  .count();
  lastCpuMs = cpuMilliseconds() - cpuStart;
  if (!outputs) {
    llvm::errs() << "error: " << outputs.message() << "\n";
    return std::nullopt;
  }
  return ms;
}

/// An entry that grows key/value caches in place runs on a KvCache with
/// room for one step, reset to the given cached positions before each run:
/// every run times one step after `past` cached positions, as with plain
/// cache tensors, without copying the cache.
bool makeCache(Bench &bench) {
  const rt::PlanEntry &entry = *bench.entry;
  if (entry.caches.empty())
    return true;
  std::vector<rt::Tensor> past;
  for (const rt::PlanCache &c : entry.caches)
    past.push_back(bench.inputs[static_cast<size_t>(c.input)]);
  int64_t positions =
      past.front().dim(static_cast<size_t>(entry.caches.front().axis));
  const rt::Tensor &ids = bench.inputs.front();
  int64_t seq = ids.rank() > 1 ? ids.dim(1) : 1;
  rt::Expected<rt::KvCache> made =
      rt::createKvCache(entry, past, positions + seq);
  if (!made) {
    llvm::errs() << "error: " << made.message() << "\n";
    return false;
  }
  bench.cache = made.take();
  bench.cachedPositions = positions;
  return true;
}

/// The executor, with every compiled kernel behind its profiling
/// trampoline when `profile`; `stridedViews` as ExecutorOptions.
bool createExecutor(Bench &bench, bool profile, bool stridedViews) {
  WeightOptions weightOptions;
  weightOptions.random = true;
  weightOptions.seed = 0;
  rt::Expected<rt::WeightMap> weights =
      driver::loadWeights(bench.model.plan(), weightOptions);
  if (!weights) {
    llvm::errs() << "error: " << weights.message() << "\n";
    return false;
  }
  const size_t numKernels = bench.model.kernels.size();
  std::vector<rt::KernelFn> kernels = bench.model.kernels;
  if (profile) {
    if (numKernels > kMaxProfiledKernels) {
      llvm::errs() << "error: --profile handles up to " << kMaxProfiledKernels
                   << " kernels; the model has " << numKernels << "\n";
      return false;
    }
    for (size_t i = 0; i < numKernels; ++i) {
      // Kernels of other entries were not compiled: they stay null.
      gTargets[i] = bench.model.kernels[i];
      kernels[i] = bench.model.kernels[i] ? kTrampolines[i] : nullptr;
    }
  }
  auto start = std::chrono::steady_clock::now();
  rt::ExecutorOptions executorOptions = session::executorOptions(bench.model);
  executorOptions.stridedViews = stridedViews;
  if (profile && executorOptions.compileKernel)
    // A kernel compiled when a step needs it is timed like the others.
    executorOptions.compileKernel =
        [compile = executorOptions.compileKernel](
            size_t i) -> rt::Expected<rt::KernelFn> {
      rt::Expected<rt::KernelFn> fn = compile(i);
      if (!fn)
        return fn;
      gTargets[i] = *fn;
      return kTrampolines[i];
    };
  rt::Expected<rt::Executor> executor = rt::Executor::create(
      bench.model.plan(), kernels, std::move(*weights), executorOptions);
  if (!executor) {
    llvm::errs() << "error: " << executor.message() << "\n";
    return false;
  }
  bench.executor = std::move(*executor);
  bench.createSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  return true;
}

/// Compiles the model's entry, counts its work, makes inputs and the
/// executor.
std::optional<Bench> prepare(const BenchOptions &options) {
  Bench bench;
  std::optional<std::map<std::string, int64_t>> dims = parseDims(options.dims);
  if (!dims)
    return std::nullopt;
  bench.dims = *dims;
  if (options.threads > 0)
    setenv("HL_NUM_THREADS", std::to_string(options.threads).c_str(), 1);
  bench.threads = threadCount(options.threads);

  session::CompileOptions compile =
      compileOptions(options.model, options.cache);
  std::optional<CompiledModel> model = planModel(compile);
  if (!model)
    return std::nullopt;
  bench.model = std::move(*model);
  bench.entry = reportedEntry(bench.model.requireEntry(options.entry));
  if (!bench.entry)
    return std::nullopt;
  compile.entries = {bench.entry->name};
  // Views are not bound: every step calls its kernel.
  compile.deferViewKernels = !options.noStridedViews;
  if (!buildKernels(bench.model, compile))
    return std::nullopt;

  std::map<std::string, int64_t> dimValues;
  for (const rt::PlanEntry &e : bench.model.plan().entries)
    for (const rt::SymbolSource &s : e.symbols)
      dimValues[s.name] = symbolValue(s.name, options, bench.dims);
  std::optional<RunWork> work =
      countWork(options.model, dimValues, bench.entry->name, options.profile);
  if (!work)
    return std::nullopt;
  bench.work = std::move(*work);

  rt::Expected<std::vector<rt::Tensor>> inputs =
      makeInputs(*bench.entry, options, bench.dims);
  if (!inputs) {
    llvm::errs() << "error: " << inputs.message() << "\n";
    return std::nullopt;
  }
  bench.inputs = inputs.take();
  if (!makeCache(bench) ||
      !createExecutor(bench, options.profile, !options.noStridedViews))
    return std::nullopt;
  return bench;
}

/// --check-unfused: the same entry, inputs and weights through the
/// primitive ops only; prints the largest difference per output.
bool checkUnfused(Bench &bench, const BenchOptions &options) {
  ModelOptions plain = options.model;
  plain.noFusion = true;
  std::optional<CompiledModel> reference = compileModel(plain, options.cache);
  if (!reference)
    return false;
  WeightOptions weightOptions;
  weightOptions.random = true;
  weightOptions.seed = 0;
  rt::Expected<rt::WeightMap> refWeights =
      driver::loadWeights(reference->plan(), weightOptions);
  if (!refWeights) {
    llvm::errs() << "error: " << refWeights.message() << "\n";
    return false;
  }
  rt::Expected<rt::Executor> refExecutor = rt::Executor::create(
      reference->plan(), reference->kernels, std::move(*refWeights),
      session::executorOptions(*reference));
  if (!refExecutor) {
    llvm::errs() << "error: " << refExecutor.message() << "\n";
    return false;
  }
  const std::string &name = bench.entry->name;
  rt::Expected<std::vector<rt::Tensor>> want =
      refExecutor->run(name, bench.inputs);
  rt::Expected<std::vector<rt::Tensor>> got =
      bench.executor->run(name, bench.inputs);
  if (!want || !got) {
    llvm::errs() << "error: " << (!want ? want.message() : got.message())
                 << "\n";
    return false;
  }
  for (size_t i = 0; i < got->size(); ++i)
    llvm::outs() << strf("check    %s: max |fused - unfused| = %.3g\n",
                         bench.entry->outputNames[i].c_str(),
                         maxAbsDiff((*got)[i], (*want)[i]));
  return true;
}

/// --serve: one JSON line saying what is timed, then one per command read
/// from stdin (a run count, or quit).
int serve(Bench &bench, const std::string &modelName) {
  llvm::outs() << "{\"ready\": true, \"model\": \"" << jsonEscape(modelName)
               << "\", \"entry\": \"" << jsonEscape(bench.entry->name)
               << "\", \"threads\": " << bench.threads
               << strf(", \"gflop\": %.6g", bench.work.flops / 1e9)
               << strf(", \"compile_s\": %.6g", bench.model.stats.seconds)
               << "}\n";
  llvm::outs().flush();
  std::string line;
  while (std::getline(std::cin, line)) {
    if (line == "quit" || line == "q")
      break;
    int count = std::atoi(line.c_str());
    if (count <= 0) {
      llvm::outs() << "{\"error\": \"expected a run count or quit\"}\n";
      llvm::outs().flush();
      continue;
    }
    std::string list, cpuList;
    for (int i = 0; i < count; ++i) {
      std::optional<double> ms = bench.runOnce();
      if (!ms)
        return 1;
      list += (i ? ", " : "") + strf("%.6g", *ms);
      cpuList += (i ? ", " : "") + strf("%.6g", bench.lastCpuMs);
    }
    llvm::outs() << "{\"times_ms\": [" << list << "], \"cpu_ms\": [" << cpuList
                 << "]}\n";
    llvm::outs().flush();
  }
  return 0;
}

struct Timings {
  std::vector<double> times, cpuTimes;
  double median = 0, min = 0, max = 0;
};

std::optional<Timings> timeRuns(Bench &bench, int repeat) {
  Timings t;
  for (int i = 0; i < repeat; ++i) {
    std::optional<double> ms = bench.runOnce();
    if (!ms)
      return std::nullopt;
    t.times.push_back(*ms);
    t.cpuTimes.push_back(bench.lastCpuMs);
  }
  t.median = median(t.times);
  t.min = *std::min_element(t.times.begin(), t.times.end());
  t.max = *std::max_element(t.times.begin(), t.times.end());
  return t;
}

//===----------------------------------------------------------------------===//
// The profile
//===----------------------------------------------------------------------===//

struct ProfileRow {
  std::string name;
  double ms = 0;
  double cpuMs = 0;
  double calls = 0;
  ClassWork work; // per class rows only
};

struct Profile {
  int runs = 0;        // profiled runs
  double runMs = 0;    // median of the profiled runs
  double kernelMs = 0; // all kernels, wall, per run
  double kernelCpuMs = 0;
  std::vector<ProfileRow> classes, ops, top;
  /// The panel stages' tiles over the profiled runs (codegen/PanelMatmul.h).
  std::vector<codegen::PanelTileCount> tiles;
  MachineLimits limits;
};

/// Times every kernel call over `repeat` runs (separate from the timed runs,
/// which carry no timer calls), sums per class and op, then measures the
/// machine's limits on the same threads.
std::optional<Profile> profileRuns(Bench &bench, int repeat) {
  gSeconds.fill(0);
  gCpuSeconds.fill(0);
  gCalls.fill(0);
  gProfiling = true;
  codegen::startPanelTileCounts();
  std::vector<double> runs;
  for (int i = 0; i < repeat; ++i) {
    std::optional<double> ms = bench.runOnce();
    if (!ms)
      break;
    runs.push_back(*ms);
  }
  gProfiling = false;
  std::vector<codegen::PanelTileCount> tiles = codegen::stopPanelTileCounts();
  if (runs.size() != size_t(repeat))
    return std::nullopt;

  Profile profile;
  profile.tiles = std::move(tiles);
  profile.runs = repeat;
  profile.runMs = median(runs);
  std::map<KernelClass, ProfileRow> byClass;
  std::map<std::string, ProfileRow> byOp;
  const rt::Plan &plan = bench.model.plan();
  for (size_t i = 0; i < plan.kernels.size(); ++i) {
    double ms = 1e3 * gSeconds[i] / repeat;
    double cpuMs = 1e3 * gCpuSeconds[i] / repeat;
    double calls = static_cast<double>(gCalls[i]) / repeat;
    if (calls == 0)
      continue;
    mlir::Operation *op = bench.model.built.kernelOps[i];
    KernelClass kind = classify(op);
    std::string opName = op->getName().getStringRef().str();
    for (ProfileRow *row : {&byClass[kind], &byOp[opName]}) {
      row->ms += ms;
      row->cpuMs += cpuMs;
      row->calls += calls;
    }
    byClass[kind].name = className(kind);
    byClass[kind].work = bench.work.byClass[kind];
    byOp[opName].name = opName;
    profile.kernelMs += ms;
    profile.kernelCpuMs += cpuMs;
    profile.top.push_back(
        ProfileRow{plan.kernels[i].name + "  " + plan.kernels[i].signature,
                   ms,
                   cpuMs,
                   calls,
                   {}});
  }
  auto byTime = [](const ProfileRow &a, const ProfileRow &b) {
    return a.ms > b.ms;
  };
  for (auto &[kind, row] : byClass)
    profile.classes.push_back(row);
  for (auto &[name, row] : byOp)
    profile.ops.push_back(row);
  std::sort(profile.classes.begin(), profile.classes.end(), byTime);
  std::sort(profile.ops.begin(), profile.ops.end(), byTime);
  std::sort(profile.top.begin(), profile.top.end(), byTime);
  if (profile.top.size() > 10)
    profile.top.resize(10);
  profile.limits = measureMachineLimits(bench.threads);
  return profile;
}

/// A row of panel tiles per run: ms (summed over threads), tiles, and the
/// rate of one thread in GFLOP/s and % of one thread's share of the peak.
struct TileRates {
  double ms = 0, tiles = 0, gflops = 0, fmaPercent = 0;
};

TileRates tileRatesOf(const codegen::PanelTileCount &c, const Profile &p) {
  TileRates r;
  if (p.runs <= 0 || c.seconds <= 0)
    return r;
  r.ms = 1e3 * c.seconds / p.runs;
  r.tiles = double(c.tiles) / p.runs;
  r.gflops = c.flops / c.seconds / 1e9;
  if (p.limits.fmaGflops > 0 && p.limits.threads > 0)
    r.fmaPercent = 100 * r.gflops * p.limits.threads / p.limits.fmaGflops;
  return r;
}

/// A class row's rates: GFLOP/s, % of the FMA peak, GB/s, % of bandwidth.
struct Rates {
  double gflops = 0, fmaPercent = 0, gbs = 0, bwPercent = 0;
};

Rates ratesOf(const ProfileRow &row, const MachineLimits &limits) {
  Rates r;
  if (row.ms <= 0)
    return r;
  r.gflops = row.work.flops / (row.ms * 1e-3) / 1e9;
  r.gbs = row.work.bytes / (row.ms * 1e-3) / 1e9;
  if (limits.fmaGflops > 0)
    r.fmaPercent = 100 * r.gflops / limits.fmaGflops;
  if (limits.readGBs > 0)
    r.bwPercent = 100 * r.gbs / limits.readGBs;
  return r;
}

//===----------------------------------------------------------------------===//
// Output
//===----------------------------------------------------------------------===//

std::string sizesOf(const Bench &bench, const BenchOptions &options) {
  std::string sizes;
  for (const rt::SymbolSource &s : bench.entry->symbols)
    sizes += (sizes.empty() ? "" : ", ") + s.name + "=" +
             std::to_string(symbolValue(s.name, options, bench.dims));
  return sizes;
}

/// The profile's JSON fields (appended to `out` with `field`).
void profileJson(const Profile &profile,
                 const std::function<void(const std::string &,
                                          const std::string &)> &field) {
  auto num = [](double v) { return strf("%.6g", v); };
  auto str = [](const std::string &s) { return "\"" + jsonEscape(s) + "\""; };
  auto rows = [&](const std::vector<ProfileRow> &list, const char *key) {
    std::string json = "[";
    for (size_t i = 0; i < list.size(); ++i)
      json += std::string(i ? ", " : "") + "{\"" + key +
              "\": " + str(list[i].name) + ", \"ms\": " + num(list[i].ms) +
              ", \"cpu_ms\": " + num(list[i].cpuMs) +
              ", \"calls\": " + num(list[i].calls) + "}";
    return json + "]";
  };
  field("profile_run_ms", num(profile.runMs));
  field("profile", rows(profile.ops, "op"));
  field("top_kernels", rows(profile.top, "kernel"));
  std::string classes = "[";
  for (size_t i = 0; i < profile.classes.size(); ++i) {
    const ProfileRow &row = profile.classes[i];
    Rates r = ratesOf(row, profile.limits);
    classes += std::string(i ? ", " : "") + "{\"class\": " + str(row.name) +
               ", \"ms\": " + num(row.ms) + ", \"cpu_ms\": " + num(row.cpuMs) +
               ", \"calls\": " + num(row.calls) + ", \"share\": " +
               num(profile.kernelMs > 0 ? row.ms / profile.kernelMs : 0) +
               ", \"gflop\": " + num(row.work.flops / 1e9) +
               ", \"gbyte\": " + num(row.work.bytes / 1e9) +
               ", \"gflops\": " + num(r.gflops) +
               ", \"fma_peak_pct\": " + num(r.fmaPercent) +
               ", \"gbs\": " + num(r.gbs) +
               ", \"bandwidth_pct\": " + num(r.bwPercent) + "}";
  }
  field("classes", classes + "]");
  std::string tiles = "[";
  for (size_t i = 0; i < profile.tiles.size(); ++i) {
    const codegen::PanelTileCount &c = profile.tiles[i];
    TileRates r = tileRatesOf(c, profile);
    tiles += std::string(i ? ", " : "") + "{\"k\": " + std::to_string(c.k) +
             ", \"type\": " + str(c.bf16 ? "bf16" : "f32") +
             ", \"first\": " + (c.first ? "true" : "false") +
             ", \"tiles\": " + num(r.tiles) + ", \"ms\": " + num(r.ms) +
             ", \"gflops_per_thread\": " + num(r.gflops) +
             ", \"fma_peak_pct\": " + num(r.fmaPercent) + "}";
  }
  field("panel_tiles", tiles + "]");
  field("fma_peak_gflops", num(profile.limits.fmaGflops));
  field("fma_sustained_gflops", num(profile.limits.sustainedFmaGflops));
  field("fma_kind", str(profile.limits.fmaKind));
  field("read_bandwidth_gbs", num(profile.limits.readGBs));
}

void printJson(const Bench &bench, const BenchOptions &options,
               const std::string &modelName, const Timings &t,
               const std::optional<Profile> &profile) {
  std::string out = "{";
  auto field = [&](const std::string &key, const std::string &value) {
    if (out.size() > 1)
      out += ", ";
    out += "\"" + key + "\": " + value;
  };
  auto str = [](const std::string &s) { return "\"" + jsonEscape(s) + "\""; };
  auto num = [](double v) { return strf("%.6g", v); };
  auto list = [&](const std::vector<double> &values) {
    std::string json = "[";
    for (size_t i = 0; i < values.size(); ++i)
      json += (i ? ", " : "") + num(values[i]);
    return json + "]";
  };
  const rt::RunStats &stats = bench.executor->lastRunStats();
  field("model", str(modelName));
  field("path", str(options.model.path));
  field("entry", str(bench.entry->name));
  field("batch", std::to_string(symbolValue("batch", options, bench.dims)));
  field("seq", std::to_string(options.seq));
  std::string dimsJson = "{";
  for (const rt::SymbolSource &s : bench.entry->symbols)
    dimsJson += (dimsJson.size() > 1 ? ", " : "") + str(s.name) + ": " +
                std::to_string(symbolValue(s.name, options, bench.dims));
  field("dims", dimsJson + "}");
  field("threads", std::to_string(bench.threads));
  field("warmup", std::to_string(options.warmup));
  field("repeat", std::to_string(options.repeat));
  field("median_ms", num(t.median));
  field("min_ms", num(t.min));
  field("max_ms", num(t.max));
  field("times_ms", list(t.times));
  field("cpu_median_ms", num(median(t.cpuTimes)));
  field("gflop", num(bench.work.flops / 1e9));
  field("gflops", num(t.median > 0 ? bench.work.flops / t.median / 1e6 : 0));
  field("uncounted_ops", std::to_string(bench.work.uncounted));
  field("steps", std::to_string(stats.steps));
  field("kernel_calls", std::to_string(stats.kernelCalls));
  field("strided_views", std::to_string(stats.views));
  field("kernels", std::to_string(bench.model.kernels.size()));
  field("peak_temp_bytes", std::to_string(stats.peakTempBytes));
  field("compile_s", num(bench.model.stats.seconds));
  field("create_s", num(bench.createSeconds));
  if (profile)
    profileJson(*profile, field);
  llvm::outs() << out << "}\n";
}

/// The panel stages' tiles (codegen/PanelMatmul.h), where any ran: per K,
/// type and kind, per run, each thread's rate against its share of the peak.
void printPanelTiles(const Profile &p) {
  if (p.tiles.empty())
    return;
  llvm::outs() << "\n  panel tiles (8 rows x 48 columns over all of K; "
                  "\"first\": a panel's first row tile in a block, which "
                  "waits on the panel)\n";
  llvm::outs() << strf("  %6s %-5s %-6s %9s %10s %16s %6s\n", "K", "type",
                       "tile", "tiles/run", "CPU ms/run", "GFLOP/s/thread",
                       "%FMA");
  for (const codegen::PanelTileCount &c : p.tiles) {
    TileRates r = tileRatesOf(c, p);
    llvm::outs() << strf("  %6d %-5s %-6s %9.0f %10.3f %16.1f %5.1f%%\n", c.k,
                         c.bf16 ? "bf16" : "f32", c.first ? "first" : "later",
                         r.tiles, r.ms, r.gflops, r.fmaPercent);
  }
}

void printProfile(const Profile &p) {
  llvm::outs() << strf("\nprofile  (median run %.3f ms; kernels %.3f ms wall, "
                       "%.3f ms CPU per run; the rest of the wall time is "
                       "executor overhead)\n",
                       p.runMs, p.kernelMs, p.kernelCpuMs);
  llvm::outs() << strf("limits   fp32 FMA peak %.1f GFLOP/s (%s; %.1f "
                       "sustained), read bandwidth %.1f GB/s, on these "
                       "threads, measured now\n",
                       p.limits.fmaGflops, p.limits.fmaKind.c_str(),
                       p.limits.sustainedFmaGflops, p.limits.readGBs);
  llvm::outs() << strf("  %-16s %9s %6s %9s %6s %8s %6s %7s\n", "class",
                       "ms/run", "share", "GFLOP/s", "%FMA", "GB/s", "%bw",
                       "calls");
  for (const ProfileRow &row : p.classes) {
    Rates r = ratesOf(row, p.limits);
    llvm::outs() << strf(
        "  %-16s %9.3f %5.1f%% %9.1f %5.1f%% %8.1f %5.1f%% %7.0f\n",
        row.name.c_str(), row.ms,
        p.kernelMs > 0 ? 100 * row.ms / p.kernelMs : 0, r.gflops, r.fmaPercent,
        r.gbs, r.bwPercent, row.calls);
  }
  printPanelTiles(p);
  llvm::outs() << strf("\n  %-28s %10s %10s %7s %8s\n", "op", "ms/run",
                       "CPU ms/run", "share", "calls");
  for (const ProfileRow &r : p.ops)
    llvm::outs() << strf("  %-28s %10.3f %10.3f %6.1f%% %8.0f\n",
                         r.name.c_str(), r.ms, r.cpuMs,
                         p.kernelMs > 0 ? 100 * r.ms / p.kernelMs : 0, r.calls);
  llvm::outs() << "\n  top kernels (wall ms, CPU ms per run)\n";
  for (const ProfileRow &r : p.top) {
    std::string name = r.name;
    if (name.size() > 150)
      name = name.substr(0, 147) + "...";
    llvm::outs() << strf("  %9.3f %9.3f %6.1f%% %5.0fx  %s\n", r.ms, r.cpuMs,
                         p.kernelMs > 0 ? 100 * r.ms / p.kernelMs : 0, r.calls,
                         name.c_str());
  }
}

void printText(const Bench &bench, const BenchOptions &options,
               const std::string &modelName, const Timings &t,
               const std::optional<Profile> &profile) {
  const rt::RunStats &stats = bench.executor->lastRunStats();
  double gflops = t.median > 0 ? bench.work.flops / t.median / 1e6 : 0;
  llvm::outs() << "model    " << modelName << ", entry " << bench.entry->name
               << " (" << sizesOf(bench, options) << ")\n";
  llvm::outs() << strf("compiled %zu kernels, %zu from the cache%s, for %zu "
                       "steps in %.2f s; executor setup %.2f s\n",
                       bench.model.stats.compiled, bench.model.stats.cacheHits,
                       deferredKernelsNote(bench.model).c_str(), stats.steps,
                       bench.model.stats.seconds, bench.createSeconds);
  llvm::outs() << strf("steps    %zu kernel calls, %zu strided views "
                       "(docs/runtime.md, \"Views\")\n",
                       stats.kernelCalls, stats.views);
  llvm::outs() << strf("threads  %d; %d warm-up + %d timed runs\n",
                       bench.threads, options.warmup, options.repeat);
  llvm::outs() << strf("time     median %.3f ms  (min %.3f, max %.3f); CPU "
                       "time median %.3f ms\n",
                       t.median, t.min, t.max, median(t.cpuTimes));
  llvm::outs() << strf("compute  %.3f GFLOP per run -> %.1f GFLOP/s%s\n",
                       bench.work.flops / 1e9, gflops,
                       bench.work.uncounted ? " (some ops not counted)" : "");
  llvm::outs() << strf("memory   peak temps %.1f MiB\n",
                       static_cast<double>(stats.peakTempBytes) / (1 << 20));
  if (profile)
    printProfile(*profile);
}

int runBench(const BenchOptions &options) {
  if (options.repeat < 1 || options.warmup < 0) {
    llvm::errs() << "error: --repeat must be >= 1 and --warmup >= 0\n";
    return 1;
  }
  std::optional<Bench> bench = prepare(options);
  if (!bench)
    return 1;
  std::string modelName = bench->model.plan().modelName.empty()
                              ? options.model.path
                              : bench->model.plan().modelName;
  if (options.checkUnfused && !checkUnfused(*bench, options))
    return 1;
  for (int i = 0; i < options.warmup; ++i)
    if (!bench->runOnce())
      return 1;
  if (options.serve)
    return serve(*bench, modelName);
  std::optional<Timings> timings = timeRuns(*bench, options.repeat);
  if (!timings)
    return 1;
  std::optional<Profile> profile;
  if (options.profile) {
    profile = profileRuns(*bench, options.repeat);
    if (!profile)
      return 1;
  }
  if (options.json)
    printJson(*bench, options, modelName, *timings, profile);
  else
    printText(*bench, options, modelName, *timings, profile);
  return 0;
}

} // namespace

CommandRunner driver::registerBenchCommand(CLI::App &app) {
  auto options = std::make_shared<BenchOptions>();
  CLI::App *command = app.add_subcommand(
      "bench", "Time one entry of a model (disk-cached kernels, random weights): "
               "median/min/max ms and GFLOP/s");
  addModelOptions(*command, options->model);
  addPipelineOptions(*command, options->model);
  addCacheOptions(*command, options->cache);
  command->add_option("--entry", options->entry,
                      "Entry point to time (default: the first one)");
  command->add_option("--batch", options->batch, "Batch size")
      ->default_val(1)
      ->check(positiveSize());
  command
      ->add_option("--seq", options->seq,
                   "Size of every other symbolic dimension (sequence "
                   "lengths)")
      ->default_val(128)
      ->check(positiveSize());
  command->add_option("--dim", options->dims,
                      "Size of one symbolic dimension, NAME=SIZE "
                      "(repeatable; overrides --batch/--seq)");
  command->add_option("--warmup", options->warmup, "Untimed runs first")
      ->default_val(3);
  command->add_option("--repeat", options->repeat, "Timed runs")
      ->default_val(10);
  command->add_option("--threads", options->threads,
                      "Halide worker threads (sets HL_NUM_THREADS; default: "
                      "HL_NUM_THREADS or one per CPU)");
  command
      ->add_option("--seed", options->seed,
                   "Seed of the random inputs (weights always use seed 0)")
      ->default_val(0);
  command->add_flag("--check-unfused", options->checkUnfused,
                    "First run the entry once through the fused kernels and "
                    "once through the primitive ops' kernels (--no-fusion) "
                    "on the same inputs and weights, and print the largest "
                    "difference per output");
  command->add_flag("--json", options->json,
                    "Print one JSON object instead of text");
  command->add_flag("--serve", options->serve,
                    "After compiling and warming up, read commands from "
                    "stdin: a number N times N runs and prints one JSON line "
                    "with their times; 'quit' ends (for drivers that "
                    "interleave tfc with other frameworks, e.g. "
                    "bench/compare_pytorch.py)");
  command->add_flag("--profile", options->profile,
                    "Also time every kernel call: time per op kind and the "
                    "ten most expensive kernels");
  command->add_flag("--no-strided-views", options->noStridedViews,
                    "Run every transpose and slice kernel on row-major "
                    "buffers instead of binding strided views "
                    "(docs/runtime.md, \"Views\"), to time the difference");
  return [options] { return runBench(*options); };
}
