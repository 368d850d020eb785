#include "connection-queue.h"

namespace rc::server {

namespace {
thread_local bool t_overflow = false;
thread_local ConnectionQueue* t_queue = nullptr;
}  // namespace

ConnectionQueue::ConnectionQueue(QueueOptions options, Serve serve)
    : max_waiting_(static_cast<size_t>(std::max(options.max_waiting, 0))),
      busy_idle_(std::max(options.workers / 8, 1)),
      serve_(std::move(serve)),
      reception_(options.reception,
                 [this](Connection c, server::Lane lane) { dispatch(std::move(c), lane); }) {
  for (int i = 0; i < std::max(options.workers, 1); ++i) {
    main_.threads.emplace_back([this] { work(main_, false); });
  }
  for (int i = 0; i < std::max(options.overflow_workers, 1); ++i) {
    overflow_.threads.emplace_back([this] { work(overflow_, true); });
  }
  for (int i = 0; i < std::max(options.health_workers, 1); ++i) {
    health_.threads.emplace_back([this] { work(health_, false); });
  }
}

ConnectionQueue::~ConnectionQueue() { shutdown(); }

bool ConnectionQueue::serving_overflow() { return t_overflow; }

bool ConnectionQueue::pool_busy() { return t_queue && t_queue->busy(); }

bool ConnectionQueue::busy() {
  std::lock_guard<std::mutex> lock(mu_);
  return !main_.jobs.empty() || main_.idle < busy_idle_;
}

void ConnectionQueue::enqueue(std::function<void()> fn) { fn(); }

void ConnectionQueue::dispatch(Connection conn, server::Lane which) {
  auto job = [this, c = std::move(conn)]() mutable {
    if (serve_(c)) {
      reception_.resume(std::move(c));
    } else {
      reception_.close(std::move(c));
    }
  };
  Lane* lane = which == server::Lane::health     ? &health_
               : which == server::Lane::overflow ? &overflow_
                                                 : &main_;
  {
    std::lock_guard<std::mutex> lock(mu_);
    // Idle workers take the waiting jobs first; beyond them, at most
    // max_waiting_ requests wait for a worker to free up.
    if (lane == &main_ && main_.jobs.size() >= static_cast<size_t>(main_.idle) + max_waiting_) {
      lane = &overflow_;
    }
    lane->jobs.push_back(std::move(job));
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
  reception_.stop();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (shutdown_ && main_.threads.empty()) return;
    shutdown_ = true;
  }
  for (Lane* lane : {&main_, &overflow_, &health_}) lane->cv.notify_all();
  for (Lane* lane : {&main_, &overflow_, &health_}) {
    for (std::thread& t : lane->threads) t.join();
    lane->threads.clear();
  }
}

}  // namespace rc::server
