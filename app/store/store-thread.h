// StoreThread: a Store living on its own std::thread, fed by a FIFO task queue,
// so the GUI thread never waits on disk (docs/architecture.md section 16). Qt-free: the UI
// posts a task and, inside it, marshals results back itself (for example with
// QMetaObject::invokeMethod(receiver, lambda, Qt::QueuedConnection)).
//
// Thread contract:
//   - post(), submit(), wait_idle() and shutdown() may be called from any
//     thread except the store thread itself (from inside a task they would
//     deadlock; post() from a task is allowed and queues behind the current one).
//   - Tasks run one at a time, in the order they were posted (a total order
//     across posting threads: the order the queue lock was taken), on the
//     store thread, which is the only thread that touches the Store.
//   - A task must not throw; if one does, the exception is caught, reported on
//     stderr, and the next task runs (the Store is still consistent: each write
//     is its own transaction).
//   - shutdown() (and the destructor) stops accepting new tasks, runs every
//     task already queued (so queued writes are not lost), closes the Store on
//     the store thread, and joins. Idempotent.
#pragma once

#include <condition_variable>
#include <deque>
#include <filesystem>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <thread>
#include <type_traits>
#include <utility>

#include "store/store.h"

namespace rc::store {

class StoreThread {
 public:
  using Task = std::function<void(Store&)>;

  // Takes ownership of an opened store and starts the thread.
  explicit StoreThread(std::unique_ptr<Store> store);
  // Store::open(path) on the calling thread, then starts the thread. Open
  // failures are Store::open's.
  static Result<std::unique_ptr<StoreThread>> open(const std::filesystem::path& path);

  ~StoreThread();  // shutdown()
  StoreThread(const StoreThread&) = delete;
  StoreThread& operator=(const StoreThread&) = delete;

  // Queues `task`. false (task dropped, never run) after shutdown() began.
  bool post(Task task);

  // post() with a future for the task's return value; for callers that may
  // block (CLI, tests). After shutdown the future holds a broken_promise error.
  template <typename F>
  auto submit(F&& f) -> std::future<std::invoke_result_t<F&, Store&>> {
    using R = std::invoke_result_t<F&, Store&>;
    auto task = std::make_shared<std::packaged_task<R(Store&)>>(std::forward<F>(f));
    auto future = task->get_future();
    post([task](Store& s) { (*task)(s); });
    return future;
  }

  // Blocks until every task posted before this call has run.
  void wait_idle();

  // See the thread contract above. Calling it from the store thread aborts.
  void shutdown();

 private:
  void run();

  std::unique_ptr<Store> store_;
  std::mutex mu_;
  std::condition_variable cv_;       // queue non-empty or stopping
  std::condition_variable idle_cv_;  // a task finished
  std::deque<Task> queue_;
  bool stopping_ = false;
  bool busy_ = false;
  std::thread thread_;
};

}  // namespace rc::store
