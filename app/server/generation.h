// The hand-off of one request's stream from the engine thread to the HTTP
// worker thread that answers the client, and the set of requests in flight
// (for graceful shutdown and /metrics).
//
// Threads: the engine calls the submit() callback on its own thread; that
// callback only appends to this object's queue and returns, so a slow or
// vanished client never stalls the engine. The HTTP worker waits on the
// queue. When the client goes away the worker calls abandon(): the engine
// is told to cancel, and the callback returns false from then on, so the
// request stops at its next token at the latest and its KV pages go back to
// the cache (its computed prefix stays cached, unlocked).
//
// Lifetime: a Generation is shared by the engine callback and the worker;
// whichever lets go last frees it. It keeps its tracker alive for the same
// reason.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_set>
#include <vector>

#include "radixchat/engine.h"
#include "request-observer.h"

namespace rc::server {

class Generation;

// Requests in flight, with per-outcome counts.
class GenerationTracker {
 public:
  struct Counts {
    uint64_t active = 0;
    uint64_t started = 0;
    uint64_t stopped = 0;    // finish_reason "stop"
    uint64_t length = 0;     // finish_reason "length"
    uint64_t cancelled = 0;  // client went away, or shutdown
    uint64_t errors = 0;
    uint64_t client_disconnects = 0;
  };

  Counts counts() const;
  // Blocks until no request is in flight or `deadline` passes. True when idle.
  bool wait_idle(std::chrono::steady_clock::time_point deadline);
  // Cancels every request in flight (shutdown after the grace period).
  void cancel_all(Engine& engine);
  void note_client_disconnect();
  // serve --record: told of every request started from now on.
  void set_observer(std::shared_ptr<RequestObserver> observer) { observer_ = std::move(observer); }

 private:
  friend class Generation;
  void add(Generation* g);
  void finished(Generation* g, FinishReason reason);

  std::shared_ptr<RequestObserver> observer_;  // set before serving starts
  mutable std::mutex mu_;
  std::condition_variable idle_;
  std::unordered_set<Generation*> active_;
  Counts counts_;
};

class Generation {
 public:
  // Submits `request` to the engine. On refusal (bad request, over the
  // context or the pool) returns the engine's Status and nothing is tracked.
  static Result<std::shared_ptr<Generation>> start(Engine& engine, GenerateRequest request,
                                                   std::shared_ptr<GenerationTracker> tracker);

  // HTTP thread. Moves the events that arrived into `out` (appending),
  // waiting up to `timeout` for the first. The last one has `finished`.
  void wait(std::vector<StreamEvent>& out, std::chrono::milliseconds timeout);
  // HTTP thread. The reader is gone: cancel in the engine, drop what comes.
  void abandon();
  bool finished() const;
  RequestId id() const { return id_.load(); }

 private:
  Generation(Engine& engine, std::shared_ptr<GenerationTracker> tracker)
      : engine_(engine), tracker_(std::move(tracker)) {}
  bool push(const StreamEvent& ev);  // engine thread

  Engine& engine_;
  std::shared_ptr<GenerationTracker> tracker_;
  std::atomic<RequestId> id_{0};
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<StreamEvent> queue_;
  bool finished_ = false;
  bool abandoned_ = false;
};

}  // namespace rc::server
