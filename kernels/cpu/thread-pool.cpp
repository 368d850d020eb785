#include "thread-pool.h"

#include "rc-assert.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define RC_CPU_RELAX() _mm_pause()
#else
#define RC_CPU_RELAX() std::this_thread::yield()
#endif

namespace rc::kernels {
namespace {
// Tens of microseconds of pause instructions before a worker sleeps: long
// enough to catch the next op of a decode step, short enough not to steal
// a shared core for long.
constexpr int kSpinIterations = 4000;
}  // namespace

ThreadPool::ThreadPool(int n_threads) : n_threads_(n_threads) {
  RC_ASSERT(n_threads >= 1);
  for (int i = 1; i < n_threads; ++i) workers_.emplace_back([this, i] { worker_main(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_.store(true);
    state_.fetch_add(uint64_t(1) << 32);
  }
  wake_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void ThreadPool::run_chunks(int thread) {
  for (;;) {
    const int64_t begin = next_.fetch_add(grain_, std::memory_order_relaxed);
    if (begin >= count_) return;
    const int64_t end = begin + grain_ < count_ ? begin + grain_ : count_;
    (*fn_)(begin, end, thread);
  }
}

void ThreadPool::parallel_for(int64_t count, int64_t grain, const RangeFn& fn) {
  if (count <= 0) return;
  if (grain < 1) grain = 1;
  if (n_threads_ == 1 || count <= grain) {
    for (int64_t b = 0; b < count; b += grain) fn(b, b + grain < count ? b + grain : count, 0);
    return;
  }
  fn_ = &fn;
  count_ = count;
  grain_ = grain;
  next_.store(0, std::memory_order_relaxed);
  {
    // Under the lock so a worker about to sleep cannot miss the wake-up.
    std::lock_guard<std::mutex> lock(mutex_);
    const uint64_t gen = (state_.load(std::memory_order_relaxed) >> 32) + 1;
    state_.store(gen << 32, std::memory_order_release);  // open, nobody inside
  }
  wake_.notify_all();
  run_chunks(0);
  // Every range is handed out: close the job, then wait for the workers
  // that joined it to finish their last range.
  state_.fetch_or(kClosed, std::memory_order_acq_rel);
  for (int spin = 0; (state_.load(std::memory_order_acquire) & kCountMask) != 0; ++spin) {
    if (spin < 1000) {
      RC_CPU_RELAX();
    } else {
      std::this_thread::yield();
    }
  }
  fn_ = nullptr;
}

void ThreadPool::worker_main(int index) {
  uint64_t seen = 0;
  for (;;) {
    uint64_t s = state_.load(std::memory_order_acquire);
    for (int spin = 0; (s >> 32) == seen && spin < kSpinIterations; ++spin) {
      RC_CPU_RELAX();
      s = state_.load(std::memory_order_acquire);
    }
    if ((s >> 32) == seen) {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return (state_.load(std::memory_order_acquire) >> 32) != seen; });
      s = state_.load(std::memory_order_acquire);
    }
    if (stop_.load()) return;
    seen = s >> 32;
    // Join only the job we saw, and only while it is open.
    bool joined = false;
    while ((s >> 32) == seen && !(s & kClosed)) {
      if (state_.compare_exchange_weak(s, s + 1, std::memory_order_acq_rel)) {
        joined = true;
        break;
      }
    }
    if (!joined) continue;
    run_chunks(index);
    state_.fetch_sub(1, std::memory_order_acq_rel);
  }
}

}  // namespace rc::kernels
