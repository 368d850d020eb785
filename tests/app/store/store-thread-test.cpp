// StoreThread: FIFO order across posting threads, results through submit(),
// shutdown drains queued writes, posting after shutdown is refused.
#include "store/store-thread.h"

#include <atomic>
#include <vector>

#include "store-test-util.h"

namespace rc::store {
namespace {
using testing::TempDir;

TEST(StoreThread, RunsTasksInOrderOnOneThread) {
  TempDir dir;
  auto t = StoreThread::open(dir / "t.db");
  ASSERT_OK(t);
  StoreThread& st = *t.value();
  std::vector<int> order;  // touched only by the store thread
  std::thread::id worker;
  std::atomic<bool> same_thread{true};
  for (int i = 0; i < 200; ++i) {
    ASSERT_TRUE(st.post([&, i](Store&) {
      if (i == 0) worker = std::this_thread::get_id();
      if (std::this_thread::get_id() != worker) same_thread = false;
      order.push_back(i);
    }));
  }
  st.wait_idle();
  ASSERT_EQ(order.size(), 200u);
  for (int i = 0; i < 200; ++i) EXPECT_EQ(order[i], i);
  EXPECT_TRUE(same_thread);
  EXPECT_NE(worker, std::this_thread::get_id());
}

TEST(StoreThread, SubmitReturnsResultsAndWritesAreOrdered) {
  TempDir dir;
  auto t = StoreThread::open(dir / "t.db");
  ASSERT_OK(t);
  StoreThread& st = *t.value();
  auto conv = st.submit([](Store& s) { return s.create_conversation({.title = "bg"}); }).get();
  ASSERT_OK(conv);
  const Id c = conv.value();
  // Several posting threads; each thread's own messages keep their order.
  std::vector<std::thread> posters;
  for (int p = 0; p < 4; ++p) {
    posters.emplace_back([&st, c, p] {
      for (int i = 0; i < 25; ++i) {
        st.post([c, p, i](Store& s) {
          (void)s.set_setting("p" + std::to_string(p), std::to_string(i));
          (void)s.append_message({.conversation_id = c, .content = std::to_string(p * 100 + i)});
        });
      }
    });
  }
  for (auto& th : posters) th.join();
  auto roots = st.submit([c](Store& s) { return s.children(c, std::nullopt); }).get();
  ASSERT_OK(roots);
  ASSERT_EQ(roots->size(), 100u);
  int last[4] = {-1, -1, -1, -1};
  for (const Message& m : roots.value()) {
    const int v = std::stoi(m.content);
    EXPECT_GT(v % 100, last[v / 100]);
    last[v / 100] = v % 100;
  }
  auto setting = st.submit([](Store& s) { return s.get_setting("p3"); }).get();
  ASSERT_OK(setting);
  EXPECT_EQ(setting.value(), "24");
}

TEST(StoreThread, ShutdownDrainsQueuedWrites) {
  TempDir dir;
  const auto path = dir / "t.db";
  Id conv = 0;
  {
    auto t = StoreThread::open(path);
    ASSERT_OK(t);
    StoreThread& st = *t.value();
    conv = st.submit([](Store& s) { return s.create_conversation({}).value(); }).get();
    // A slow first task so the rest are still queued when shutdown starts.
    st.post([](Store&) { std::this_thread::sleep_for(std::chrono::milliseconds(50)); });
    for (int i = 0; i < 50; ++i) {
      st.post([conv, i](Store& s) {
        (void)s.append_message({.conversation_id = conv, .content = std::to_string(i)});
      });
    }
    st.shutdown();
    EXPECT_FALSE(st.post([](Store&) {}));
    auto late = st.submit([](Store&) { return 1; });
    EXPECT_THROW(late.get(), std::future_error);  // dropped, never run
    st.shutdown();                                // idempotent
  }                                               // destructor after shutdown: no-op
  auto s = Store::open(path);
  ASSERT_OK(s);
  auto roots = s.value()->children(conv, std::nullopt);
  ASSERT_OK(roots);
  EXPECT_EQ(roots->size(), 50u);
}

TEST(StoreThread, ThrowingTaskDoesNotStopTheThread) {
  TempDir dir;
  auto t = StoreThread::open(dir / "t.db");
  ASSERT_OK(t);
  t.value()->post([](Store&) { throw std::runtime_error("boom"); });
  EXPECT_EQ(t.value()->submit([](Store&) { return 7; }).get(), 7);
}

TEST(StoreThread, TaskMayPostFollowUp) {
  TempDir dir;
  auto t = StoreThread::open(dir / "t.db");
  ASSERT_OK(t);
  StoreThread& st = *t.value();
  std::atomic<int> ran{0};
  st.post([&](Store&) {
    ++ran;
    st.post([&](Store&) { ++ran; });
  });
  st.wait_idle();
  EXPECT_EQ(ran.load(), 2);
}

TEST(StoreThread, OpenFailureIsReported) {
  TempDir dir;
  testing::write_bytes(dir / "junk.db", "definitely not sqlite, long enough header");
  auto t = StoreThread::open(dir / "junk.db");
  EXPECT_EQ(t.status().code(), StatusCode::corrupt_data);
}

}  // namespace
}  // namespace rc::store
