// rc_server pieces that need no model: request parsing and validation,
// access rules, response and cache JSON, Prometheus text, and the event
// hub's fan-out (against a fake engine that only produces cache events).
#include <gtest/gtest.h>

#include <functional>
#include <mutex>
#include <random>
#include <regex>
#include <set>
#include <sstream>
#include <utility>

#include <nlohmann/json.hpp>

#include "access.h"
#include "api-error.h"
#include "cache-json.h"
#include "event-hub.h"
#include "json-depth.h"
#include "metrics-text.h"
#include "openai-request.h"
#include "openai-response.h"

namespace rc::server {
namespace {

using nlohmann::json;

ApiResult<CompletionRequest> chat(const json& body) {
  return parse_completion_request(Endpoint::chat, body.dump());
}
ApiResult<CompletionRequest> completion(const json& body) {
  return parse_completion_request(Endpoint::completions, body.dump());
}
const json kHello = json::array({{{"role", "user"}, {"content", "hi"}}});

TEST(OpenAiRequest, ChatDefaultsFollowOpenAi) {
  auto r = chat({{"model", "m"}, {"messages", kHello}});
  ASSERT_TRUE(r.ok()) << r.error().message;
  const CompletionRequest& c = r.value();
  EXPECT_EQ(c.model, "m");
  EXPECT_FALSE(c.stream);
  EXPECT_FLOAT_EQ(c.generate.sampling.temperature, 1.0f);
  EXPECT_FLOAT_EQ(c.generate.sampling.top_p, 1.0f);
  EXPECT_GT(c.generate.max_tokens, 100000);  // up to the context; the engine trims
  ASSERT_EQ(c.generate.messages.size(), 1u);
  EXPECT_EQ(c.generate.messages[0].role, "user");
  EXPECT_EQ(c.generate.messages[0].content, "hi");
}

// A field the request leaves out takes the model's recommendation (its
// GGUF general.sampling.*), else OpenAI's default; a field it gives rules.
TEST(OpenAiRequest, LeftOutSamplingTakesTheModelsRecommendation) {
  RecommendedSampling model;
  model.temperature = 0.5f;
  model.top_k = 40;
  model.min_p = 0.1f;
  model.repeat_last_n = 32;
  const json body = {{"messages", kHello}, {"top_p", 0.8}};
  auto r = parse_completion_request(Endpoint::chat, body.dump(), {}, model);
  ASSERT_TRUE(r.ok()) << r.error().message;
  const SamplingParams& s = r.value().generate.sampling;
  EXPECT_FLOAT_EQ(s.temperature, 0.5f);
  EXPECT_EQ(s.top_k, 40);
  EXPECT_FLOAT_EQ(s.min_p, 0.1f);
  EXPECT_EQ(s.repeat_last_n, 32);
  EXPECT_FLOAT_EQ(s.top_p, 0.8f);               // the request's own
  EXPECT_FLOAT_EQ(s.repetition_penalty, 1.0f);  // the model says nothing: OpenAI's
  json greedy = body;
  greedy["temperature"] = 0;
  auto g = parse_completion_request(Endpoint::chat, greedy.dump(), {}, model);
  ASSERT_TRUE(g.ok());
  EXPECT_FLOAT_EQ(g.value().generate.sampling.temperature, 0.0f);
}

TEST(OpenAiRequest, ChatFieldsAreApplied) {
  auto r = chat(
      {{"messages", json::array({{{"role", "developer"}, {"content", "be brief"}},
                                 {{"role", "user"},
                                  {"content", json::array({{{"type", "text"}, {"text", "a"}},
                                                           {{"type", "text"}, {"text", "b"}}})}}})},
       {"max_completion_tokens", 7},
       {"temperature", 0},
       {"top_p", 0.5},
       {"seed", -3},
       {"stop", "END"},
       {"stream", true},
       {"stream_options", {{"include_usage", true}}},
       {"n", 1},
       {"top_k", 40},
       {"ignore_eos", true},
       {"user", "x"},
       {"unknown_vendor_field", {1, 2}}});
  ASSERT_TRUE(r.ok()) << r.error().message;
  const CompletionRequest& c = r.value();
  EXPECT_EQ(c.generate.messages[0].role, "system");
  EXPECT_EQ(c.generate.messages[1].content, "a\nb");
  EXPECT_EQ(c.generate.max_tokens, 7);
  EXPECT_FLOAT_EQ(c.generate.sampling.temperature, 0.0f);
  EXPECT_FLOAT_EQ(c.generate.sampling.top_p, 0.5f);
  EXPECT_EQ(c.generate.sampling.seed, static_cast<uint64_t>(int64_t{-3}));
  EXPECT_EQ(c.generate.sampling.top_k, 40);
  EXPECT_EQ(c.generate.stop, std::vector<std::string>{"END"});
  EXPECT_TRUE(c.stream);
  EXPECT_TRUE(c.include_usage);
  EXPECT_TRUE(c.generate.ignore_eos);
}

TEST(OpenAiRequest, StopAcceptsAnArrayAndDropsEmptyStrings) {
  auto r = chat({{"messages", kHello}, {"stop", {"a", "", "b"}}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.value().generate.stop, (std::vector<std::string>{"a", "b"}));
}

TEST(OpenAiRequest, CompletionPromptForms) {
  auto s = completion({{"prompt", "Once"}});
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s.value().generate.prompt, "Once");
  EXPECT_EQ(s.value().generate.max_tokens, 16);  // OpenAI's legacy default
  auto one = completion({{"prompt", {"Once"}}, {"max_tokens", 5.0}});
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one.value().generate.prompt, "Once");
  EXPECT_EQ(one.value().generate.max_tokens, 5);
  auto ids = completion({{"prompt", {1, 2, 3}}});
  ASSERT_TRUE(ids.ok());
  EXPECT_EQ(ids.value().generate.tokens, (std::vector<int32_t>{1, 2, 3}));
  auto nested = completion({{"prompt", {{4, 5}}}});
  ASSERT_TRUE(nested.ok());
  EXPECT_EQ(nested.value().generate.tokens, (std::vector<int32_t>{4, 5}));
}

struct BadCase {
  Endpoint endpoint;
  std::string body;
  std::string param;  // expected error param ("" = null)
  int status = 400;
};

TEST(OpenAiRequest, BadInputIsA400NamingTheField) {
  const std::string msgs = R"("messages":[{"role":"user","content":"hi"}])";
  const std::vector<BadCase> cases = {
      {Endpoint::chat, "{", ""},
      {Endpoint::chat, "[1,2]", ""},
      {Endpoint::chat, "", ""},
      {Endpoint::chat, R"({"messages":5})", "messages"},
      {Endpoint::chat, R"({"messages":[]})", "messages"},
      {Endpoint::chat, R"({})", "messages"},
      {Endpoint::chat, R"({"messages":[5]})", "messages[0]"},
      {Endpoint::chat, R"({"messages":[{"role":"wizard","content":"x"}]})", "messages[0].role"},
      {Endpoint::chat, R"({"messages":[{"role":"user","content":7}]})", "messages[0].content"},
      {Endpoint::chat, R"({"messages":[{"role":"user","content":[{"type":"image_url"}]}]})",
       "messages[0].content"},
      {Endpoint::chat, "{" + msgs + R"(,"max_tokens":"ten"})", "max_tokens"},
      {Endpoint::chat, "{" + msgs + R"(,"max_tokens":1.5})", "max_tokens"},
      {Endpoint::chat, "{" + msgs + R"(,"max_tokens":-1})", "max_tokens"},
      {Endpoint::chat, "{" + msgs + R"(,"temperature":"hot"})", "temperature"},
      {Endpoint::chat, "{" + msgs + R"(,"temperature":3})", "temperature"},
      {Endpoint::chat, "{" + msgs + R"(,"top_p":2})", "top_p"},
      {Endpoint::chat, "{" + msgs + R"(,"seed":"x"})", "seed"},
      {Endpoint::chat, "{" + msgs + R"(,"stop":5})", "stop"},
      {Endpoint::chat, "{" + msgs + R"(,"stop":["a",1]})", "stop"},
      {Endpoint::chat, "{" + msgs + R"(,"stream":"yes"})", "stream"},
      {Endpoint::chat, "{" + msgs + R"(,"stream_options":{"include_usage":1}})",
       "stream_options.include_usage"},
      {Endpoint::chat, "{" + msgs + R"(,"model":42})", "model"},
      {Endpoint::chat, "{" + msgs + R"(,"n":2})", "n"},
      {Endpoint::chat, "{" + msgs + R"(,"logprobs":true})", "logprobs"},
      {Endpoint::chat, "{" + msgs + R"(,"tools":[{"type":"function"}]})", "tools"},
      {Endpoint::chat, "{" + msgs + R"(,"frequency_penalty":"lots"})", "frequency_penalty"},
      {Endpoint::completions, R"({"prompt":5})", "prompt"},
      {Endpoint::completions, R"({"prompt":["a","b"]})", "prompt"},
      {Endpoint::completions, R"({"prompt":"a","echo":true})", "echo"},
      {Endpoint::completions, R"({"max_tokens":3})", "prompt"},
  };
  for (const BadCase& c : cases) {
    auto r = parse_completion_request(c.endpoint, c.body);
    ASSERT_FALSE(r.ok()) << c.body;
    EXPECT_EQ(r.error().http_status, c.status) << c.body;
    EXPECT_EQ(r.error().param, c.param) << c.body << ": " << r.error().message;
    EXPECT_EQ(r.error().type, "invalid_request_error");
    EXPECT_FALSE(r.error().message.empty());
    // The body is OpenAI's shape and valid JSON even for odd input.
    json body = json::parse(r.error().body());
    ASSERT_TRUE(body.contains("error"));
    for (const char* k : {"message", "type", "param", "code"}) {
      EXPECT_TRUE(body["error"].contains(k)) << k;
    }
  }
}

TEST(Access, LoopbackHosts) {
  for (const char* h : {"127.0.0.1", "127.1.2.3", "localhost", "::1", "[::1]", "LOCALHOST"}) {
    EXPECT_TRUE(is_loopback_host(h)) << h;
  }
  for (const char* h : {"0.0.0.0", "::", "192.168.1.2", "example.com", "", "128.0.0.1"}) {
    EXPECT_FALSE(is_loopback_host(h)) << h;
  }
}

TEST(Access, NonLoopbackBindNeedsAKey) {
  EXPECT_TRUE(check_bind_address("127.0.0.1", "").ok());
  Status refused = check_bind_address("0.0.0.0", "");
  EXPECT_EQ(refused.code(), StatusCode::invalid_argument);
  EXPECT_NE(refused.message().find("--api-key"), std::string::npos);
  EXPECT_TRUE(check_bind_address("0.0.0.0", "secret").ok());
}

TEST(Access, BearerKey) {
  EXPECT_TRUE(bearer_authorized("", ""));
  EXPECT_TRUE(bearer_authorized("Bearer k3y", "k3y"));
  EXPECT_TRUE(bearer_authorized("bearer k3y", "k3y"));
  EXPECT_FALSE(bearer_authorized("", "k3y"));
  EXPECT_FALSE(bearer_authorized("Bearer k3", "k3y"));
  EXPECT_FALSE(bearer_authorized("Bearer k3yy", "k3y"));
  EXPECT_FALSE(bearer_authorized("Basic k3y", "k3y"));
  EXPECT_FALSE(bearer_authorized("k3y", "k3y"));
}

TEST(Access, HostHeaderBlocksRebinding) {
  EXPECT_TRUE(host_header_allowed("", "127.0.0.1"));
  EXPECT_TRUE(host_header_allowed("127.0.0.1:8080", "127.0.0.1"));
  EXPECT_TRUE(host_header_allowed("localhost:8080", "127.0.0.1"));
  EXPECT_TRUE(host_header_allowed("[::1]:8080", "::1"));
  EXPECT_FALSE(host_header_allowed("evil.example:8080", "127.0.0.1"));
  EXPECT_FALSE(host_header_allowed("evil.example", "127.0.0.1"));
}

TEST(Access, AllowOriginTakesOriginsOnly) {
  EXPECT_TRUE(check_origin("http://localhost:3000").ok());
  EXPECT_TRUE(check_origin("https://app.example").ok());
  for (const char* bad : {"", "*", "null", "evil.example", "https://app.example/",
                          "https://app.example/path", "ftp://app.example", "https://"}) {
    Status st = check_origin(bad);
    EXPECT_FALSE(st.ok()) << bad;
    EXPECT_NE(st.message().find("--allow-origin"), std::string::npos) << st.message();
  }
}

// The depth scan against nlohmann's own count (an independent parser):
// random bodies of brackets, strings holding brackets, quotes and escapes.
TEST(JsonDepth, MatchesTheParsersNesting) {
  EXPECT_FALSE(check_json_depth(std::string(128, '[') + std::string(128, ']')));
  auto deep = check_json_depth(std::string(129, '[') + std::string(129, ']'));
  ASSERT_TRUE(deep);
  EXPECT_EQ(deep->http_status, 400);
  EXPECT_EQ(deep->code, "nested_too_deep");
  EXPECT_TRUE(check_json_depth(std::string(20000, '{')));  // unclosed counts too
  const std::string in_string =
      "{\"a\":\"" + std::string(500, '[') + "\\\"" + std::string(500, '{') + "\"}";
  EXPECT_FALSE(check_json_depth(in_string));

  std::mt19937 rng(5);
  for (int round = 0; round < 300; ++round) {
    const int target = 100 + static_cast<int>(rng() % 60);
    std::function<json(int)> make = [&](int depth) -> json {
      if (depth >= target) return json(std::string("\"[{\\") + std::string(rng() % 3, '['));
      const json leaf = std::string(rng() % 2, '{') + "]\"";
      if (rng() % 2) return json::array({leaf, make(depth + 1)});
      return json{{"k[", make(depth + 1)}, {"z", leaf}};
    };
    const json doc = make(0);
    std::function<int(const json&)> depth_of = [&](const json& v) -> int {
      if (!v.is_structured()) return 0;
      int inner = 0;
      for (const json& x : v) inner = std::max(inner, depth_of(x));
      return inner + 1;
    };
    const bool refused = check_json_depth(doc.dump()).has_value();
    EXPECT_EQ(refused, depth_of(doc) > kMaxJsonDepth) << doc.dump().substr(0, 200);
  }
}

TEST(OpenAiResponse, ChunksHaveOpenAiShape) {
  ResponseMeta meta = new_response_meta(Endpoint::chat, "demo", "fp", /*include_usage=*/true);
  EXPECT_EQ(meta.id.rfind("chatcmpl-", 0), 0u);
  auto parse = [](const std::string& sse) {
    EXPECT_EQ(sse.rfind("data: ", 0), 0u);
    EXPECT_EQ(sse.substr(sse.size() - 2), "\n\n");
    return json::parse(sse.substr(6));
  };
  json first = parse(first_chunk(meta));
  EXPECT_EQ(first["object"], "chat.completion.chunk");
  EXPECT_EQ(first["choices"][0]["delta"]["role"], "assistant");
  EXPECT_TRUE(first["usage"].is_null());
  json delta = parse(delta_chunk(meta, "Hi"));
  EXPECT_EQ(delta["choices"][0]["delta"]["content"], "Hi");
  EXPECT_TRUE(delta["choices"][0]["finish_reason"].is_null());
  json fin = parse(finish_chunk(meta, FinishReason::length));
  EXPECT_EQ(fin["choices"][0]["finish_reason"], "length");
  EXPECT_TRUE(fin["choices"][0]["delta"].empty());
  RequestMetrics m;
  m.prompt_tokens = 10;
  m.cached_tokens = 4;
  m.output_tokens = 3;
  json usage = parse(usage_chunk(meta, m));
  EXPECT_TRUE(usage["choices"].empty());
  EXPECT_EQ(usage["usage"]["total_tokens"], 13);
  EXPECT_EQ(usage["usage"]["prompt_tokens_details"]["cached_tokens"], 4);
  // A model can emit invalid UTF-8; the chunk stays valid JSON.
  json bad = parse(delta_chunk(meta, std::string("a\xff", 2)));
  EXPECT_EQ(bad["choices"][0]["delta"]["content"], "a\xEF\xBF\xBD");

  ResponseMeta cm = new_response_meta(Endpoint::completions, "demo", "fp", false);
  EXPECT_EQ(first_chunk(cm), "");
  json text = parse(delta_chunk(cm, "x"));
  EXPECT_EQ(text["object"], "text_completion");
  EXPECT_EQ(text["choices"][0]["text"], "x");
  EXPECT_FALSE(text.contains("usage"));
}

TEST(CacheJson, EventsAndSnapshots) {
  TokenDecoder decode = [](const std::vector<Token>& t) {
    return "<" + std::to_string(t.size()) + ">";
  };
  CacheEvent ins;
  ins.seq = 7;
  ins.kind = CacheEventKind::insert;
  ins.node = 3;
  ins.parent = 0;
  ins.token_count = 2;
  ins.page_count = 2;
  ins.tokens = {5, 6};
  ins.pages = {10, 11};
  json j = cache_event_json(ins, decode);
  EXPECT_EQ(j["type"], "insert");
  EXPECT_EQ(j["seq"], 7);
  EXPECT_TRUE(j["other"].is_null());
  EXPECT_EQ(j["tokens"], json({5, 6}));
  EXPECT_EQ(j["text"], "<2>");
  CacheEvent lock;
  lock.kind = CacheEventKind::lock;
  lock.node = 3;
  EXPECT_FALSE(cache_event_json(lock, decode).contains("tokens"));
  CacheEvent draft;
  draft.kind = CacheEventKind::draft;
  draft.node = 3;
  draft.token_count = 15;
  draft.page_count = 12;
  const json dj = cache_event_json(draft, decode);
  EXPECT_EQ(dj["type"], "draft");
  EXPECT_EQ(dj["drafted"], 15);
  EXPECT_EQ(dj["accepted"], 12);
  EXPECT_FALSE(dj.contains("tokens"));

  CacheSnapshot snap;
  snap.nodes.push_back({});
  CacheNodeInfo n;
  n.id = 1;
  n.parent = 0;
  n.tokens = {1, 2, 3};
  n.pages = {4, 5, 6};
  n.lock_ref = 1;
  n.pin_ref = 1;
  snap.nodes.push_back(n);
  json s = cache_snapshot_json(snap, decode);
  EXPECT_TRUE(s["nodes"][0]["parent"].is_null());
  EXPECT_EQ(s["nodes"][1]["token_count"], 3);
  EXPECT_EQ(s["nodes"][1]["text"], "<3>");
  EXPECT_EQ(s["nodes"][1]["pinned"], true);
  EXPECT_TRUE(s["stats"].contains("evictable_pages"));
  json lean = cache_snapshot_json(snap, decode, {false, false, false});
  EXPECT_FALSE(lean["nodes"][1].contains("tokens"));
  EXPECT_FALSE(lean["nodes"][1].contains("text"));
  EXPECT_FALSE(lean["nodes"][1].contains("pages"));
}

// Every line of the exposition format is a comment or "name{labels} value".
void expect_prometheus_text(const std::string& text) {
  static const std::regex sample(
      R"(^[a-zA-Z_:][a-zA-Z0-9_:]*(\{([a-zA-Z_][a-zA-Z0-9_]*="([^"\\]|\\.)*",?)*\})? -?[0-9.eE+-]+$)");
  static const std::regex comment(R"(^# (HELP|TYPE) [a-zA-Z_:][a-zA-Z0-9_:]* .+$)");
  std::istringstream in(text);
  std::string line;
  std::set<std::string> typed;
  int samples = 0;
  while (std::getline(in, line)) {
    if (line.rfind("# TYPE ", 0) == 0) typed.insert(line.substr(7, line.find(' ', 7) - 7));
    if (line[0] == '#') {
      EXPECT_TRUE(std::regex_match(line, comment)) << line;
      continue;
    }
    EXPECT_TRUE(std::regex_match(line, sample)) << line;
    const std::string name = line.substr(0, line.find_first_of("{ "));
    EXPECT_TRUE(typed.count(name)) << "no TYPE before " << line;
    ++samples;
  }
  EXPECT_GT(samples, 20);
}

