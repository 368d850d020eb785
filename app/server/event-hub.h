// Fan-out of the engine's cache events to any number of viewers
// (/v1/cache/events).
//
// The engine has one bounded event queue (Engine::drain_events). One reader
// thread here drains it and copies each batch into every subscriber's own
// bounded buffer. Nothing a viewer does can block the engine: a subscriber
// that falls behind (its buffer full) loses its buffer and is told to
// resync, that is, to start again from a fresh snapshot; so does everyone
// when the engine's own queue overflowed.
//
// Attaching without a gap (the replay contract of cache-events.h):
//   sub = hub.subscribe()          // buffering starts
//   sub->begin_snapshot()          // clears the buffer and the resync flag
//   snap = engine.cache_snapshot()
//   sub->set_floor(snap.next_seq)  // events the snapshot reflects are dropped
// Every event with seq >= snap.next_seq is pushed by the engine after the
// snapshot, hence drained after the subscription started, so none is lost.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "radixchat/engine.h"

namespace rc::server {

struct EventHubOptions {
  size_t subscriber_capacity = 4096;  // events buffered per viewer
  int max_subscribers = 16;           // each holds one HTTP worker thread
  std::chrono::milliseconds poll{20};
};

struct EventHubStats {
  uint64_t subscribers = 0;
  uint64_t events = 0;            // drained from the engine
  uint64_t resyncs = 0;           // subscribers told to resync (slow)
  uint64_t engine_overflows = 0;  // the engine's queue lost events
};

class EventSubscription {
 public:
  enum class Wake { events, resync, closed, timeout };

  explicit EventSubscription(size_t capacity) : capacity_(capacity) {}

  // HTTP thread. Waits up to `timeout`; on `events`, appends them (seq >=
  // floor, in order) to `out`. `resync` means events were lost: take a new
  // snapshot. `closed`: the server is shutting down (events buffered
  // before the close come first, on the calls before).
  Wake wait(std::vector<CacheEvent>& out, std::chrono::milliseconds timeout);
  void begin_snapshot();
  void set_floor(uint64_t next_seq);

 private:
  friend class EventHub;
  // Reader thread. False when the buffer overflowed (resync raised).
  bool offer(const std::vector<CacheEvent>& batch);
  void raise_resync();
  void close();

  const size_t capacity_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<CacheEvent> buf_;
  uint64_t floor_ = 0;
  bool resync_ = false;
  bool closed_ = false;
};

class EventHub {
 public:
  // Starts the reader thread.
  EventHub(Engine& engine, EventHubOptions options);
  ~EventHub();
  EventHub(const EventHub&) = delete;
  EventHub& operator=(const EventHub&) = delete;

  // nullptr when max_subscribers are attached or the hub is closed.
  std::shared_ptr<EventSubscription> subscribe();
  void unsubscribe(const std::shared_ptr<EventSubscription>& sub);
  // Stops the reader after a last pass over the engine's queue (events
  // made before the close still reach the subscribers, ahead of `closed`),
  // then wakes every subscriber with `closed`. Idempotent; not from the
  // reader thread.
  void close();
  EventHubStats stats() const;

 private:
  void run();

  Engine& engine_;
  const EventHubOptions options_;
  mutable std::mutex mu_;
  std::condition_variable stop_cv_;
  std::vector<std::shared_ptr<EventSubscription>> subs_;
  bool closed_ = false;
  std::atomic<uint64_t> events_{0}, resyncs_{0}, overflows_{0};
  std::thread thread_;
};

}  // namespace rc::server
