#include "cpu/thread-pool.h"

#include <gtest/gtest.h>

#include <atomic>
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
