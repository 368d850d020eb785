#include "connection-queue.h"

namespace rc::server {

namespace {
thread_local bool t_overflow = false;
thread_local ConnectionQueue* t_queue = nullptr;
}  // namespace

ConnectionQueue::ConnectionQueue(int workers, int max_waiting, int overflow_workers)
    : max_waiting_(static_cast<size_t>(std::max(max_waiting, 0))),
      busy_idle_(std::max(workers / 8, 1)) {
  for (int i = 0; i < std::max(workers, 1); ++i) {
    main_.threads.emplace_back([this] { work(main_, false); });
  }
  for (int i = 0; i < std::max(overflow_workers, 1); ++i) {
    overflow_.threads.emplace_back([this] { work(overflow_, true); });
  }
}

ConnectionQueue::~ConnectionQueue() { shutdown(); }

bool ConnectionQueue::serving_overflow() { return t_overflow; }

bool ConnectionQueue::pool_busy() { return t_queue && t_queue->busy(); }

bool ConnectionQueue::busy() {
  std::lock_guard<std::mutex> lock(mu_);
  return !main_.jobs.empty() || main_.idle < busy_idle_;
}

void ConnectionQueue::enqueue(std::function<void()> fn) {
  Lane* lane = &main_;
  {
    std::lock_guard<std::mutex> lock(mu_);
    // Idle workers take the waiting jobs first; beyond them, at most
    // max_waiting_ connections wait for a worker to free up.
    if (main_.jobs.size() >= static_cast<size_t>(main_.idle) + max_waiting_) {
      lane = &overflow_;
    }
    lane->jobs.push_back(std::move(fn));
  }
  lane->cv.notify_one();
}

void ConnectionQueue::work(Lane& lane, bool overflow) {
  t_overflow = overflow;
  t_queue = this;
  for (;;) {
    std::function<void()> fn;
    {
      std::unique_lock<std::mutex> lock(mu_);
      ++lane.idle;
      lane.cv.wait(lock, [&] { return !lane.jobs.empty() || shutdown_; });
      --lane.idle;
      if (lane.jobs.empty()) return;  // shutting down with nothing left
      fn = std::move(lane.jobs.front());
      lane.jobs.pop_front();
    }
    fn();
  }
}

void ConnectionQueue::shutdown() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (shutdown_ && main_.threads.empty()) return;
    shutdown_ = true;
  }
  main_.cv.notify_all();
  overflow_.cv.notify_all();
  for (Lane* lane : {&main_, &overflow_}) {
    for (std::thread& t : lane->threads) t.join();
    lane->threads.clear();
  }
}

}  // namespace rc::server
