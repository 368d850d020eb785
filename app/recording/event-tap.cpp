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
  // The first snapshot before the constructor returns: a caller that starts
  // requests right after it must not have their events land before it
  // (they would be folded into the snapshot, their match events lost).
  CacheSnapshot first = source_.snapshot();
  const uint64_t next_expected = first.next_seq;
  recorder_.snapshot(std::move(first));
  thread_ = std::thread([this, next_expected] { run(next_expected); });
}

EventTap::~EventTap() { stop(); }

void EventTap::stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

void EventTap::run(uint64_t next_expected) {  // after the events delivered so far
  using Clock = std::chrono::steady_clock;
  auto last_snapshot = Clock::now();
  for (bool last_pass = false; !last_pass;) {
    last_pass = stop_.load();
    std::vector<CacheEvent> batch;
    bool lost = false;
    const bool open = source_.next(batch, &lost, std::chrono::milliseconds(last_pass ? 0 : 50));
    if (lost) {
      recorder_.events({}, true);
      CacheSnapshot snap = source_.snapshot();
      next_expected = snap.next_seq;
      recorder_.snapshot(std::move(snap));
      last_snapshot = Clock::now();
      continue;
    }
    if (!batch.empty()) next_expected = batch.back().seq + 1;
    recorder_.events(std::move(batch));
    if (recorder_.stopped()) break;
    if (!open) {  // the source closed (server shutdown): a last checkpoint
      CacheSnapshot last = source_.checkpoint ? source_.checkpoint() : source_.snapshot();
      // Events it reflects that were never delivered are a gap, not a hole.
      if (last.next_seq != next_expected)
        recorder_.events({}, true, "the event source closed before delivering these");
      recorder_.snapshot(std::move(last));
      break;
    }
    if (recorder_.wants_snapshot()) {
      CacheSnapshot snap = source_.snapshot();
      next_expected = snap.next_seq;
      recorder_.snapshot(std::move(snap));
      last_snapshot = Clock::now();
    } else if (last_pass || Clock::now() - last_snapshot >= period_) {
      recorder_.snapshot(source_.checkpoint ? source_.checkpoint() : source_.snapshot());
      last_snapshot = Clock::now();
    }
  }
}

}  // namespace rc::recording
