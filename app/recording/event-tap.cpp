#include "recording/event-tap.h"

namespace rc::recording {

EventSource engine_source(Engine& engine, std::chrono::milliseconds poll) {
  EventSource s;
  s.snapshot = [&engine] { return engine.cache_snapshot(); };
  s.next = [&engine, poll](std::vector<CacheEvent>& out, bool* lost,
                           std::chrono::milliseconds timeout) {
    std::this_thread::sleep_for(std::min(poll, timeout));
    bool overflowed = false;
    std::vector<CacheEvent> batch = engine.drain_events(&overflowed);
    if (overflowed) *lost = true;
    out.insert(out.end(), std::make_move_iterator(batch.begin()),
               std::make_move_iterator(batch.end()));
    return true;
  };
  return s;
}

EventTap::EventTap(Recorder& recorder, EventSource source, std::chrono::milliseconds period)
    : recorder_(recorder), source_(std::move(source)), period_(period) {
  thread_ = std::thread([this] { run(); });
}

EventTap::~EventTap() { stop(); }

void EventTap::stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

void EventTap::run() {
  using Clock = std::chrono::steady_clock;
  recorder_.snapshot(source_.snapshot());
  auto last_snapshot = Clock::now();
  for (bool last_pass = false; !last_pass;) {
    last_pass = stop_.load();
    std::vector<CacheEvent> batch;
    bool lost = false;
    const bool open = source_.next(batch, &lost, std::chrono::milliseconds(last_pass ? 0 : 50));
    if (lost) {
      recorder_.events({}, true);
      recorder_.snapshot(source_.snapshot());
      last_snapshot = Clock::now();
      continue;
    }
    recorder_.events(std::move(batch));
    if (!open || recorder_.stopped()) break;
    if (recorder_.wants_snapshot() || last_pass || Clock::now() - last_snapshot >= period_) {
      recorder_.snapshot(source_.snapshot());
      last_snapshot = Clock::now();
    }
  }
}

}  // namespace rc::recording
