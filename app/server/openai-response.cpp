#include "openai-response.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <random>

namespace rc::server {

using nlohmann::json;

namespace {

// 24 hex digits: a per-process random prefix and a counter, so ids are
// unique without a lock and do not leak how many requests came before.
std::string unique_suffix() {
  static const uint64_t prefix = (uint64_t(std::random_device{}()) << 32) ^ std::random_device{}();
  static std::atomic<uint64_t> counter{0};
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%016llx%08llx", static_cast<unsigned long long>(prefix),
                static_cast<unsigned long long>(counter.fetch_add(1) & 0xffffffffULL));
  return buf;
}

json base(const ResponseMeta& meta, bool chunk) {
  const bool chat = meta.endpoint == Endpoint::chat;
  json j = {
      {"id", meta.id},
      {"object", chat ? (chunk ? "chat.completion.chunk" : "chat.completion") : "text_completion"},
      {"created", meta.created},
      {"model", meta.model},
      {"system_fingerprint", meta.fingerprint}};
  if (chunk && meta.include_usage) j["usage"] = nullptr;
  return j;
}

json choice(const ResponseMeta& meta, const std::string& text, const json& finish_reason,
            bool chunk) {
  json c = {{"index", 0}};
  if (meta.endpoint == Endpoint::chat) {
    if (chunk) {
      c["delta"] = text.empty() ? json::object() : json{{"content", text}};
    } else {
      c["message"] = {{"role", "assistant"}, {"content", text}, {"refusal", nullptr}};
    }
  } else {
    c["text"] = text;
  }
  c["logprobs"] = nullptr;
  c["finish_reason"] = finish_reason;
  return c;
}

}  // namespace

ResponseMeta new_response_meta(Endpoint endpoint, std::string model, std::string fingerprint,
                               bool include_usage) {
  ResponseMeta m;
  m.endpoint = endpoint;
  m.id = (endpoint == Endpoint::chat ? "chatcmpl-" : "cmpl-") + unique_suffix();
  m.created = std::chrono::duration_cast<std::chrono::seconds>(
                  std::chrono::system_clock::now().time_since_epoch())
                  .count();
  m.model = std::move(model);
  m.fingerprint = std::move(fingerprint);
  m.include_usage = include_usage;
  return m;
}

const char* openai_finish_reason(FinishReason reason) {
  return reason == FinishReason::length ? "length" : "stop";
}

json usage_json(const ResponseMeta& meta, const RequestMetrics& m) {
  return {{"prompt_tokens", m.prompt_tokens},
          {"completion_tokens", m.output_tokens},
          {"total_tokens", m.prompt_tokens + m.output_tokens},
          {"prompt_tokens_details",
           {{"cached_tokens", m.cached_tokens},
            {"tier_loaded_tokens", m.loaded_tokens},
            {"document_tokens", meta.document_tokens}}}};
}

json full_response(const ResponseMeta& meta, const std::string& text, FinishReason reason,
                   const RequestMetrics& metrics) {
  json j = base(meta, /*chunk=*/false);
  j["choices"] = json::array({choice(meta, text, openai_finish_reason(reason), false)});
  j["usage"] = usage_json(meta, metrics);
  return j;
}

std::string first_chunk(const ResponseMeta& meta) {
  if (meta.endpoint != Endpoint::chat) return {};
  json j = base(meta, true);
  json c = choice(meta, "", nullptr, true);
  c["delta"] = {{"role", "assistant"}, {"content", ""}};
  j["choices"] = json::array({c});
  return sse_data(j);
}

std::string delta_chunk(const ResponseMeta& meta, const std::string& text) {
  json j = base(meta, true);
  j["choices"] = json::array({choice(meta, text, nullptr, true)});
  return sse_data(j);
}

std::string finish_chunk(const ResponseMeta& meta, FinishReason reason) {
  json j = base(meta, true);
  j["choices"] = json::array({choice(meta, "", openai_finish_reason(reason), true)});
  return sse_data(j);
}

std::string usage_chunk(const ResponseMeta& meta, const RequestMetrics& metrics) {
  json j = base(meta, true);
  j["choices"] = json::array();
  j["usage"] = usage_json(meta, metrics);
  return sse_data(j);
}

std::string error_chunk(const std::string& message, const std::string& type) {
  return sse_data(
      {{"error", {{"message", message}, {"type", type}, {"param", nullptr}, {"code", nullptr}}}});
}

std::string dump_json(const json& j) {
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string sse_data(const json& j) { return "data: " + dump_json(j) + "\n\n"; }

}  // namespace rc::server