TEST(MetricsText, ExpositionFormat) {
  MetricsInput in;
  in.model.name = "demo \"q\"";
  in.model.backend = "cpu";
  in.engine.cache.total_pages = 100;
  in.engine.cache.free_pages = 90;
  in.http[{"/v1/chat/completions", 200}] = 3;
  in.resident_bytes = resident_memory_bytes();
  EXPECT_GT(in.resident_bytes, 0);
  const std::string text = render_metrics(in);
  expect_prometheus_text(text);
  EXPECT_NE(
      text.find(R"(radixchat_http_responses_total{route="/v1/chat/completions",code="200"} 3)"),
      std::string::npos);
  EXPECT_NE(text.find(R"(radixchat_kv_pages{state="free"} 90)"), std::string::npos);
  EXPECT_NE(text.find(R"(model="demo \"q\"")"), std::string::npos);
}

// An engine that only has cache events, to drive the hub by hand.
class EventOnlyEngine final : public Engine {
 public:
  void push(std::vector<CacheEvent> events, bool overflowed = false) {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& e : events) queue_.push_back(std::move(e));
    overflowed_ = overflowed_ || overflowed;
  }
  std::vector<CacheEvent> drain_events(bool* overflowed) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (overflowed) *overflowed = overflowed_;
    overflowed_ = false;
    return std::exchange(queue_, {});
  }
  Result<RequestId> submit(GenerateRequest, StreamCallback) override {
    return Status(StatusCode::unsupported, "fake");
  }
  void cancel(RequestId) override {}
  Status warmup(const std::vector<std::vector<ChatMessage>>&) override { return {}; }
  Result<std::vector<float>> last_logits(const std::vector<int32_t>&) override {
    return Status(StatusCode::unsupported, "fake");
  }
  EngineStats stats() const override { return {}; }
  CacheSnapshot cache_snapshot() const override { return {}; }
  const ModelInfo& model_info() const override { return info_; }
  Result<std::vector<int32_t>> tokenize(const std::string&, bool) const override {
    return std::vector<int32_t>{};
  }
  std::string detokenize(const std::vector<int32_t>&) const override { return {}; }
  Result<std::vector<int32_t>> render_chat(const std::vector<ChatMessage>&) const override {
    return std::vector<int32_t>{};
  }

 private:
  std::mutex mu_;
  std::vector<CacheEvent> queue_;
  bool overflowed_ = false;
  ModelInfo info_;
};

