#include "thread-pool.h"

#include "rc-assert.h"

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

namespace rc::kernels {
namespace {

// One step of a spin-wait, between two polls: a PAUSE, then 256 TSC ticks
// of busy time without one. Under a hypervisor, PAUSEs
// closer together than ~128 cycles look like a vCPU spinning on a lock
// whose holder was preempted (KVM's pause-loop exiting), and the spinning
// vCPU is descheduled for microseconds: on a small KVM guest, with a
// PAUSE per poll, many of a decode's matmuls waited that long for their
// worker to join (a worker that never had anything else to do); spaced
// out, few did, nearly all of them wake-ups from sleep.
inline void spin_step() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
  const uint64_t t0 = __rdtsc();
  while (__rdtsc() - t0 < 256) {
  }
#else
  std::this_thread::yield();
#endif
}

// Tens of microseconds of spinning before a worker sleeps: long enough to
// catch the next op of a decode step, short enough not to steal a shared
// core for long.
constexpr int kSpinSteps = 400;
// The caller's spin while the last workers finish, before it yields.
constexpr int kWaitSteps = 150;

}  // namespace

ThreadPool::ThreadPool(int n_threads)
    : n_threads_(n_threads), regions_(new Region[size_t(n_threads)]) {
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
  if (by_regions_) {
    run_regions(thread);
    return;
  }
  for (;;) {
    const int64_t begin = next_.fetch_add(grain_, std::memory_order_relaxed);
    if (begin >= count_) return;
    const int64_t end = begin + grain_ < count_ ? begin + grain_ : count_;
    (*fn_)(begin, end, thread);
  }
}

bool ThreadPool::take_grain(int r, bool from_front, int thread) {
  std::atomic<uint64_t>& region = regions_[size_t(r)].grains;
  uint64_t v = region.load(std::memory_order_relaxed);
  uint64_t front, back;
  do {
    front = v & 0xffffffffu;
    back = v >> 32;
    if (front >= back) return false;
  } while (!region.compare_exchange_weak(v, from_front ? v + 1 : v - (uint64_t(1) << 32),
                                         std::memory_order_relaxed));
  const int64_t g = int64_t(from_front ? front : back - 1);
  const int64_t begin = g * grain_;
  (*fn_)(begin, begin + grain_ < count_ ? begin + grain_ : count_, thread);
  return true;
}

void ThreadPool::run_regions(int thread) {
  while (take_grain(thread, true, thread)) {
  }
  for (int k = 1; k < n_threads_; ++k) {
    const int r = (thread + k) % n_threads_;
    while (take_grain(r, false, thread)) {
    }
  }
}

void ThreadPool::parallel_for(int64_t count, int64_t grain, const RangeFn& fn) {
  start(count, grain, fn, false);
}

void ThreadPool::parallel_for_regions(int64_t count, int64_t grain, const RangeFn& fn) {
  start(count, grain, fn, true);
}

void ThreadPool::start(int64_t count, int64_t grain, const RangeFn& fn, bool regions) {
  if (count <= 0) return;
  if (grain < 1) grain = 1;
  if (n_threads_ == 1 || count <= grain) {
    for (int64_t b = 0; b < count; b += grain) fn(b, b + grain < count ? b + grain : count, 0);
    return;
  }
  fn_ = &fn;
  count_ = count;
  grain_ = grain;
  by_regions_ = regions;
  next_.store(0, std::memory_order_relaxed);
  if (regions) {
    const int64_t grains = (count + grain - 1) / grain;
    RC_ASSERT(grains < (int64_t(1) << 32));
    for (int t = 0; t < n_threads_; ++t) {
      const uint64_t front = uint64_t(grains * t / n_threads_);
      const uint64_t back = uint64_t(grains * (t + 1) / n_threads_);
      regions_[size_t(t)].grains.store(back << 32 | front, std::memory_order_relaxed);
    }
  }
  // The store publishes the job, regions included. A worker going to sleep
  // counts itself in sleepers_ before it checks state_ a last time, and
  // both sides' accesses are sequentially consistent: either it sees this
  // job, or this load sees it and the notify (after the lock, which it
  // holds until it waits) wakes it. Spinning workers need neither.
  const uint64_t gen = (state_.load(std::memory_order_relaxed) >> 32) + 1;
  state_.store(gen << 32, std::memory_order_seq_cst);  // open, nobody inside
  if (sleepers_.load(std::memory_order_seq_cst) > 0) {
    { std::lock_guard<std::mutex> lock(mutex_); }
    wake_.notify_all();
  }
  run_chunks(0);
  // Every range is handed out: close the job, then wait for the workers
  // that joined it to finish their last range.
  state_.fetch_or(kClosed, std::memory_order_acq_rel);
  for (int spin = 0; (state_.load(std::memory_order_acquire) & kCountMask) != 0; ++spin) {
    if (spin < kWaitSteps) {
      spin_step();
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
    for (int spin = 0; (s >> 32) == seen && spin < kSpinSteps; ++spin) {
      spin_step();
      s = state_.load(std::memory_order_acquire);
    }
    if ((s >> 32) == seen) {
      std::unique_lock<std::mutex> lock(mutex_);
      sleepers_.fetch_add(1, std::memory_order_seq_cst);
      wake_.wait(lock, [&] { return (state_.load(std::memory_order_seq_cst) >> 32) != seen; });
      sleepers_.fetch_sub(1, std::memory_order_relaxed);
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
