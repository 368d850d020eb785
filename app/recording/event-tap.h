// Feeds a Recorder from a cache event source on a thread of its own: a
// snapshot first, then every batch of events, a fresh snapshot whenever the
// source or the recorder lost events, and an engine snapshot every
// `snapshot_period` as a checkpoint that tests compare replay against.
//
// The source is two functions so the same tap serves a bare Engine (bench:
// Engine::drain_events, nothing else drains) and the server's EventHub
// (serve: a subscription, since the hub is the engine queue's one reader).
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "radixchat/engine.h"
#include "recording/recorder.h"

namespace rc::recording {

struct EventSource {
  // A consistent tree whose next_seq says which events it reflects, taken
  // so that no later event is lost (first attach, and after lost events).
  std::function<CacheSnapshot()> snapshot;
  // A tree for a periodic checkpoint that must not disturb the event flow
  // (events older than it may still be delivered). Unset: snapshot.
  std::function<CacheSnapshot()> checkpoint;
  // Waits up to `timeout` for events; appends them to `out`. Sets *lost
  // when events were lost (the tap then takes a snapshot). Returns false
  // when the source closed for good.
  std::function<bool(std::vector<CacheEvent>& out, bool* lost, std::chrono::milliseconds timeout)>
      next;
};

// Engine::drain_events polled every `poll`. Only for callers where nothing
// else drains the engine's queue.
EventSource engine_source(Engine& engine,
                          std::chrono::milliseconds poll = std::chrono::milliseconds(20));

class EventTap {
 public:
  // Takes and records the first snapshot before returning, then starts the
  // thread.
  EventTap(Recorder& recorder, EventSource source,
           std::chrono::milliseconds snapshot_period = std::chrono::milliseconds(2000));
  ~EventTap();  // stop()
  // Drains what the source still has (one last pass), takes a final
  // snapshot and joins the thread. Idempotent.
  void stop();

 private:
  void run(uint64_t next_expected);
  Recorder& recorder_;
  EventSource source_;
  const std::chrono::milliseconds period_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace rc::recording
