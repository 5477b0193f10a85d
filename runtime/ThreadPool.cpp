//===- ThreadPool.cpp - The parallel loops of the compiled kernels --------===//
//
// See ThreadPool.h. Workers are POSIX threads (pthread_create reports a
// failure as a value: the pool then runs with the workers it has) that are
// never joined: the pool lives until the process ends.
//
//===----------------------------------------------------------------------===//

#include "runtime/ThreadPool.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <thread>

#include <pthread.h>

namespace tfc::rt {
namespace {

/// How long an idle worker spins for the next loop before it sleeps. Loops
/// of a model follow each other within microseconds to a few tens of them;
/// 50, 200 and 2000 measured the same on the Transformer base (2 threads).
constexpr int64_t kSpinMicroseconds = 100;

/// Busy-wait hint for the core (x86 `pause`).
inline void relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

int64_t nowMicroseconds() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

/// Most chunks of one loop (threads beyond share them).
constexpr int kMaxChunks = 64;

/// One thread's contiguous share of a loop's indices, [lo, hi): its owner
/// takes them from the front, in order, and threads done with their own
/// take from the back. Both ends in one word, so that a take is one
/// compare-and-swap.
struct alignas(64) Chunk {
  std::atomic<uint64_t> bounds{0};
  static uint64_t pack(uint32_t lo, uint32_t hi) {
    return uint64_t(hi) << 32 | lo;
  }
  void reset(int lo, int hi) { bounds.store(pack(lo, hi)); }
  /// The next index from the front (`front`) or the back; false if none.
  bool take(bool front, int &index) {
    uint64_t b = bounds.load();
    for (;;) {
      uint32_t lo = uint32_t(b), hi = uint32_t(b >> 32);
      if (lo >= hi)
        return false;
      uint64_t next = front ? pack(lo + 1, hi) : pack(lo, hi - 1);
      if (bounds.compare_exchange_weak(b, next)) {
        index = int(front ? lo : hi - 1);
        return true;
      }
    }
  }
};

/// One parallel loop. Lives on the caller's stack; the caller returns only
/// once no worker can still reach it (see Pool::run). Its indices are cut
/// into one contiguous chunk per thread: a thread's tasks follow each other
/// (the extern product stages guess the block a thread computes next from
/// its last two, and prefetch it: PanelBlocks.h), and a thread that is done
/// helps the others from their chunks' ends.
struct Job {
  ParallelTask task;
  void *userContext;
  int min;
  int size;
  uint8_t *closure;
  int chunks = 1;
  Chunk chunk[kMaxChunks];
  std::atomic<int> finished{0};
  std::atomic<int> result{0};

  void cut(int threads) {
    chunks = std::max(1, std::min({threads, size, kMaxChunks}));
    for (int c = 0; c < chunks; ++c)
      chunk[c].reset(int(long(size) * c / chunks),
                     int(long(size) * (c + 1) / chunks));
  }
};

/// Runs task `i` of `job`; after a failure the rest are counted but not
/// run, as in Halide's pool.
void runTask(Job &job, int i) {
  if (job.result.load(std::memory_order_relaxed) == 0) {
    int rc = job.task(job.userContext, job.min + i, job.closure);
    if (rc != 0) {
      int expected = 0;
      job.result.compare_exchange_strong(expected, rc);
    }
  }
  job.finished.fetch_add(1);
}

/// Runs tasks of `job` as thread `thread` (the caller is 0) until none is
/// left: its own chunk from the front, then the others' from their backs.
void work(Job &job, int thread) {
  int own = thread % job.chunks, i;
  while (job.chunk[own].take(true, i))
    runTask(job, i);
  for (int c = 1; c < job.chunks; ++c) {
    Chunk &other = job.chunk[(own + c) % job.chunks];
    while (other.take(false, i))
      runTask(job, i);
  }
}

/// Set on workers, and on a caller while it runs its share: a loop started
/// inside a task runs serially (the pool is busy with its parent).
thread_local bool tInsideLoop = false;

class Pool {
public:
  /// Never destroyed: workers may be waiting in it when the process exits.
  static Pool &get() {
    static Pool *pool = new Pool();
    return *pool;
  }

  int threads() const { return desired.load(std::memory_order_relaxed); }

  int setThreads(int n) {
    std::lock_guard<std::mutex> runLock(runMutex);
    int old = desired.load();
    {
      // Under the mutex that surplus workers park on (see parkWhileSurplus).
      std::lock_guard<std::mutex> lock(sleepMutex);
      desired.store(n > 0 ? n : defaultThreads());
    }
    resized.notify_all();
    return old;
  }

