// Small helpers every route uses to write a response (internal).
#pragma once

#include <httplib.h>

#include <nlohmann/json.hpp>

#include "api-error.h"
#include "openai-response.h"

namespace rc::server {

inline void write_json(httplib::Response& res, const nlohmann::json& body, int status = 200) {
  res.status = status;
  res.set_content(dump_json(body), "application/json");
}

inline void write_error(httplib::Response& res, const ApiError& e) {
  res.status = e.http_status;
  res.set_content(e.body(), "application/json");
}

// SSE responses: no caching, no proxy buffering. The content type must be
// exactly "text/event-stream": httplib compresses any other text/* type,
// which would hold tokens back until the compressor flushes.
inline constexpr const char* kEventStream = "text/event-stream";
inline void set_sse_headers(httplib::Response& res) {
  res.set_header("Cache-Control", "no-cache");
  res.set_header("X-Accel-Buffering", "no");
}

}  // namespace rc::server
