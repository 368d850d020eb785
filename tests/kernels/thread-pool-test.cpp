#include "cpu/thread-pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace rc::kernels {
namespace {

TEST(ThreadPool, EveryIndexExactlyOnce) {
  for (int threads : {1, 2, 4}) {
    ThreadPool pool(threads);
    EXPECT_EQ(pool.size(), threads);
    for (int64_t count : {0, 1, 5, 64, 1001}) {
      for (int64_t grain : {1, 7, 2000}) {
        std::vector<std::atomic<int>> hits(static_cast<size_t>(count));
        std::atomic<bool> bad_thread{false};
        pool.parallel_for(count, grain, [&](int64_t b, int64_t e, int t) {
          if (t < 0 || t >= threads || e - b > grain) bad_thread = true;
          for (int64_t i = b; i < e; ++i) hits[size_t(i)].fetch_add(1);
        });
        EXPECT_FALSE(bad_thread);
        for (int64_t i = 0; i < count; ++i) ASSERT_EQ(hits[size_t(i)].load(), 1) << i;
      }
    }
  }
}

TEST(ThreadPool, RegionsCoverEveryIndexExactlyOnce) {
  for (int threads : {1, 2, 3, 4}) {
    ThreadPool pool(threads);
    for (int64_t count : {0, 1, 5, 64, 1001}) {
      for (int64_t grain : {1, 7, 2000}) {
        std::vector<std::atomic<int>> hits(static_cast<size_t>(count));
        std::atomic<bool> bad_range{false};
        pool.parallel_for_regions(count, grain, [&](int64_t b, int64_t e, int t) {
          if (t < 0 || t >= threads || b >= e || e - b > grain || b % grain != 0) bad_range = true;
          for (int64_t i = b; i < e; ++i) hits[size_t(i)].fetch_add(1);
        });
        EXPECT_FALSE(bad_range);
        for (int64_t i = 0; i < count; ++i) ASSERT_EQ(hits[size_t(i)].load(), 1) << i;
      }
    }
  }
}

// Each thread walks its own region forward from its start, grain after
// grain, then takes grains from the back of the other region, in
// decreasing order. Regions of 64 indices in grains of 4: [0, 32), [32, 64).
TEST(ThreadPool, RegionsRunForwardFromEachThreadsOwnStart) {
  ThreadPool pool(2);
  for (int job = 0; job < 200; ++job) {
    std::vector<int64_t> seen[2];  // each appended to by its own thread only
    pool.parallel_for_regions(64, 4, [&](int64_t b, int64_t, int t) { seen[t].push_back(b); });
    ASSERT_EQ(seen[0].size() + seen[1].size(), 16u);
    for (int t = 0; t < 2; ++t) {
      const std::vector<int64_t>& s = seen[t];
      const int64_t own = 32 * t;
      size_t i = 0;
      for (; i < s.size() && s[i] >= own && s[i] < own + 32; ++i) {
        ASSERT_EQ(s[i], own + 4 * int64_t(i)) << "thread " << t << " grain " << i;
      }
      for (size_t j = i; j < s.size(); ++j) {
        ASSERT_TRUE(s[j] < own || s[j] >= own + 32) << "thread " << t;
        if (j > i) ASSERT_EQ(s[j], s[j - 1] - 4) << "thread " << t;
      }
      if (i < s.size()) ASSERT_EQ(s[i] % 32, 28) << "a steal starts at the region's back";
    }
  }
}

// A worker stuck in its first grain holds up only that grain: the caller
// takes the rest of the worker's region (the worker waits until it has,
// or gives up after 20 s, which fails the test).
TEST(ThreadPool, RegionsOfAStalledThreadAreTakenByTheOthers) {
  ThreadPool pool(2);
  std::atomic<int> worker_grains{0}, caller_grains{0};
  std::atomic<bool> timed_out{false};
  pool.parallel_for_regions(100, 1, [&](int64_t, int64_t, int t) {
    if (t == 0) {
      caller_grains.fetch_add(1);
      return;
    }
    worker_grains.fetch_add(1);
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (caller_grains.load() < 99 && !timed_out) {
      if (std::chrono::steady_clock::now() > give_up) timed_out = true;
      std::this_thread::yield();
    }
  });
  EXPECT_FALSE(timed_out);
  EXPECT_EQ(caller_grains.load() + worker_grains.load(), 100);
  EXPECT_LE(worker_grains.load(), 1);
}

// Jobs of two ranges whose first (the caller's) waits for the second to
// have run on a worker, after pauses from none to well past the workers'
// spin (then they sleep): every job must reach a worker, whether it was
// spinning, falling asleep or asleep. A lost wake-up leaves the caller
// waiting until it gives up after 10 s, which fails the test.
TEST(ThreadPool, WorkersWakeForEveryJobAfterAnyPause) {
  ThreadPool pool(2);
  const std::chrono::microseconds pauses[] = {
      std::chrono::microseconds(0), std::chrono::microseconds(20), std::chrono::microseconds(60),
      std::chrono::microseconds(150), std::chrono::microseconds(2000)};
  for (int job = 0; job < 400; ++job) {
    std::this_thread::sleep_for(pauses[job % 5]);
    std::atomic<bool> worker_ran{false}, timed_out{false};
    pool.parallel_for(2, 1, [&](int64_t b, int64_t, int t) {
      if (t != 0) {
        worker_ran = true;
        return;
      }
      if (b != 0) return;
      const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      while (!worker_ran && !timed_out) {
        if (std::chrono::steady_clock::now() > give_up) timed_out = true;
      }
    });
    ASSERT_FALSE(timed_out) << "job " << job << " never reached the worker";
    ASSERT_TRUE(worker_ran);
  }
}

TEST(ThreadPool, ManyBackToBackJobs) {
  ThreadPool pool(3);
  std::atomic<int64_t> sum{0};
  for (int job = 0; job < 20000; ++job) {
    pool.parallel_for(8, 1, [&](int64_t b, int64_t e, int) { sum.fetch_add(e - b); });
  }
  EXPECT_EQ(sum.load(), 8 * 20000);
}

}  // namespace
}  // namespace rc::kernels
