// State the route handlers share (internal to rc_server). One per Server;
// every member is safe to use from any HTTP worker thread.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "event-hub.h"
#include "generation.h"
#include "server.h"

namespace rc::server {

// Responses by route and status code, for /metrics.
class HttpCounters {
 public:
  using Key = std::pair<std::string, int>;
  void count(std::string route, int status) {
    std::lock_guard<std::mutex> lock(mu_);
    counts_[{std::move(route), status}]++;
  }
  std::map<Key, uint64_t> snapshot() const {
    std::lock_guard<std::mutex> lock(mu_);
    return counts_;
  }

 private:
  mutable std::mutex mu_;
  std::map<Key, uint64_t> counts_;
};

struct ServerContext {
  ServerContext(Engine& e, ServerOptions o)
      : engine(e),
        options(std::move(o)),
        generations(std::make_shared<GenerationTracker>()),
        hub(e, EventHubOptions{options.subscriber_buffer_events, options.max_event_subscribers}) {}

  Engine& engine;
  const ServerOptions options;
  std::shared_ptr<GenerationTracker> generations;
  EventHub hub;
  HttpCounters http;
  std::atomic<bool> draining{false};  // shutting down: refuse new generations
  std::atomic<int64_t> streams_open{0};

  // The names a request's "model" may use: the model's name or its file's
  // name (without .gguf); empty means "whatever is loaded".
  bool serves_model(const std::string& name) const;
  std::string fingerprint() const;
};

}  // namespace rc::server
