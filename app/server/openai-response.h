// OpenAI response bodies and stream chunks, for both endpoints:
// chat.completion / chat.completion.chunk and text_completion.
//
// Streaming follows OpenAI exactly, because client libraries parse it
// strictly: chat streams open with a chunk whose delta carries the role,
// content deltas follow, the last content-bearing chunk is followed by one
// with an empty delta and the finish_reason, then (with
// stream_options.include_usage) a chunk with empty choices and the usage,
// then "data: [DONE]". With include_usage every other chunk has
// "usage": null, as OpenAI sends it.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "openai-request.h"
#include "radixchat/engine.h"

namespace rc::server {

// What every body and chunk of one response repeats.
struct ResponseMeta {
  Endpoint endpoint = Endpoint::chat;
  std::string id;  // chatcmpl-... or cmpl-...
  int64_t created = 0;
  std::string model;
  std::string fingerprint;
  bool include_usage = false;
  int document_tokens = 0;  // usage.prompt_tokens_details (document-routes.h)
};

// A fresh id and the current time for a response on `endpoint`.
ResponseMeta new_response_meta(Endpoint endpoint, std::string model, std::string fingerprint,
                               bool include_usage);

// OpenAI's finish_reason for ours ("stop" or "length"); cancelled and error
// never reach a client as a finish reason.
const char* openai_finish_reason(FinishReason reason);

// {"prompt_tokens", "completion_tokens", "total_tokens",
//  "prompt_tokens_details": {"cached_tokens", "tier_loaded_tokens",
//  "document_tokens"}}
nlohmann::json usage_json(const ResponseMeta& meta, const RequestMetrics& metrics);

// The whole non-streaming response.
nlohmann::json full_response(const ResponseMeta& meta, const std::string& text, FinishReason reason,
                             const RequestMetrics& metrics);

// Stream chunks. first_chunk is empty for completions (they have no role).
std::string first_chunk(const ResponseMeta& meta);
std::string delta_chunk(const ResponseMeta& meta, const std::string& text);
std::string finish_chunk(const ResponseMeta& meta, FinishReason reason);
std::string usage_chunk(const ResponseMeta& meta, const RequestMetrics& metrics);
// An error after the stream started (OpenAI sends {"error": {...}} as data).
std::string error_chunk(const std::string& message, const std::string& type);
inline constexpr const char* kDoneChunk = "data: [DONE]\n\n";

// JSON text that never throws: invalid UTF-8 (a model can emit it) is
// replaced with U+FFFD instead of aborting the response.
std::string dump_json(const nlohmann::json& j);
// One server-sent event: "data: <json>\n\n".
std::string sse_data(const nlohmann::json& j);

}  // namespace rc::server
