// The cache side of the event stream, shared by every policy: numbers each
// mutation's CacheEvent, batches the events of one public call and hands
// the batch to the thread-safe CacheEventQueue at the end of that call.
// Engine thread only (the queue is what other threads drain).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "radixchat/cache-events.h"

namespace rc {

// The event a lock/unlock (lock) or pin/unpin (!lock) by delta (+1/-1) emits.
inline CacheEventKind ref_event_kind(bool lock, int delta) {
  if (lock) return delta > 0 ? CacheEventKind::lock : CacheEventKind::unlock;
  return delta > 0 ? CacheEventKind::pin : CacheEventKind::unpin;
}

class EventSink {
 public:
  EventSink(bool enabled, size_t capacity) : enabled_(enabled), queue_(capacity) {}

  // Appends the next event and returns it so the caller can attach spans
  // (inserts); nullptr when events are off (then no seq is consumed).
  CacheEvent* add(CacheEventKind kind, NodeId node, NodeId parent, NodeId other, size_t tokens,
                  size_t pages, uint64_t tick) {
    if (!enabled_) return nullptr;
    CacheEvent& e = pending_.emplace_back();
    e.seq = next_seq_++;
    e.kind = kind;
    e.node = node;
    e.parent = parent;
    e.other = other;
    e.token_count = uint32_t(tokens);
    e.page_count = uint32_t(pages);
    e.tick = tick;
    return &e;
  }
  // Publishes the events added since the last flush.
  void flush() {
    if (!pending_.empty()) queue_.push_batch(pending_);
  }
  uint64_t next_seq() const { return next_seq_; }
  CacheEventQueue& queue() { return queue_; }

 private:
  bool enabled_;
  uint64_t next_seq_ = 0;
  std::vector<CacheEvent> pending_;
  CacheEventQueue queue_;
};

}  // namespace rc
