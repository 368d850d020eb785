#include "openai-request.h"

#include <cmath>
#include <limits>
#include <optional>
#include <random>

#include <nlohmann/json.hpp>

#include "response-format.h"

namespace rc::server {

namespace {

using nlohmann::json;
using MaybeError = std::optional<ApiError>;

// Chat requests may generate up to the end of the context (the engine trims
// max_tokens to what is left), as OpenAI's chat endpoint does.
constexpr int64_t kUpToContext = 1 << 30;
constexpr int kLegacyCompletionMaxTokens = 16;
constexpr size_t kMaxStopSequences = 16;

const char* type_name(const json& v) {
  switch (v.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::boolean:
      return "a boolean";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
      return "an integer";
    case json::value_t::number_float:
      return "a number";
    case json::value_t::string:
      return "a string";
    case json::value_t::array:
      return "an array";
    case json::value_t::object:
      return "an object";
    default:
      return "an unsupported value";
  }
}

ApiError wrong_type(const std::string& field, const std::string& expected, const json& got) {
  return invalid_request("Invalid type for '" + field + "': expected " + expected + ", but got " +
                             type_name(got) + " instead.",
                         field, "invalid_type");
}

ApiError bad_value(const std::string& field, const std::string& why) {
  return invalid_request("Invalid value for '" + field + "': " + why, field, "invalid_value");
}

ApiError unsupported(const std::string& field, const std::string& why) {
  return invalid_request("'" + field + "' is not supported by this server: " + why, field,
                         "unsupported_parameter");
}

// The field's value, or nullptr when absent or null (OpenAI treats an
// explicit null as "use the default").
const json* field(const json& obj, const char* name) {
  auto it = obj.find(name);
  if (it == obj.end() || it->is_null()) return nullptr;
  return &*it;
}

MaybeError read_int(const json& obj, const char* name, int64_t lo, int64_t hi,
                    std::optional<int64_t>& out) {
  const json* v = field(obj, name);
  if (!v) return {};
  int64_t x = 0;
  if (v->is_number_unsigned()) {
    if (v->get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max())) {
      return bad_value(name, "out of range");
    }
    x = v->get<int64_t>();
  } else if (v->is_number_integer()) {
    x = v->get<int64_t>();
  } else if (v->is_number_float()) {
    // 10.0 is an integer to JavaScript clients.
    const double d = v->get<double>();
    if (!std::isfinite(d) || d != std::floor(d)) return wrong_type(name, "an integer", *v);
    if (d < -9.2e18 || d > 9.2e18) return bad_value(name, "out of range");
    x = static_cast<int64_t>(d);
  } else {
    return wrong_type(name, "an integer", *v);
  }
  if (x < lo || x > hi) {
    return bad_value(name, std::to_string(x) + " is outside [" + std::to_string(lo) + ", " +
                               std::to_string(hi) + "]");
  }
  out = x;
  return {};
}

MaybeError read_number(const json& obj, const char* name, double lo, double hi,
                       std::optional<double>& out) {
  const json* v = field(obj, name);
  if (!v) return {};
  if (!v->is_number()) return wrong_type(name, "a number", *v);
  const double x = v->get<double>();
  if (!(x >= lo && x <= hi)) {
    return bad_value(name, "must be between " + json(lo).dump() + " and " + json(hi).dump());
  }
  out = x;
  return {};
}

MaybeError read_bool(const json& obj, const char* name, std::optional<bool>& out) {
  const json* v = field(obj, name);
  if (!v) return {};
  if (!v->is_boolean()) return wrong_type(name, "a boolean", *v);
  out = v->get<bool>();
  return {};
}

MaybeError read_string(const json& obj, const char* name, std::optional<std::string>& out) {
  const json* v = field(obj, name);
  if (!v) return {};
  if (!v->is_string()) return wrong_type(name, "a string", *v);
  out = v->get<std::string>();
  return {};
}

// Type-checks a field we accept but do not act on.
MaybeError check_ignored(const json& obj, const char* name, json::value_t expected,
                         const char* expected_name) {
  const json* v = field(obj, name);
  if (!v) return {};
  const bool ok = expected == json::value_t::number_float ? v->is_number() : v->type() == expected;
  if (!ok) return wrong_type(name, expected_name, *v);
  return {};
}

MaybeError read_stop(const json& obj, std::vector<std::string>& out) {
  const json* v = field(obj, "stop");
  if (!v) return {};
  if (v->is_string()) {
    if (!v->get_ref<const std::string&>().empty()) out.push_back(v->get<std::string>());
    return {};
  }
  if (!v->is_array()) return wrong_type("stop", "a string or an array of strings", *v);
  if (v->size() > kMaxStopSequences) {
    return bad_value("stop", "at most " + std::to_string(kMaxStopSequences) + " sequences");
  }
  for (const json& s : *v) {
    if (!s.is_string()) return wrong_type("stop", "a string or an array of strings", s);
    if (!s.get_ref<const std::string&>().empty()) out.push_back(s.get<std::string>());
  }
  return {};
}

// Fields both endpoints share: sampling, limits, stream, refusals.
MaybeError read_common(const json& obj, const RecommendedSampling& model_sampling,
                       CompletionRequest& r) {
  std::optional<std::string> model;
  if (auto e = read_string(obj, "model", model)) return e;
  r.model = model.value_or("");

  std::optional<bool> stream;
  if (auto e = read_bool(obj, "stream", stream)) return e;
  r.stream = stream.value_or(false);
  if (const json* so = field(obj, "stream_options")) {
    if (!so->is_object()) return wrong_type("stream_options", "an object", *so);
    std::optional<bool> usage;
    if (auto e = read_bool(*so, "include_usage", usage)) {
      e->param = "stream_options.include_usage";
      return e;
    }
    r.include_usage = usage.value_or(false);
  }

  SamplingParams& s = r.generate.sampling;
  SamplingParams openai;
  openai.temperature = 1.0f;
  const SamplingParams defaults = model_sampling.over(openai);
  std::optional<double> temperature, top_p, min_p, repetition_penalty;
  if (auto e = read_number(obj, "temperature", 0.0, 2.0, temperature)) return e;
  if (auto e = read_number(obj, "top_p", 0.0, 1.0, top_p)) return e;
  if (auto e = read_number(obj, "min_p", 0.0, 1.0, min_p)) return e;
  if (auto e = read_number(obj, "repetition_penalty", 0.01, 10.0, repetition_penalty)) return e;
  s.temperature = temperature ? static_cast<float>(*temperature) : defaults.temperature;
  s.top_p = top_p ? static_cast<float>(*top_p) : defaults.top_p;
  s.min_p = min_p ? static_cast<float>(*min_p) : defaults.min_p;
  s.repetition_penalty =
      repetition_penalty ? static_cast<float>(*repetition_penalty) : defaults.repetition_penalty;
  s.repeat_last_n = defaults.repeat_last_n;

  std::optional<int64_t> top_k, seed, n, best_of;
  if (auto e = read_int(obj, "top_k", 0, 1 << 20, top_k)) return e;
  s.top_k = top_k ? static_cast<int>(*top_k) : defaults.top_k;
  if (auto e = read_int(obj, "seed", std::numeric_limits<int64_t>::min(),
                        std::numeric_limits<int64_t>::max(), seed)) {
    return e;
  }
  // OpenAI samples differently on every call unless a seed is given.
  s.seed = seed ? static_cast<uint64_t>(*seed)
                : (uint64_t(std::random_device{}()) << 32) ^ std::random_device{}();

  if (auto e = read_int(obj, "n", 1, 128, n)) return e;
  if (n.value_or(1) != 1) return unsupported("n", "one choice per request (n = 1)");
  if (auto e = read_int(obj, "best_of", 1, 128, best_of)) return e;
  if (best_of.value_or(1) != 1) return unsupported("best_of", "one candidate per request");

  std::optional<bool> ignore_eos;
  if (auto e = read_bool(obj, "ignore_eos", ignore_eos)) return e;
  r.generate.ignore_eos = ignore_eos.value_or(false);

  if (auto e = read_stop(obj, r.generate.stop)) return e;

  for (const char* name : {"frequency_penalty", "presence_penalty"}) {
    std::optional<double> ignored;
    if (auto e = read_number(obj, name, -2.0, 2.0, ignored)) return e;
  }
  if (auto e = check_ignored(obj, "user", json::value_t::string, "a string")) return e;
  if (auto e = check_ignored(obj, "metadata", json::value_t::object, "an object")) return e;
  if (auto e = check_ignored(obj, "logit_bias", json::value_t::object, "an object")) return e;
  if (const json* lb = field(obj, "logit_bias"); lb && !lb->empty()) {
    return unsupported("logit_bias", "token biases are not implemented");
  }
  if (const json* t = field(obj, "tools"); t && !(t->is_array() && t->empty())) {
    return unsupported("tools", "tool calling is not implemented");
  }
  if (const json* f = field(obj, "functions"); f && !(f->is_array() && f->empty())) {
    return unsupported("functions", "function calling is not implemented");
  }
  return {};
}

// OpenAI's max_tokens, or max_completion_tokens (its newer name for chat).
MaybeError read_max_tokens(const json& obj, Endpoint endpoint, int& out) {
  std::optional<int64_t> max_tokens, max_completion_tokens;
  if (auto e = read_int(obj, "max_tokens", 0, kUpToContext, max_tokens)) return e;
  if (endpoint == Endpoint::chat) {
    if (auto e = read_int(obj, "max_completion_tokens", 0, kUpToContext, max_completion_tokens)) {
      return e;
    }
  }
  const int64_t fallback = endpoint == Endpoint::chat ? kUpToContext : kLegacyCompletionMaxTokens;
  out = static_cast<int>(max_completion_tokens.value_or(max_tokens.value_or(fallback)));
  return {};
}

MaybeError read_content(const json& content, const std::string& where, std::string& out) {
  if (content.is_null()) return {};
  if (content.is_string()) {
    out = content.get<std::string>();
    return {};
  }
  if (!content.is_array())
    return wrong_type(where, "a string or an array of content parts", content);
  for (const json& part : content) {
    if (!part.is_object()) return wrong_type(where, "an array of content parts", part);
    auto type = part.find("type");
    if (type == part.end() || !type->is_string()) {
      return invalid_request("Missing 'type' in a content part of " + where, where);
    }
    if (*type != "text") {
      return unsupported(where, "only text content parts (this model reads text only)");
    }
    auto text = part.find("text");
    if (text == part.end() || !text->is_string()) {
      return wrong_type(where + ".text", "a string", text == part.end() ? json() : *text);
    }
    if (!out.empty()) out += "\n";
    out += text->get<std::string>();
  }
  return {};
}

MaybeError read_messages(const json& obj, std::vector<ChatMessage>& out) {
  const json* v = field(obj, "messages");
  if (!v)
    return invalid_request("Missing required parameter: 'messages'.", "messages",
                           "missing_required_parameter");
  if (!v->is_array()) return wrong_type("messages", "an array", *v);
  if (v->empty()) return bad_value("messages", "must contain at least one message");
  for (size_t i = 0; i < v->size(); ++i) {
    const json& m = (*v)[i];
    const std::string where = "messages[" + std::to_string(i) + "]";
    if (!m.is_object()) return wrong_type(where, "an object", m);
    auto role = m.find("role");
    if (role == m.end()) return invalid_request("Missing 'role' in " + where, where + ".role");
    if (!role->is_string()) return wrong_type(where + ".role", "a string", *role);
    ChatMessage msg;
    msg.role = role->get<std::string>();
    if (msg.role == "developer") msg.role = "system";  // OpenAI's newer name for it
    if (msg.role == "tool" || msg.role == "function") {
      return unsupported(where + ".role", "tool and function messages (no tool calling)");
    }
    if (msg.role != "system" && msg.role != "user" && msg.role != "assistant") {
      return bad_value(where + ".role", "'" + msg.role +
                                            "' is not one of 'system', 'developer', 'user', "
                                            "'assistant'");
    }
    auto content = m.find("content");
    if (content == m.end() && msg.role != "assistant") {
      return invalid_request("Missing 'content' in " + where, where + ".content");
    }
    if (content != m.end()) {
      if (auto e = read_content(*content, where + ".content", msg.content)) return e;
    }
    if (auto calls = m.find("tool_calls");
        calls != m.end() && !calls->is_null() && !(calls->is_array() && calls->empty())) {
      return unsupported(where + ".tool_calls", "tool calling is not implemented");
    }
    out.push_back(std::move(msg));
  }
  return {};
}

MaybeError read_token_ids(const json& arr, std::vector<int32_t>& out) {
  for (const json& t : arr) {
    if (!t.is_number_integer()) return wrong_type("prompt", "an array of token ids", t);
    const int64_t id = t.get<int64_t>();
    if (id < 0 || id > std::numeric_limits<int32_t>::max()) {
      return bad_value("prompt", "token id " + std::to_string(id) + " is out of range");
    }
    out.push_back(static_cast<int32_t>(id));
  }
  return {};
}

// A string, a one-element array of strings, token ids, or a one-element
// array of token-id arrays. Several prompts would need n > 1 choices.
MaybeError read_prompt(const json& obj, GenerateRequest& g) {
  const json* v = field(obj, "prompt");
  if (!v)
    return invalid_request("Missing required parameter: 'prompt'.", "prompt",
                           "missing_required_parameter");
  const char* expected = "a string, an array of strings, or an array of token ids";
  if (v->is_string()) {
    g.prompt = v->get<std::string>();
    return {};
  }
  if (!v->is_array()) return wrong_type("prompt", expected, *v);
  if (v->empty()) return bad_value("prompt", "must not be empty");
  const json& first = v->front();
  if (first.is_number_integer()) return read_token_ids(*v, g.tokens);
  if (v->size() > 1) return unsupported("prompt", "one prompt per request");
  if (first.is_string()) {
    g.prompt = first.get<std::string>();
    return {};
  }
  if (first.is_array()) return read_token_ids(first, g.tokens);
  return wrong_type("prompt", expected, first);
}

MaybeError read_completion_only(const json& obj) {
  std::optional<bool> echo;
  if (auto e = read_bool(obj, "echo", echo)) return e;
  if (echo.value_or(false)) return unsupported("echo", "the prompt is not echoed back");
  std::optional<std::string> suffix;
  if (auto e = read_string(obj, "suffix", suffix)) return e;
  if (suffix && !suffix->empty()) return unsupported("suffix", "no fill-in-the-middle");
  if (const json* lp = field(obj, "logprobs"); lp && !(lp->is_number() && lp->get<double>() == 0)) {
    return unsupported("logprobs", "log probabilities are not returned");
  }
  return {};
}

MaybeError read_chat_only(const json& obj) {
  std::optional<bool> logprobs;
  if (auto e = read_bool(obj, "logprobs", logprobs)) return e;
  if (logprobs.value_or(false))
    return unsupported("logprobs", "log probabilities are not returned");
  std::optional<int64_t> top_logprobs;
  if (auto e = read_int(obj, "top_logprobs", 0, 20, top_logprobs)) return e;
  if (top_logprobs.value_or(0) != 0)
    return unsupported("top_logprobs", "log probabilities are not returned");
  return {};
}

}  // namespace

ApiResult<CompletionRequest> parse_completion_request(Endpoint endpoint, std::string_view body,
                                                      const CompileLimits& limits,
                                                      const RecommendedSampling& model_sampling) {
  json obj;
  try {
    obj = json::parse(body);
  } catch (const json::exception& e) {
    return invalid_request(
        std::string("We could not parse the JSON body of your request: ") + e.what(), {},
        "invalid_json");
  }
  if (!obj.is_object()) {
    return invalid_request(
        std::string("The request body must be a JSON object, not ") + type_name(obj) + ".", {},
        "invalid_json");
  }
  CompletionRequest r;
  r.endpoint = endpoint;
  if (auto e = read_common(obj, model_sampling, r)) return *e;
  if (auto e = read_response_format(obj, body, r.generate.response_format, limits)) return *e;
  if (auto e = read_max_tokens(obj, endpoint, r.generate.max_tokens)) return *e;
  if (endpoint == Endpoint::chat) {
    if (auto e = read_chat_only(obj)) return *e;
    if (auto e = read_messages(obj, r.generate.messages)) return *e;
  } else {
    if (auto e = read_completion_only(obj)) return *e;
    if (auto e = read_prompt(obj, r.generate)) return *e;
  }
  return r;
}

}  // namespace rc::server
