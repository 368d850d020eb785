// GET /metrics: the Prometheus text exposition format (version 0.0.4).
//
// Names are radixchat_* (plus process_resident_memory_bytes); times are in
// seconds, as Prometheus expects. Engine figures come from
// Engine::stats(), which the engine thread publishes after every step, so
// a request's tokens show up a moment after its response was sent; the
// rest come from the server's own counters.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "event-hub.h"
#include "generation.h"
#include "radixchat/engine.h"

namespace rc::server {

struct MetricsInput {
  EngineStats engine;
  ModelInfo model;
  std::string version;
  std::map<std::pair<std::string, int>, uint64_t> http;  // (route, status) -> responses
  GenerationTracker::Counts generations;
  EventHubStats events;
  int64_t streams_open = 0;
  int64_t resident_bytes = 0;
};

std::string render_metrics(const MetricsInput& in);

// This process's resident set size from /proc/self/statm; 0 when unknown.
int64_t resident_memory_bytes();

// "text/plain; version=0.0.4; charset=utf-8"
extern const char* const kMetricsContentType;

}  // namespace rc::server
