#include "store/store-thread.h"

#include <cstdio>
#include <cstdlib>
#include <exception>

namespace rc::store {

StoreThread::StoreThread(std::unique_ptr<Store> store) : store_(std::move(store)) {
  thread_ = std::thread([this] { run(); });
}

Result<std::unique_ptr<StoreThread>> StoreThread::open(const std::filesystem::path& path) {
  auto store = Store::open(path);
  if (!store.ok()) return store.status();
  return std::make_unique<StoreThread>(std::move(store).value());
}

StoreThread::~StoreThread() { shutdown(); }

bool StoreThread::post(Task task) {
  {
    std::lock_guard lock(mu_);
    if (stopping_) return false;
    queue_.push_back(std::move(task));
  }
  cv_.notify_one();
  return true;
}

void StoreThread::wait_idle() {
  std::unique_lock lock(mu_);
  idle_cv_.wait(lock, [this] { return queue_.empty() && !busy_; });
}

void StoreThread::shutdown() {
  if (thread_.get_id() == std::this_thread::get_id()) {
    std::fprintf(stderr, "%s:%d: StoreThread::shutdown() called from a store task\n", __FILE__,
                 __LINE__);
    std::abort();
  }
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void StoreThread::run() {
  std::unique_lock lock(mu_);
  for (;;) {
    cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    // Drain before honouring stop: queued writes are the user's data.
    if (queue_.empty()) break;
    Task task = std::move(queue_.front());
    queue_.pop_front();
    busy_ = true;
    lock.unlock();
    try {
      task(*store_);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "radixchat: a store task threw: %s\n", e.what());
    } catch (...) {
      std::fprintf(stderr, "radixchat: a store task threw a non-standard exception\n");
    }
    task = nullptr;  // destroy captures outside the lock, before reporting idle
    lock.lock();
    busy_ = false;
    if (queue_.empty()) idle_cv_.notify_all();
  }
  lock.unlock();
  idle_cv_.notify_all();
  store_.reset();  // close the connection on the thread that used it
}

}  // namespace rc::store
