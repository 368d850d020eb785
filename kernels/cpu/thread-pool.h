// A small persistent thread pool for data-parallel loops inside one op.
//
// Contract: one thread (the backend's caller) calls parallel_for at a time;
// it runs task ranges itself as thread 0 and returns when all are done, so
// ops stay synchronous. Workers are created once; between jobs they spin
// briefly (decode issues ops a few microseconds apart) and then sleep on a
// condition variable, so an idle engine costs no CPU.
//
// A worker joins a job only while the job is open; the caller closes it
// once every range has been handed out and then waits only for workers that
// joined (which are running). So a worker that the OS has not scheduled
// (more threads than free cores) never holds up an op.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace rc::kernels {

class ThreadPool {
 public:
  // n_threads >= 1, counting the calling thread.
  explicit ThreadPool(int n_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return n_threads_; }

  // Calls fn(begin, end, thread_index) over disjoint ranges covering
  // [0, count), each at most `grain` long (grain >= 1). Ranges are handed out
  // dynamically, so a thread preempted by another process does not hold up
  // the others; thread_index < size() selects per-thread scratch.
  using RangeFn = std::function<void(int64_t begin, int64_t end, int thread)>;
  void parallel_for(int64_t count, int64_t grain, const RangeFn& fn);

  // The same contract, for loops that stream through memory in index order
  // (decode's matmuls): [0, count) is cut into one contiguous region per
  // thread, which its thread walks forward `grain` at a time, so each
  // thread reads on through consecutive memory; a thread whose region is
  // done takes grains from the back of the others' regions (a thread the
  // OS never runs leaves its whole region to them), so the threads still
  // finish within about one grain of each other.
  void parallel_for_regions(int64_t count, int64_t grain, const RangeFn& fn);

 private:
  void start(int64_t count, int64_t grain, const RangeFn& fn, bool regions);
  void worker_main(int index);
  void run_chunks(int thread);
  void run_regions(int thread);
  // Runs one grain from region r's front (own) or back (stolen); false
  // when the region is empty.
  bool take_grain(int r, bool from_front, int thread);

  int n_threads_;
  std::vector<std::thread> workers_;

  // The current job. state_ packs (generation << 32) | closed bit | number
  // of workers inside the job; a new generation publishes fn_/count_/grain_.
  // Each word that threads write while a job runs has a cache line of its
  // own: a decode matmul takes a grain every microsecond or so, and a line
  // shared between the threads' words moved between cores on every one.
  static constexpr uint64_t kClosed = uint64_t(1) << 31;
  static constexpr uint64_t kCountMask = kClosed - 1;
  struct alignas(64) Region {
    std::atomic<uint64_t> grains{0};  // (back << 32) | front, in grains
  };
  const RangeFn* fn_ = nullptr;
  int64_t count_ = 0;
  int64_t grain_ = 1;
  bool by_regions_ = false;
  alignas(64) std::atomic<int64_t> next_{0};
  // parallel_for_regions: one per thread.
  std::unique_ptr<Region[]> regions_;
  alignas(64) std::atomic<uint64_t> state_{kClosed};
  std::atomic<bool> stop_{false};
  std::atomic<int> sleepers_{0};  // workers inside wake_.wait (start notifies only then)

  std::mutex mutex_;
  std::condition_variable wake_;
};

}  // namespace rc::kernels
