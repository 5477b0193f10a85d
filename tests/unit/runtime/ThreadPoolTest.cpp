//===- ThreadPoolTest.cpp - The kernels' parallel loops -------------------===//

#include "runtime/ThreadPool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

using namespace tfc::rt;

namespace {

/// Counts calls per index in the vector the user context points to.
int countIndex(void *userContext, int index, uint8_t *) {
  auto &counts = *static_cast<std::vector<std::atomic<int>> *>(userContext);
  counts[static_cast<size_t>(index)].fetch_add(1);
  return 0;
}

/// Three workers beside the caller, more than the tasks of some loops below,
/// whatever the machine (the pool reads HL_NUM_THREADS at its first loop).
class ThreadPoolTest : public ::testing::Test {
protected:
  static void SetUpTestSuite() { setenv("HL_NUM_THREADS", "4", 1); }
};

TEST_F(ThreadPoolTest, RunsEveryIndexOnce) {
  for (int size : {0, 1, 2, 3, 11, 64, 1000}) {
    std::vector<std::atomic<int>> counts(1100);
    ASSERT_EQ(parallelFor(&counts, countIndex, 5, size, nullptr), 0);
    for (int i = 0; i < 1100; ++i)
      EXPECT_EQ(counts[i].load(), i >= 5 && i < 5 + size ? 1 : 0)
          << "size " << size << " index " << i;
  }
}

TEST_F(ThreadPoolTest, ManyLoopsInARow) {
  // Loops that follow each other while the workers still spin, and after
  // they slept.
  std::vector<std::atomic<int>> counts(48);
  for (int round = 0; round < 2000; ++round) {
    ASSERT_EQ(parallelFor(&counts, countIndex, 0, 48, nullptr), 0);
    if (round % 500 == 0)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  for (auto &count : counts)
    EXPECT_EQ(count.load(), 2000);
}

int failAtSeven(void *, int index, uint8_t *) { return index == 7 ? -3 : 0; }

TEST_F(ThreadPoolTest, ReturnsTheFailure) {
  EXPECT_EQ(parallelFor(nullptr, failAtSeven, 0, 100, nullptr), -3);
  EXPECT_EQ(parallelFor(nullptr, failAtSeven, 8, 100, nullptr), 0);
}

/// Each task runs an inner loop of 10 tasks (serially on its thread).
int nested(void *userContext, int index, uint8_t *) {
  auto &counts = *static_cast<std::vector<std::atomic<int>> *>(userContext);
  return parallelFor(&counts, countIndex, index * 10, 10, nullptr);
}

TEST_F(ThreadPoolTest, NestedLoops) {
  std::vector<std::atomic<int>> counts(200);
  ASSERT_EQ(parallelFor(&counts, nested, 0, 20, nullptr), 0);
  for (auto &count : counts)
    EXPECT_EQ(count.load(), 1);
}

TEST_F(ThreadPoolTest, CallersOnSeveralThreads) {
  std::vector<std::atomic<int>> counts(64);
  std::atomic<int> failures{0};
  std::vector<std::thread> callers;
  for (int t = 0; t < 3; ++t)
    callers.emplace_back([&] {
      for (int round = 0; round < 300; ++round)
        if (parallelFor(&counts, countIndex, 0, 64, nullptr) != 0)
          failures.fetch_add(1);
    });
  for (std::thread &caller : callers)
    caller.join();
  EXPECT_EQ(failures.load(), 0);
  for (auto &count : counts)
    EXPECT_EQ(count.load(), 900);
}

/// Records the threads that ran a task.
struct ThreadSet {
  std::mutex mutex;
  std::set<std::thread::id> ids;
};

int recordThread(void *userContext, int, uint8_t *) {
  auto &threads = *static_cast<ThreadSet *>(userContext);
  std::lock_guard<std::mutex> lock(threads.mutex);
  threads.ids.insert(std::this_thread::get_id());
  return 0;
}

/// The threads that ran the tasks of `rounds` loops of 64 tasks.
std::set<std::thread::id> threadsOfLoops(int rounds) {
  ThreadSet threads;
  for (int round = 0; round < rounds; ++round)
    EXPECT_EQ(parallelFor(&threads, recordThread, 0, 64, nullptr), 0);
  return threads.ids;
}

TEST_F(ThreadPoolTest, SetThreads) {
  // Start the four threads, then lower and raise the count: a loop never
  // runs on more threads than the count, and with 1 only on the caller.
  EXPECT_LE(threadsOfLoops(10).size(), 4u);
  EXPECT_EQ(setParallelThreads(1), 4);
  std::set<std::thread::id> one = threadsOfLoops(10);
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(*one.begin(), std::this_thread::get_id());
  EXPECT_EQ(setParallelThreads(2), 1);
  EXPECT_LE(threadsOfLoops(50).size(), 2u);
  // 0 is the default: HL_NUM_THREADS (4).
  EXPECT_EQ(setParallelThreads(0), 2);
  EXPECT_EQ(setParallelThreads(4), 4);
  std::vector<std::atomic<int>> counts(64);
  ASSERT_EQ(parallelFor(&counts, countIndex, 0, 64, nullptr), 0);
  for (auto &count : counts)
    EXPECT_EQ(count.load(), 1);
}

/// Who ran each task of a loop, and when.
struct Runs {
  std::vector<std::thread::id> thread;
  std::vector<int> stamp;
  std::atomic<int> clock{0};
  explicit Runs(int size) : thread(size), stamp(size) {}
};

int recordRun(void *userContext, int index, uint8_t *) {
  auto &runs = *static_cast<Runs *>(userContext);
  runs.thread[index] = std::this_thread::get_id();
  runs.stamp[index] = runs.clock.fetch_add(1);
  // Long enough that the other thread usually starts on its own chunk.
  std::this_thread::sleep_for(std::chrono::microseconds(50));
  return 0;
}

TEST_F(ThreadPoolTest, EachThreadTakesItsChunkInOrder) {
  // Two threads: the loop's indices are two chunks, the caller's first. A
  // thread takes its own chunk from the front, in order, and then helps
  // with the other's from its back: each chunk is a prefix its owner ran in
  // increasing order and a suffix the other ran in decreasing order
  // (whatever the timing: either part may be empty).
  EXPECT_EQ(setParallelThreads(2), 4);
  const int size = 40, half = size / 2;
  for (int round = 0; round < 20; ++round) {
    Runs runs(size);
    ASSERT_EQ(parallelFor(&runs, recordRun, 0, size, nullptr), 0);
    EXPECT_EQ(runs.thread[0], std::this_thread::get_id());
    for (int chunk = 0; chunk < 2; ++chunk) {
      int lo = chunk * half, hi = lo + half;
      auto isOwner = [&](int i) {
        return (runs.thread[i] == std::this_thread::get_id()) == (chunk == 0);
      };
      int split = lo;
      while (split < hi && isOwner(split))
        ++split;
      for (int i = lo; i < hi; ++i) {
        EXPECT_EQ(isOwner(i), i < split) << "chunk " << chunk << " index " << i;
        if (i + 1 < split) {
          EXPECT_LT(runs.stamp[i], runs.stamp[i + 1]) << "index " << i;
        }
        if (i >= split && i + 1 < hi) {
          EXPECT_GT(runs.stamp[i], runs.stamp[i + 1]) << "index " << i;
        }
      }
    }
  }
  EXPECT_EQ(setParallelThreads(0), 2);
}

} // namespace
