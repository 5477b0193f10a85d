//===- BenchCommand.cpp - tfc bench: time a model's entry -----------------===//
//
// Compiles the model like `tfc run` (Halide JIT, random weights drawn with
// seed 0), after the optimization pipeline (fusion; --no-fusion and
// --disable-pass as for the other commands), makes inputs of the requested
// sizes (random valid token ids, all-true padding masks, causal target
// masks, random f32 tensors), runs `--warmup` untimed iterations and then
// `--repeat` timed ones of the entry, and prints the median, min and max
// wall time per run and the GFLOP/s that passes/FlopCount.h counts on the
// IR elaborated with the same static sizes (before fusion).
//
// --profile times every kernel call (a trampoline per plan kernel around the
// JIT function; the timed runs above are not profiled) and prints the time
// per op kind and the ten most expensive kernels.
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
#include "tools/tfc/Inputs.h"
#include "tools/tfc/ModelRunner.h"

#include "passes/FlopCount.h"
#include "runtime/WeightBinding.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/raw_ostream.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <iostream>
#include <array>
#include <chrono>
#include <cmath>
#include <cstring>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <map>
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
  uint64_t seed = 0;
};

template <typename... Args>
std::string strf(const char *format, Args... args) {
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
  gSeconds[I] += std::chrono::duration<double>(
                     std::chrono::steady_clock::now() - start)
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
      std::uniform_int_distribution<int64_t> pick(0, std::max<int64_t>(
                                                         limit - 1, 0));
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

/// "tfc.matmul" from a kernel signature.
std::string opKind(const std::string &signature) {
  size_t end = signature.find_first_of("{(");
  return signature.substr(0, end);
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

int runBench(const BenchOptions &options) {
  if (options.repeat < 1 || options.warmup < 0) {
    llvm::errs() << "error: --repeat must be >= 1 and --warmup >= 0\n";
    return 1;
  }
  std::map<std::string, int64_t> dims;
  for (const std::string &dim : options.dims) {
    size_t eq = dim.find('=');
    int64_t value = 0;
    if (eq == std::string::npos || eq == 0 ||
        llvm::StringRef(dim).substr(eq + 1).getAsInteger(10, value) ||
        value < 0) {
      llvm::errs() << "error: --dim expects NAME=SIZE, got '" << dim << "'\n";
      return 1;
    }
    dims[dim.substr(0, eq)] = value;
  }
  if (options.threads > 0)
    setenv("HL_NUM_THREADS", std::to_string(options.threads).c_str(), 1);
  int threads = threadCount(options.threads);

  session::CompileOptions compile = compileOptions(options.model, options.cache);
  std::optional<CompiledModel> model = planModel(compile);
  if (!model)
    return 1;
  const rt::PlanEntry *entry = model->entry(options.entry);
  if (!entry) {
    llvm::errs() << "error: the model has no entry '" << options.entry
                 << "' (it has: " << session::entryNames(model->plan())
                 << ")\n";
    return 1;
  }
  compile.entries = {entry->name};
  if (!buildKernels(*model, compile))
    return 1;
  std::string modelName = model->plan().modelName.empty()
                              ? options.model.path
                              : model->plan().modelName;

  // FLOPs: the same model elaborated with every symbolic dim bound.
  std::map<std::string, int64_t> dimValues;
  for (const rt::PlanEntry &e : model->plan().entries)
    for (const rt::SymbolSource &s : e.symbols)
      dimValues[s.name] = symbolValue(s.name, options, dims);
  double flops = 0;
  int64_t uncounted = 0;
  {
    auto staticContext = makeContext();
    auto specialized = openModel(options.model, *staticContext,
                                 /*elaborateIR=*/true, dimValues);
    if (!specialized)
      return 1;
    for (auto func :
         specialized->model.module->getOps<mlir::func::FuncOp>()) {
      if (func.getName() != entry->name)
        continue;
      FlopCount count = countFlops(func);
      flops = count.total();
      uncounted = count.dynamicOps;
    }
  }

  rt::Expected<std::vector<rt::Tensor>> inputs =
      makeInputs(*entry, options, dims);
  if (!inputs) {
    llvm::errs() << "error: " << inputs.message() << "\n";
    return 1;
  }
  WeightOptions weightOptions;
  weightOptions.random = true;
  weightOptions.seed = 0;
  rt::Expected<rt::WeightMap> weights =
      driver::loadWeights(model->plan(), weightOptions);
  if (!weights) {
    llvm::errs() << "error: " << weights.message() << "\n";
    return 1;
  }

  const size_t numKernels = model->kernels.size();
  std::vector<rt::KernelFn> kernels = model->kernels;
  if (options.profile) {
    if (numKernels > kMaxProfiledKernels) {
      llvm::errs() << "error: --profile handles up to " << kMaxProfiledKernels
                   << " kernels; the model has " << numKernels << "\n";
      return 1;
    }
    for (size_t i = 0; i < numKernels; ++i) {
      // Kernels of other entries were not compiled: they stay null.
      gTargets[i] = model->kernels[i];
      kernels[i] = model->kernels[i] ? kTrampolines[i] : nullptr;
    }
  }
  auto setupStart = std::chrono::steady_clock::now();
  rt::Expected<rt::Executor> executor =
      rt::Executor::create(model->plan(), kernels, std::move(*weights));
  if (!executor) {
    llvm::errs() << "error: " << executor.message() << "\n";
    return 1;
  }
  double createSeconds = std::chrono::duration<double>(
                             std::chrono::steady_clock::now() - setupStart)
                             .count();

  double lastCpuMs = 0;
  auto cpuNow = [] {
    timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
  };
  auto runOnce = [&]() -> std::optional<double> {
    double cpuStart = cpuNow();
    auto start = std::chrono::steady_clock::now();
    rt::Expected<std::vector<rt::Tensor>> outputs =
        executor->run(entry->name, *inputs);
    double ms = std::chrono::duration<double, std::milli>(
                    std::chrono::steady_clock::now() - start)
                    .count();
    lastCpuMs = cpuNow() - cpuStart;
    if (!outputs) {
      llvm::errs() << "error: " << outputs.message() << "\n";
      return std::nullopt;
    }
    return ms;
  };

  if (options.checkUnfused) {
    // The same entry, inputs and weights through the primitive ops only.
    ModelOptions plain = options.model;
    plain.noFusion = true;
    std::optional<CompiledModel> reference =
        compileModel(plain, options.cache);
    if (!reference)
      return 1;
    rt::Expected<rt::WeightMap> refWeights =
        driver::loadWeights(reference->plan(), weightOptions);
    if (!refWeights) {
      llvm::errs() << "error: " << refWeights.message() << "\n";
      return 1;
    }
    rt::Expected<rt::Executor> refExecutor = rt::Executor::create(
        reference->plan(), reference->kernels, std::move(*refWeights));
    if (!refExecutor) {
      llvm::errs() << "error: " << refExecutor.message() << "\n";
      return 1;
    }
    rt::Expected<std::vector<rt::Tensor>> want =
        refExecutor->run(entry->name, *inputs);
    rt::Expected<std::vector<rt::Tensor>> got =
        executor->run(entry->name, *inputs);
    if (!want || !got) {
      llvm::errs() << "error: " << (!want ? want.message() : got.message())
                   << "\n";
      return 1;
    }
    for (size_t i = 0; i < got->size(); ++i)
      llvm::outs() << strf("check    %s: max |fused - unfused| = %.3g\n",
                           entry->outputNames[i].c_str(),
                           maxAbsDiff((*got)[i], (*want)[i]));
  }

  for (int i = 0; i < options.warmup; ++i)
    if (!runOnce())
      return 1;

  if (options.serve) {
    // One JSON line first (what is being timed), then one per command.
    llvm::outs() << "{\"ready\": true, \"model\": \"" << jsonEscape(modelName)
                 << "\", \"entry\": \"" << jsonEscape(entry->name)
                 << "\", \"threads\": " << threads
                 << strf(", \"gflop\": %.6g", flops / 1e9)
                 << strf(", \"compile_s\": %.6g", model->stats.seconds)
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
        std::optional<double> ms = runOnce();
        if (!ms)
          return 1;
        list += (i ? ", " : "") + strf("%.6g", *ms);
        cpuList += (i ? ", " : "") + strf("%.6g", lastCpuMs);
      }
      llvm::outs() << "{\"times_ms\": [" << list << "], \"cpu_ms\": ["
                   << cpuList << "]}\n";
      llvm::outs().flush();
    }
    return 0;
  }

  std::vector<double> times, cpuTimes;
  for (int i = 0; i < options.repeat; ++i) {
    std::optional<double> ms = runOnce();
    if (!ms)
      return 1;
    times.push_back(*ms);
    cpuTimes.push_back(lastCpuMs);
  }
  size_t steps = executor->lastRunStats().steps;
  size_t peakTemp = executor->lastRunStats().peakTempBytes;

  // Profile: separate runs, so the timed ones above carry no timer calls.
  std::vector<double> kernelMs(numKernels, 0.0);
  std::vector<double> kernelCpuMs(numKernels, 0.0);
  std::vector<double> kernelCalls(numKernels, 0.0);
  double profiledRunMs = 0;
  if (options.profile) {
    gSeconds.fill(0);
    gCpuSeconds.fill(0);
    gCalls.fill(0);
    gProfiling = true;
    std::vector<double> profiled;
    for (int i = 0; i < options.repeat; ++i) {
      std::optional<double> ms = runOnce();
      if (!ms)
        return 1;
      profiled.push_back(*ms);
    }
    gProfiling = false;
    profiledRunMs = median(profiled);
    for (size_t i = 0; i < numKernels; ++i) {
      kernelMs[i] = 1e3 * gSeconds[i] / options.repeat;
      kernelCpuMs[i] = 1e3 * gCpuSeconds[i] / options.repeat;
      kernelCalls[i] = static_cast<double>(gCalls[i]) / options.repeat;
    }
  }

  double med = median(times);
  double lo = *std::min_element(times.begin(), times.end());
  double hi = *std::max_element(times.begin(), times.end());
  double gflops = med > 0 ? flops / (med * 1e-3) / 1e9 : 0;

  // Per op kind and per kernel, sorted by time.
  struct Row {
    std::string name;
    double ms = 0;
    double calls = 0;
    double cpuMs = 0;
  };
  std::vector<Row> kinds, top;
  double kernelTotal = 0, kernelCpuTotal = 0;
  if (options.profile) {
    std::map<std::string, Row> byKind;
    for (size_t i = 0; i < numKernels; ++i) {
      const rt::PlanKernel &k = model->plan().kernels[i];
      Row &r = byKind[opKind(k.signature)];
      r.name = opKind(k.signature);
      r.ms += kernelMs[i];
      r.cpuMs += kernelCpuMs[i];
      r.calls += kernelCalls[i];
      kernelTotal += kernelMs[i];
      kernelCpuTotal += kernelCpuMs[i];
      if (kernelCalls[i] > 0)
        top.push_back(Row{k.name + "  " + k.signature, kernelMs[i],
                          kernelCalls[i], kernelCpuMs[i]});
    }
    for (auto &[name, row] : byKind)
      if (row.calls > 0)
        kinds.push_back(row);
    auto byTime = [](const Row &a, const Row &b) { return a.ms > b.ms; };
    std::sort(kinds.begin(), kinds.end(), byTime);
    std::sort(top.begin(), top.end(), byTime);
    if (top.size() > 10)
      top.resize(10);
  }

  std::string sizes;
  for (const rt::SymbolSource &s : entry->symbols)
    sizes += (sizes.empty() ? "" : ", ") + s.name + "=" +
             std::to_string(symbolValue(s.name, options, dims));

  if (options.json) {
    std::string out = "{";
    auto field = [&](const std::string &key, const std::string &value) {
      if (out.size() > 1)
        out += ", ";
      out += "\"" + key + "\": " + value;
    };
    auto str = [](const std::string &s) { return "\"" + jsonEscape(s) + "\""; };
    auto num = [](double v) { return strf("%.6g", v); };
    field("model", str(modelName));
    field("path", str(options.model.path));
    field("entry", str(entry->name));
    field("batch", std::to_string(symbolValue("batch", options, dims)));
    field("seq", std::to_string(options.seq));
    std::string dimsJson = "{";
    for (const rt::SymbolSource &s : entry->symbols)
      dimsJson += (dimsJson.size() > 1 ? ", " : "") + str(s.name) + ": " +
                  std::to_string(symbolValue(s.name, options, dims));
    field("dims", dimsJson + "}");
    field("threads", std::to_string(threads));
    field("warmup", std::to_string(options.warmup));
    field("repeat", std::to_string(options.repeat));
    field("median_ms", num(med));
    field("min_ms", num(lo));
    field("max_ms", num(hi));
    std::string list = "[";
    for (size_t i = 0; i < times.size(); ++i)
      list += (i ? ", " : "") + num(times[i]);
    field("times_ms", list + "]");
    field("cpu_median_ms", num(median(cpuTimes)));
    field("gflop", num(flops / 1e9));
    field("gflops", num(gflops));
    field("uncounted_ops", std::to_string(uncounted));
    field("steps", std::to_string(steps));
    field("kernels", std::to_string(numKernels));
    field("peak_temp_bytes", std::to_string(peakTemp));
    field("compile_s", num(model->stats.seconds));
    field("create_s", num(createSeconds));
    if (options.profile) {
      std::string kindsJson = "[";
      for (size_t i = 0; i < kinds.size(); ++i)
        kindsJson += std::string(i ? ", " : "") + "{\"op\": " +
                     str(kinds[i].name) + ", \"ms\": " + num(kinds[i].ms) +
                     ", \"cpu_ms\": " + num(kinds[i].cpuMs) +
                     ", \"calls\": " + num(kinds[i].calls) + "}";
      field("profile_run_ms", num(profiledRunMs));
      field("profile", kindsJson + "]");
      std::string topJson = "[";
      for (size_t i = 0; i < top.size(); ++i)
        topJson += std::string(i ? ", " : "") + "{\"kernel\": " +
                   str(top[i].name) + ", \"ms\": " + num(top[i].ms) +
                   ", \"cpu_ms\": " + num(top[i].cpuMs) +
                   ", \"calls\": " + num(top[i].calls) + "}";
      field("top_kernels", topJson + "]");
    }
    llvm::outs() << out << "}\n";
    return 0;
  }

  llvm::outs() << "model    " << modelName << ", entry " << entry->name
               << " (" << sizes << ")\n";
  llvm::outs() << strf("compiled %zu kernels for %zu steps in %.2f s; "
                       "executor setup %.2f s\n",
                       numKernels, steps, model->stats.seconds,
                       createSeconds);
  llvm::outs() << strf("threads  %d; %d warm-up + %d timed runs\n", threads,
                       options.warmup, options.repeat);
  llvm::outs() << strf("time     median %.3f ms  (min %.3f, max %.3f); CPU "
                       "time median %.3f ms\n",
                       med, lo, hi, median(cpuTimes));
  llvm::outs() << strf("compute  %.3f GFLOP per run -> %.1f GFLOP/s%s\n",
                       flops / 1e9, gflops,
                       uncounted ? " (some ops not counted)" : "");
  llvm::outs() << strf("memory   peak temps %.1f MiB\n",
                       static_cast<double>(peakTemp) / (1 << 20));
  if (options.profile) {
    llvm::outs() << strf("\nprofile  (%d runs, median %.3f ms; kernels "
                         "%.3f ms wall, %.3f ms CPU per run; the rest of the "
                         "wall time is executor overhead)\n",
                         options.repeat, profiledRunMs, kernelTotal,
                         kernelCpuTotal);
    llvm::outs() << strf("  %-28s %10s %10s %7s %8s\n", "op", "ms/run",
                         "CPU ms/run", "share", "calls");
    for (const Row &r : kinds)
      llvm::outs() << strf("  %-28s %10.3f %10.3f %6.1f%% %8.0f\n",
                           r.name.c_str(), r.ms, r.cpuMs,
                           kernelTotal > 0 ? 100 * r.ms / kernelTotal : 0,
                           r.calls);
    llvm::outs() << "\n  top kernels (wall ms, CPU ms per run)\n";
    for (const Row &r : top) {
      std::string name = r.name;
      if (name.size() > 150)
        name = name.substr(0, 147) + "...";
      llvm::outs() << strf("  %9.3f %9.3f %6.1f%% %5.0fx  %s\n", r.ms,
                           r.cpuMs,
                           kernelTotal > 0 ? 100 * r.ms / kernelTotal : 0,
                           r.calls, name.c_str());
    }
  }
  return 0;
}

} // namespace

CommandRunner driver::registerBenchCommand(CLI::App &app) {
  auto options = std::make_shared<BenchOptions>();
  CLI::App *command = app.add_subcommand(
      "bench", "Time one entry of a model (Halide JIT, random weights): "
               "median/min/max ms and GFLOP/s");
  addModelOptions(*command, options->model);
  addPipelineOptions(*command, options->model);
  addCacheOptions(*command, options->cache);
  command->add_option("--entry", options->entry,
                      "Entry point to time (default: the first one)");
  command->add_option("--batch", options->batch, "Batch size")
      ->default_val(1)
      ->check(positiveSize());
  command->add_option("--seq", options->seq,
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
  command->add_option("--seed", options->seed,
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
  return [options] { return runBench(*options); };
}