std::vector<CacheEvent> events(uint64_t from, uint64_t to) {
  std::vector<CacheEvent> out;
  for (uint64_t s = from; s < to; ++s) {
    CacheEvent e;
    e.seq = s;
    e.kind = CacheEventKind::match;
    out.push_back(e);
  }
  return out;
}

// Waits until `n` events arrived or something else happened.
EventSubscription::Wake collect(EventSubscription& sub, std::vector<CacheEvent>& out, size_t n) {
  for (int i = 0; i < 200 && out.size() < n; ++i) {
    auto w = sub.wait(out, std::chrono::milliseconds(20));
    if (w == EventSubscription::Wake::resync || w == EventSubscription::Wake::closed) return w;
  }
  return EventSubscription::Wake::events;
}

TEST(EventHub, FansOutToEverySubscriberFromTheFloor) {
  EventOnlyEngine engine;
  EventHub hub(engine, {64, 4, std::chrono::milliseconds(2)});
  auto a = hub.subscribe();
  auto b = hub.subscribe();
  ASSERT_TRUE(a && b);
  a->begin_snapshot();
  a->set_floor(0);
  b->begin_snapshot();
  b->set_floor(3);  // b's snapshot already reflects 0..2
  engine.push(events(0, 10));
  std::vector<CacheEvent> got_a, got_b;
  collect(*a, got_a, 10);
  collect(*b, got_b, 7);
  ASSERT_EQ(got_a.size(), 10u);
  ASSERT_EQ(got_b.size(), 7u);
  EXPECT_EQ(got_b.front().seq, 3u);
  EXPECT_EQ(hub.stats().subscribers, 2u);
  hub.unsubscribe(b);
  EXPECT_EQ(hub.stats().subscribers, 1u);
}

