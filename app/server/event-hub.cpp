#include "event-hub.h"

#include <algorithm>

namespace rc::server {

EventSubscription::Wake EventSubscription::wait(std::vector<CacheEvent>& out,
                                                std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait_for(lock, timeout, [&] { return closed_ || resync_ || !buf_.empty(); });
  if (resync_) return closed_ ? Wake::closed : Wake::resync;
  // Events buffered before the close are delivered first (a recording's
  // last match events); `closed` follows on the next call.
  if (closed_ && buf_.empty()) return Wake::closed;
  if (buf_.empty()) return Wake::timeout;
  const size_t before = out.size();
  for (CacheEvent& e : buf_) {
    if (e.seq >= floor_) out.push_back(std::move(e));
  }
  buf_.clear();
  return out.size() > before ? Wake::events : Wake::timeout;
}

void EventSubscription::begin_snapshot() {
  std::lock_guard<std::mutex> lock(mu_);
  buf_.clear();
  resync_ = false;
  floor_ = 0;
}

void EventSubscription::set_floor(uint64_t next_seq) {
  std::lock_guard<std::mutex> lock(mu_);
  floor_ = next_seq;
}

bool EventSubscription::offer(const std::vector<CacheEvent>& batch) {
  bool overflow = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closed_ || resync_) return true;  // a resync is pending: nothing to keep
    if (buf_.size() + batch.size() > capacity_) {
      buf_.clear();
      resync_ = overflow = true;
    } else {
      buf_.insert(buf_.end(), batch.begin(), batch.end());
    }
  }
  cv_.notify_one();
  return !overflow;
}

void EventSubscription::raise_resync() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    buf_.clear();
    resync_ = true;
  }
  cv_.notify_one();
}

void EventSubscription::close() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
  }
  cv_.notify_one();
}

EventHub::EventHub(Engine& engine, EventHubOptions options) : engine_(engine), options_(options) {
  thread_ = std::thread([this] { run(); });
}

EventHub::~EventHub() { close(); }

std::shared_ptr<EventSubscription> EventHub::subscribe() {
  std::lock_guard<std::mutex> lock(mu_);
  if (closed_ || static_cast<int>(subs_.size()) >= options_.max_subscribers) return nullptr;
  auto sub = std::make_shared<EventSubscription>(options_.subscriber_capacity);
  subs_.push_back(sub);
  return sub;
}

void EventHub::unsubscribe(const std::shared_ptr<EventSubscription>& sub) {
  std::lock_guard<std::mutex> lock(mu_);
  std::erase(subs_, sub);
}

void EventHub::close() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closed_) return;
    closed_ = true;
  }
  stop_cv_.notify_all();
  // The reader's last pass hands out what the engine queued before the
  // close; only then do the subscribers hear `closed`.
  if (thread_.joinable()) thread_.join();
  std::vector<std::shared_ptr<EventSubscription>> subs;
  {
    std::lock_guard<std::mutex> lock(mu_);
    subs = subs_;
  }
  for (auto& s : subs) s->close();
}

EventHubStats EventHub::stats() const {
  EventHubStats s;
  {
    std::lock_guard<std::mutex> lock(mu_);
    s.subscribers = subs_.size();
  }
  s.events = events_.load();
  s.resyncs = resyncs_.load();
  s.engine_overflows = overflows_.load();
  return s;
}

void EventHub::run() {
  std::vector<std::shared_ptr<EventSubscription>> subs;
  for (bool last = false; !last;) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      stop_cv_.wait_for(lock, options_.poll, [&] { return closed_; });
      last = closed_;
      subs = subs_;
    }
    // Drained even with no viewer attached, so the engine's queue never
    // overflows and a new viewer starts from a clean queue.
    bool overflowed = false;
    std::vector<CacheEvent> batch = engine_.drain_events(&overflowed);
    events_ += batch.size();
    if (overflowed) overflows_++;
    for (auto& s : subs) {
      if (overflowed) {
        s->raise_resync();
        resyncs_++;
      } else if (!batch.empty() && !s->offer(batch)) {
        resyncs_++;
      }
    }
  }
}

}  // namespace rc::server