  int run(Job &job) {
    std::lock_guard<std::mutex> runLock(runMutex);
    startWorkers();
    current.store(&job);
    generation.fetch_add(1);
    if (sleeping.load() > 0) {
      // A worker counts itself as sleeping under the mutex before it tests
      // the generation; taking the mutex here means it either sees the new
      // generation or is already waiting when notified.
      { std::lock_guard<std::mutex> lock(sleepMutex); }
      wake.notify_all();
    }
    tInsideLoop = true;
    work(job, 0);
    tInsideLoop = false;
    waitUntil([&] { return job.finished.load() == job.size; });
    // A worker holds `busy` from before it reads `current` until it is done
    // with the job it read: once `current` is cleared and `busy` is 0, none
    // can touch `job` again.
    current.store(nullptr);
    waitUntil([&] { return busy.load() == 0; });
    return job.result.load();
  }

private:
  Pool() : desired(defaultThreads()) {}

  /// HL_NUM_THREADS, else one per hardware thread (as Halide's pool).
  static int defaultThreads() {
    int n = 0;
    if (const char *env = std::getenv("HL_NUM_THREADS"))
      n = std::atoi(env);
    if (n <= 0)
      n = static_cast<int>(std::thread::hardware_concurrency());
    return n > 0 ? n : 1;
  }

  /// Spins until `done()`, yielding the core now and then (a worker that
  /// holds the last task may be waiting for it).
  template <typename Done> static void waitUntil(Done done) {
    for (int spins = 1; !done(); ++spins) {
      relax();
      if (spins % 1024 == 0)
        std::this_thread::yield();
    }
  }

  /// Starts workers up to desired - 1 (the caller is the last thread), once
  /// per thread count: after a failed pthread_create the pool runs with the
  /// workers it has.
  void startWorkers() {
    int want = desired.load();
    if (startedFor == want)
      return;
    startedFor = want;
    for (; workers < want - 1; ++workers) {
      pthread_t thread;
      auto *start = new WorkerStart{this, workers + 1};
      if (pthread_create(&thread, nullptr, &Pool::workerMain, start) != 0) {
        delete start;
        break;
      }
      pthread_detach(thread);
    }
  }

  struct WorkerStart {
    Pool *pool;
    int index; // 1, 2, ...: the caller is thread 0
  };

  static void *workerMain(void *arg) {
    WorkerStart start = *static_cast<WorkerStart *>(arg);
    delete static_cast<WorkerStart *>(arg);
    start.pool->workerLoop(start.index);
    return nullptr;
  }

  /// Waits for a new generation: spins kSpinMicroseconds, then sleeps.
  void awaitGeneration(uint64_t seen) {
    int64_t start = nowMicroseconds();
    for (int spins = 1; generation.load(std::memory_order_acquire) == seen;
         ++spins) {
      relax();
      if (spins % 64 != 0 || nowMicroseconds() - start < kSpinMicroseconds)
        continue;
      std::unique_lock<std::mutex> lock(sleepMutex);
      sleeping.fetch_add(1);
      wake.wait(lock, [&] { return generation.load() != seen; });
      sleeping.fetch_sub(1);
      return;
    }
  }

  /// A worker beyond the thread count (setThreads lowered it) sleeps until
  /// the count covers it again; it is not woken by loops.
  void parkWhileSurplus(int index) {
    std::unique_lock<std::mutex> lock(sleepMutex);
    resized.wait(lock, [&] { return index < desired.load(); });
  }

  [[noreturn]] void workerLoop(int index) {
    tInsideLoop = true;
    uint64_t seen = 0;
    for (;;) {
      if (index >= desired.load()) {
        parkWhileSurplus(index);
        seen = generation.load();
      }
      awaitGeneration(seen);
      seen = generation.load();
      if (index >= desired.load())
        continue; // resized while it waited
      busy.fetch_add(1);
      if (Job *job = current.load())
        work(*job, index);
      busy.fetch_sub(1);
    }
  }

  std::atomic<int> desired;
  int startedFor = 0;       // guarded by runMutex: desired at the last start
  int workers = 0;          // guarded by runMutex: workers started
  std::mutex runMutex;      // one loop (or resize) at a time
  std::mutex sleepMutex;    // with `wake` and `resized`: sleeping workers
  std::condition_variable wake, resized;
  std::atomic<uint64_t> generation{0};
  std::atomic<Job *> current{nullptr};
  std::atomic<int> busy{0};
  std::atomic<int> sleeping{0};
};

} // namespace

int parallelFor(void *userContext, ParallelTask task, int min, int size,
                uint8_t *closure) {
  if (size <= 0)
    return 0;
  if (size == 1 || tInsideLoop || Pool::get().threads() <= 1) {
    for (int i = 0; i < size; ++i)
      if (int rc = task(userContext, min + i, closure))
        return rc;
    return 0;
  }
  Job job;
  job.task = task;
  job.userContext = userContext;
  job.min = min;
  job.size = size;
  job.closure = closure;
  job.cut(Pool::get().threads());
  return Pool::get().run(job);
}

int setParallelThreads(int n) { return Pool::get().setThreads(n); }

} // namespace tfc::rt