TEST(EventHub, SlowSubscriberIsToldToResyncAndOthersAreUnaffected) {
  EventOnlyEngine engine;
  EventHub hub(engine, {8, 4, std::chrono::milliseconds(2)});
  auto slow = hub.subscribe();
  auto fast = hub.subscribe();
  std::vector<CacheEvent> got_fast;
  uint64_t next = 0;
  for (int round = 0; round < 4; ++round) {
    engine.push(events(next, next + 5));
    next += 5;
    collect(*fast, got_fast, next);
  }
  EXPECT_EQ(got_fast.size(), 20u);
  std::vector<CacheEvent> got_slow;
  EXPECT_EQ(slow->wait(got_slow, std::chrono::milliseconds(50)), EventSubscription::Wake::resync);
  EXPECT_GE(hub.stats().resyncs, 1u);
  // After a new snapshot the slow one follows again.
  slow->begin_snapshot();
  slow->set_floor(next);
  engine.push(events(next, next + 3));
  collect(*slow, got_slow, 3);
  ASSERT_EQ(got_slow.size(), 3u);
  EXPECT_EQ(got_slow.front().seq, next);
}

TEST(EventHub, EngineOverflowResyncsEveryone) {
  EventOnlyEngine engine;
  EventHub hub(engine, {64, 4, std::chrono::milliseconds(2)});
  auto a = hub.subscribe();
  engine.push(events(0, 2), /*overflowed=*/true);
  std::vector<CacheEvent> got;
  EXPECT_EQ(collect(*a, got, 1), EventSubscription::Wake::resync);
  EXPECT_EQ(hub.stats().engine_overflows, 1u);
}

TEST(EventHub, CapacityAndClose) {
  EventOnlyEngine engine;
  EventHub hub(engine, {64, 2, std::chrono::milliseconds(2)});
  auto a = hub.subscribe();
  auto b = hub.subscribe();
  ASSERT_TRUE(a && b);
  EXPECT_EQ(hub.subscribe(), nullptr);
  hub.close();
  std::vector<CacheEvent> got;
  EXPECT_EQ(a->wait(got, std::chrono::milliseconds(100)), EventSubscription::Wake::closed);
  EXPECT_EQ(hub.subscribe(), nullptr);
}

}  // namespace
}  // namespace rc::server
