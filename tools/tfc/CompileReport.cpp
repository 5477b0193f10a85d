//===- CompileReport.cpp - Where a cold compile's time went ---------------===//

#include "tools/tfc/CompileReport.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <map>

using namespace tfc;
using namespace tfc::driver;

namespace {

using Clock = std::chrono::steady_clock;
using codegen::KernelCompileTime;

double secondsSince(Clock::time_point zero, Clock::time_point t) {
  return std::chrono::duration<double>(t - zero).count();
}

/// The plan's name of the kernel with `signature` ("k3_matmul") and the
/// number of plan steps that call it; the compiled name and 0 when the plan
/// has none (Halide's runtime).
std::pair<std::string, int> planNameAndUses(const rt::Plan &plan,
                                            const KernelCompileTime &time) {
  for (size_t k = 0; k < plan.kernels.size(); ++k) {
    if (time.signature.empty() || plan.kernels[k].signature != time.signature)
      continue;
    int uses = 0;
    for (const rt::PlanEntry &entry : plan.entries)
      for (const rt::PlanStep &step : entry.steps)
        uses += step.op == rt::PlanStep::Op::Kernel &&
                (step.kernel == static_cast<int32_t>(k) ||
                 step.variant.kernel == static_cast<int32_t>(k));
    return {plan.kernels[k].name, uses};
  }
  return {time.name, 0};
}

/// One thread's kernels, in the order it ran them.
struct ThreadRow {
  std::vector<const KernelCompileTime *> kernels;
  double cpu = 0;
};

void printTable(const session::CompiledModel &model,
                const std::vector<const KernelCompileTime *> &rows,
                const std::map<std::thread::id, unsigned> &threadIndex,
                llvm::raw_ostream &os) {
  Clock::time_point zero = model.stats.report.start;
  os << "  kernel                   op                       variants uses  "
        "build  lower codegen    cpu thread  start    end\n";
  for (const KernelCompileTime *t : rows) {
    auto [name, uses] = planNameAndUses(model.plan(), *t);
    os << llvm::format(
        "  %-24s %-24s %8u %4d %6.3f %6.3f %7.3f %6.3f %6u %6.3f %6.3f\n",
        name.c_str(), t->op.c_str(), t->variants, uses, t->buildSeconds,
        t->lowerSeconds, t->codegenSeconds, t->cpuSeconds(),
        threadIndex.at(t->thread), secondsSince(zero, t->start),
        secondsSince(zero, t->end));
  }
}

void printSummary(const session::CompiledModel &model,
                  const std::vector<const KernelCompileTime *> &rows,
                  const std::vector<ThreadRow> &threads,
                  llvm::raw_ostream &os) {
  const codegen::CompileReport &report = model.stats.report;
  double build = 0, lower = 0, codegenCpu = 0, longest = 0;
  for (const KernelCompileTime *t : rows) {
    build += t->buildSeconds;
    lower += t->lowerSeconds;
    codegenCpu += t->codegenSeconds;
    longest = std::max(longest, t->cpuSeconds());
  }
  double cpu = build + lower + codegenCpu;
  os << llvm::format("  cpu %.3f s: build %.3f, lower %.3f, codegen %.3f",
                     cpu, build, lower, codegenCpu);
  if (report.linkSeconds > 0)
    os << llvm::format("; link %.3f s wall", report.linkSeconds);
  os << "\n";
  const ThreadRow *last = nullptr;
  for (size_t i = 0; i < threads.size(); ++i) {
    const ThreadRow &row = threads[i];
    double end = secondsSince(report.start, row.kernels.back()->end);
    os << llvm::format("  thread %zu: %zu kernels, cpu %.3f s, last ends at "
                       "%.3f s\n",
                       i, row.kernels.size(), row.cpu, end);
    if (!last || row.kernels.back()->end > last->kernels.back()->end)
      last = &row;
  }
  os << "  critical path:";
  for (const KernelCompileTime *t : last->kernels)
    os << " " << planNameAndUses(model.plan(), *t).first
       << llvm::format(" (%.3f)", t->cpuSeconds());
  unsigned jobs = std::max(1u, model.stats.jobs);
  os << llvm::format("\n  bound on %u threads: max(cpu / %u, longest) = "
                     "max(%.3f, %.3f) = %.3f s cpu; compile took %.3f s wall\n",
                     jobs, jobs, cpu / jobs, longest,
                     std::max(cpu / jobs, longest), model.stats.seconds);
}

} // namespace

std::string driver::deferredKernelsNote(const session::CompiledModel &model) {
  size_t n = model.stats.deferred;
  if (n == 0)
    return "";
  return " (" + std::to_string(n) + " view kernel" + (n == 1 ? "" : "s") +
         " not needed so far)";
}

void driver::printCompileReport(const session::CompiledModel &model,
                                llvm::raw_ostream &os) {
  const codegen::CompileReport &report = model.stats.report;
  os << "compile report: " << report.kernels.size() << " kernels compiled ("
     << (model.disk ? "objects linked" : "JIT") << ", " << model.stats.cacheHits
     << " loaded from the cache) on " << model.stats.jobs << " threads\n";
  if (report.kernels.empty())
    return;
  std::vector<const KernelCompileTime *> rows;
  for (const KernelCompileTime &t : report.kernels)
    rows.push_back(&t);
  std::stable_sort(rows.begin(), rows.end(),
                   [](const KernelCompileTime *a, const KernelCompileTime *b) {
                     return a->start < b->start;
                   });
  std::map<std::thread::id, unsigned> threadIndex;
  std::vector<ThreadRow> threads;
  for (const KernelCompileTime *t : rows) {
    auto [it, added] = threadIndex.try_emplace(t->thread, threads.size());
    if (added)
      threads.emplace_back();
    threads[it->second].kernels.push_back(t);
    threads[it->second].cpu += t->cpuSeconds();
  }
  printTable(model, rows, threadIndex, os);
  printSummary(model, rows, threads, os);
}
