//===- Parallel.cpp - Compile kernels on several threads ------------------===//

#include "codegen/Parallel.h"

#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/Threading.h"

#include <algorithm>
#include <optional>
#include <vector>

using namespace tfc;

unsigned codegen::compileJobs(unsigned jobs) {
  if (jobs > 0)
    return jobs;
  return std::max(1u, llvm::hardware_concurrency().compute_thread_count());
}

std::vector<size_t> codegen::longestFirst(llvm::ArrayRef<unsigned> costs) {
  std::vector<size_t> order(costs.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return costs[a] > costs[b]; });
  return order;
}

llvm::Error codegen::forEachIndex(size_t count, unsigned jobs,
                                  llvm::function_ref<llvm::Error(size_t)> fn,
                                  llvm::ArrayRef<size_t> startOrder) {
  std::vector<std::optional<llvm::Error>> errors(count);
  auto indexAt = [&](size_t n) {
    return startOrder.size() == count ? startOrder[n] : n;
  };
  unsigned threads =
      static_cast<unsigned>(std::min<size_t>(compileJobs(jobs), count));
  if (threads <= 1) {
    for (size_t n = 0; n < count; ++n)
      errors[indexAt(n)].emplace(fn(indexAt(n)));
  } else {
    llvm::StdThreadPool pool(llvm::hardware_concurrency(threads));
    for (size_t n = 0; n < count; ++n) {
      size_t i = indexAt(n);
      pool.async([&errors, fn, i] { errors[i].emplace(fn(i)); });
    }
    pool.wait();
  }
  llvm::Error first = llvm::Error::success();
  for (std::optional<llvm::Error> &err : errors) {
    if (!err || !*err)
      continue;
    if (first)
      llvm::consumeError(std::move(*err));
    else
      first = std::move(*err);
  }
  return first;
}
