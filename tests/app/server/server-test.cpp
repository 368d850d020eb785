// The server over the real engine, driven with real HTTP on an ephemeral
// loopback port: chat and completions (plain and streaming), models,
// metrics, the cache snapshot and event stream, bad requests of every
// kind, the API key, a client that disconnects mid-stream, and a graceful
// shutdown with a stream in flight.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <thread>

#include "server-test-util.h"

namespace rc::server::testing {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

class ServerTest : public LiveServerTest {
 protected:
  const std::string& model() const { return engine_->model_info().name; }

  json chat_body(json extra = json::object()) const {
    json b = {{"model", model()},
              {"messages", {{{"role", "user"}, {"content", "What does the radix cache keep?"}}}},
              {"max_tokens", 16},
              {"temperature", 0}};
    b.update(extra);
    return b;
  }

  using LiveServerTest::post;
  std::pair<int, json> post(const std::string& path, const json& body) {
    return post(path, body.dump());
  }
  std::pair<int, std::string> get(const std::string& path) {
    httplib::Client cli = server_->client();
    auto r = cli.Get(path.c_str());
    EXPECT_TRUE(r);
    if (!r) return {0, ""};
    return {r->status, r->body};
  }
  std::string metrics() { return get("/metrics").second; }

  // Streams `body` and returns the parsed data payloads ("[DONE]" kept as is).
  std::vector<std::string> stream(const std::string& path, json body) {
    body["stream"] = true;
    httplib::Client cli = server_->client();
    auto r = cli.Post(path.c_str(), body.dump(), "application/json");
    EXPECT_TRUE(r);
    if (!r) return {};
    EXPECT_EQ(r->status, 200) << r->body;
    EXPECT_EQ(r->get_header_value("Content-Type"), "text/event-stream");
    return sse_data_lines(r->body);
  }

  void expect_error_shape(const json& body, const std::string& param = {}) {
    ASSERT_TRUE(body.is_object()) << body;
    ASSERT_TRUE(body.contains("error")) << body;
    const json& e = body["error"];
    EXPECT_TRUE(e["message"].is_string() && !e["message"].get<std::string>().empty()) << body;
    EXPECT_TRUE(e["type"].is_string()) << body;
    EXPECT_TRUE(e.contains("param") && e.contains("code")) << body;
    if (!param.empty()) {
      EXPECT_EQ(e["param"], param) << body;
    }
  }

  // Still serving after whatever the test did.
  void expect_healthy() { EXPECT_EQ(get("/health").first, 200); }

  // Polls /metrics until no request is in flight and no page is held.
  std::string wait_idle() {
    std::string m;
    for (int i = 0; i < 100; ++i) {
      m = metrics();
      if (metric(m, "radixchat_server_requests_active") == 0 &&
          metric(m, "radixchat_requests_running") == 0 &&
          metric(m, "radixchat_requests_waiting") == 0 &&
          metric(m, R"(radixchat_kv_pages{state="held"})") == 0 &&
          metric(m, R"(radixchat_kv_pages{state="protected"})") == 0) {
        break;
      }
      std::this_thread::sleep_for(100ms);
    }
    return m;
  }
};

TEST_F(ServerTest, ChatCompletion) {
  auto [status, body] = post("/v1/chat/completions", chat_body());
  ASSERT_EQ(status, 200) << body;
  EXPECT_EQ(body["object"], "chat.completion");
  EXPECT_EQ(body["id"].get<std::string>().rfind("chatcmpl-", 0), 0u);
  EXPECT_EQ(body["model"], model());
  ASSERT_EQ(body["choices"].size(), 1u);
  const json& c = body["choices"][0];
  EXPECT_EQ(c["message"]["role"], "assistant");
  EXPECT_TRUE(c["message"]["content"].is_string());
  EXPECT_TRUE(c["finish_reason"] == "stop" || c["finish_reason"] == "length") << c;
  const json& u = body["usage"];
  EXPECT_GT(u["prompt_tokens"].get<int>(), 5);
  EXPECT_LE(u["completion_tokens"].get<int>(), 16);
  EXPECT_EQ(u["total_tokens"], u["prompt_tokens"].get<int>() + u["completion_tokens"].get<int>());
  EXPECT_TRUE(u["prompt_tokens_details"]["cached_tokens"].is_number_integer());
}

TEST_F(ServerTest, StreamingChatMatchesNonStreamingAndReusesTheCache) {
  const json body = chat_body({{"temperature", 0.8},
                               {"seed", 1234},
                               {"max_tokens", 24},
                               {"stream_options", {{"include_usage", true}}}});
  auto [status, whole] = post("/v1/chat/completions", body);
  ASSERT_EQ(status, 200) << whole;
  const std::string expected = whole["choices"][0]["message"]["content"];

  std::vector<std::string> lines = stream("/v1/chat/completions", body);
  ASSERT_GE(lines.size(), 4u);
  EXPECT_EQ(lines.back(), "[DONE]");
  std::string text;
  std::string id;
  json usage, finish;
  for (size_t i = 0; i + 1 < lines.size(); ++i) {
    json chunk = json::parse(lines[i]);
    ASSERT_FALSE(chunk.contains("error")) << lines[i];
    EXPECT_EQ(chunk["object"], "chat.completion.chunk");
    if (id.empty()) id = chunk["id"];
    EXPECT_EQ(chunk["id"], id);  // one id for the whole stream
    if (i == 0) {
      EXPECT_EQ(chunk["choices"][0]["delta"]["role"], "assistant");
    }
    if (chunk["choices"].empty()) {
      usage = chunk["usage"];
      continue;
    }
    EXPECT_TRUE(chunk["usage"].is_null());
    const json& c = chunk["choices"][0];
    if (c["delta"].contains("content")) text += c["delta"]["content"].get<std::string>();
    if (!c["finish_reason"].is_null()) finish = c["finish_reason"];
  }
  EXPECT_EQ(text, expected);
  EXPECT_EQ(finish, whole["choices"][0]["finish_reason"]);
  ASSERT_TRUE(usage.is_object()) << "no usage chunk with include_usage";
  EXPECT_EQ(usage["completion_tokens"], whole["usage"]["completion_tokens"]);
  EXPECT_EQ(usage["prompt_tokens"], whole["usage"]["prompt_tokens"]);
  // The same prompt again: all but the last prompt token come from the cache.
  EXPECT_EQ(usage["prompt_tokens_details"]["cached_tokens"].get<int>(),
            usage["prompt_tokens"].get<int>() - 1);
}

TEST_F(ServerTest, Completions) {
  auto [status, body] =
      post("/v1/completions",
           json{{"model", model()}, {"prompt", "The cache keeps"}, {"temperature", 0}});
  ASSERT_EQ(status, 200) << body;
  EXPECT_EQ(body["object"], "text_completion");
  EXPECT_EQ(body["id"].get<std::string>().rfind("cmpl-", 0), 0u);
  EXPECT_TRUE(body["choices"][0]["text"].is_string());
  EXPECT_LE(body["usage"]["completion_tokens"].get<int>(), 16);  // OpenAI's default max_tokens

  const json req = {{"prompt", "The cache keeps"}, {"temperature", 0}, {"max_tokens", 12}};
  auto [s2, whole] = post("/v1/completions", req);
  ASSERT_EQ(s2, 200);
  std::vector<std::string> lines = stream("/v1/completions", req);
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines.back(), "[DONE]");
  std::string text;
  for (size_t i = 0; i + 1 < lines.size(); ++i) {
    json chunk = json::parse(lines[i]);
    EXPECT_EQ(chunk["object"], "text_completion");
    text += chunk["choices"][0]["text"].get<std::string>();
  }
  EXPECT_EQ(text, whole["choices"][0]["text"]);
}

TEST_F(ServerTest, StopSequenceAndMaxTokens) {
  const json base = {
      {"prompt", "Once upon a time"}, {"temperature", 0}, {"max_tokens", 24}, {"ignore_eos", true}};
  auto [s1, full] = post("/v1/completions", base);
  ASSERT_EQ(s1, 200);
  EXPECT_EQ(full["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(full["usage"]["completion_tokens"], 24);
  const std::string text = full["choices"][0]["text"];
  ASSERT_GE(text.size(), 12u) << text;
  // Stop at an ASCII piece from the middle: the text before its first
  // occurrence comes back.
  size_t at = text.size() / 2;
  auto ascii = [&](size_t i) { return static_cast<unsigned char>(text[i]) < 0x80; };
  while (at + 3 < text.size() && !(ascii(at) && ascii(at + 1) && ascii(at + 2))) ++at;
  ASSERT_LT(at + 3, text.size() + 1) << text;
  const std::string stop = text.substr(at, 3);
  json with_stop = base;
  with_stop["stop"] = {stop};
  auto [s2, cut] = post("/v1/completions", with_stop);
  ASSERT_EQ(s2, 200);
  EXPECT_EQ(cut["choices"][0]["text"], text.substr(0, text.find(stop)));
  EXPECT_EQ(cut["choices"][0]["finish_reason"], "stop");
}

TEST_F(ServerTest, Models) {
  auto [status, text] = get("/v1/models");
  ASSERT_EQ(status, 200);
  json body = json::parse(text);
  EXPECT_EQ(body["object"], "list");
  ASSERT_EQ(body["data"].size(), 1u);
  const json& m = body["data"][0];
  EXPECT_EQ(m["id"], model());
  EXPECT_EQ(m["object"], "model");
  EXPECT_EQ(m["owned_by"], "radixchat");
  EXPECT_FALSE(m["backend"].get<std::string>().empty());
  EXPECT_FALSE(m["device"].get<std::string>().empty());
  EXPECT_FALSE(m["backend_reason"].get<std::string>().empty());
  EXPECT_GT(m["context_length"].get<int>(), 0);
  EXPECT_EQ(get("/v1/models/" + model()).first, 200);
  auto [missing, err] = get("/v1/models/gpt-4o");
  EXPECT_EQ(missing, 404);
  expect_error_shape(json::parse(err), "model");
}

TEST_F(ServerTest, MetricsAreCountedInPrometheusText) {
  ASSERT_EQ(post("/v1/chat/completions", chat_body()).first, 200);
  // The engine publishes its totals after the step that finished the
  // request, which can be a moment after the response went out.
  for (int i = 0; i < 100 && metric(metrics(), "radixchat_requests_finished_total") < 1; ++i) {
    std::this_thread::sleep_for(20ms);
  }
  httplib::Client cli = server_->client();
  auto r = cli.Get("/metrics");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->get_header_value("Content-Type").rfind("text/plain; version=0.0.4", 0), 0u);
  const std::string& m = r->body;
  EXPECT_GE(metric(m, R"(radixchat_http_responses_total{route="/v1/chat/completions",code="200"})"),
            1);
  EXPECT_GE(metric(m, "radixchat_requests_finished_total"), 1);
  EXPECT_GT(metric(m, "radixchat_prompt_tokens_total"), 0);
  EXPECT_GE(metric(m, "radixchat_cached_prompt_tokens_total"), 0);
  EXPECT_GT(metric(m, "radixchat_output_tokens_total"), 0);
  EXPECT_GT(metric(m, "radixchat_ttft_seconds_mean"), 0);
  EXPECT_GE(metric(m, "radixchat_cache_hit_rate"), 0);
  EXPECT_GT(metric(m, "radixchat_kv_pages_total"), 0);
  for (const char* state : {"free", "evictable", "protected", "held", "pinned"}) {
    EXPECT_GE(metric(m, std::string("radixchat_kv_pages{state=\"") + state + "\"}"), 0) << state;
  }
  EXPECT_GE(metric(m, "radixchat_cache_evictions_total"), 0);
  EXPECT_GT(metric(m, "process_resident_memory_bytes"), 0);
  // Every sample line is "name[{labels}] value" under a TYPE line.
  std::istringstream in(m);
  std::string line;
  std::set<std::string> typed;
  while (std::getline(in, line)) {
    if (line.rfind("# TYPE ", 0) == 0) typed.insert(line.substr(7, line.find(' ', 7) - 7));
    if (line.empty() || line[0] == '#') continue;
    EXPECT_TRUE(typed.count(line.substr(0, line.find_first_of("{ ")))) << line;
  }
}

TEST_F(ServerTest, CacheSnapshot) {
  ASSERT_EQ(post("/v1/chat/completions", chat_body()).first, 200);
  auto [status, text] = get("/v1/cache");
  ASSERT_EQ(status, 200);
  json snap = json::parse(text);
  EXPECT_TRUE(snap["policy"].is_string());
  ASSERT_GE(snap["nodes"].size(), 2u);
  EXPECT_EQ(snap["nodes"][0]["id"], 0);
  EXPECT_TRUE(snap["nodes"][0]["parent"].is_null());
  int64_t tokens = 0;
  for (const json& n : snap["nodes"]) {
    for (const char* k : {"id", "parent", "token_count", "tokens", "text", "pages", "lock_ref",
                          "last_access", "hits", "pinned"}) {
      EXPECT_TRUE(n.contains(k)) << k;
    }
    EXPECT_EQ(n["tokens"].size(), n["token_count"].get<size_t>());
    EXPECT_EQ(n["lock_ref"], 0) << "idle server, nothing locked";
    tokens += n["token_count"].get<int64_t>();
  }
  EXPECT_EQ(tokens, snap["stats"]["cached_tokens"].get<int64_t>());
  EXPECT_GE(snap["next_seq"].get<int64_t>(), 1);
  json lean = json::parse(get("/v1/cache?tokens=0&text=0").second);
  EXPECT_FALSE(lean["nodes"][1].contains("tokens"));
  EXPECT_FALSE(lean["nodes"][1].contains("text"));
}

// A /v1/cache/events client on its own thread, collecting messages.
class Viewer {
 public:
  explicit Viewer(httplib::Client cli) : cli_(std::move(cli)) {
    thread_ = std::thread([this] {
      cli_.Get("/v1/cache/events", [this](const char* data, size_t n) {
        std::lock_guard<std::mutex> lock(mu_);
        buf_.append(data, n);
        for (size_t end; (end = buf_.find("\n\n")) != std::string::npos;) {
          for (const std::string& d : sse_data_lines(buf_.substr(0, end + 1))) {
            msgs_.push_back(json::parse(d));
          }
          buf_.erase(0, end + 2);
        }
        return !stop_;
      });
    });
  }
  ~Viewer() {
    stop_ = true;
    thread_.join();
  }
  std::vector<json> messages() {
    std::lock_guard<std::mutex> lock(mu_);
    return msgs_;
  }
  bool wait_for(const std::function<bool(const std::vector<json>&)>& done) {
    for (int i = 0; i < 200; ++i) {
      if (done(messages())) return true;
      std::this_thread::sleep_for(50ms);
    }
    return false;
  }

 private:
  httplib::Client cli_;
  std::thread thread_;
  std::mutex mu_;
  std::string buf_;
  std::vector<json> msgs_;
  std::atomic<bool> stop_{false};
};

bool has_type(const std::vector<json>& msgs, const std::string& type) {
  for (const json& m : msgs) {
    if (m["type"] == type) return true;
  }
  return false;
}

TEST_F(ServerTest, CacheEventsStartWithASnapshotAndServeManyViewers) {
  Viewer a(server_->client()), b(server_->client());
  auto got_snapshot = [](const std::vector<json>& m) { return !m.empty(); };
  ASSERT_TRUE(a.wait_for(got_snapshot));
  ASSERT_TRUE(b.wait_for(got_snapshot));
  ASSERT_EQ(post("/v1/chat/completions", chat_body()).first, 200);
  auto saw_request = [](const std::vector<json>& m) {
    return has_type(m, "insert") && has_type(m, "match") && has_type(m, "unlock");
  };
  for (Viewer* v : {&a, &b}) {
    ASSERT_TRUE(v->wait_for(saw_request));
    std::vector<json> msgs = v->messages();
    EXPECT_EQ(msgs[0]["type"], "snapshot");
    EXPECT_TRUE(msgs[0]["nodes"].is_array());
    int64_t last = msgs[0]["seq"];
    for (size_t i = 1; i < msgs.size(); ++i) {
      ASSERT_TRUE(msgs[i].contains("seq")) << msgs[i];
      EXPECT_GT(msgs[i]["seq"].get<int64_t>(), last) << "seq must increase";
      last = msgs[i]["seq"];
      if (msgs[i]["type"] == "insert") {
        // token_count 0: the key ended exactly at an existing node.
        EXPECT_EQ(msgs[i]["tokens"].size(), msgs[i]["token_count"].get<size_t>());
        EXPECT_TRUE(msgs[i]["text"].is_string());
      }
    }
  }
  EXPECT_EQ(metric(metrics(), "radixchat_cache_event_viewers"), 2);
}

TEST_F(ServerTest, MalformedJsonWrongTypesAndUnknownModelAre4xx) {
  auto [s1, b1] = post("/v1/chat/completions", std::string("{\"messages\": [oops"));
  EXPECT_EQ(s1, 400);
  expect_error_shape(b1);
  auto [s2, b2] = post("/v1/chat/completions", chat_body({{"max_tokens", "ten"}}));
  EXPECT_EQ(s2, 400);
  expect_error_shape(b2, "max_tokens");
  auto [s3, b3] = post("/v1/chat/completions", json{{"messages", 5}});
  EXPECT_EQ(s3, 400);
  expect_error_shape(b3, "messages");
  auto [s4, b4] = post("/v1/chat/completions", chat_body({{"n", 2}}));
  EXPECT_EQ(s4, 400);
  expect_error_shape(b4, "n");
  auto [s5, b5] = post("/v1/chat/completions", chat_body({{"model", "gpt-4o"}}));
  EXPECT_EQ(s5, 404);
  expect_error_shape(b5, "model");
  EXPECT_EQ(b5["error"]["code"], "model_not_found");
  auto [s6, b6] = post("/v1/completions", json{{"prompt", {1, 2, 99999999}}});
  EXPECT_EQ(s6, 400);  // token id outside the vocabulary
  expect_error_shape(b6);
  expect_healthy();
}

TEST_F(ServerTest, OversizeBodyIs413) {
  std::string big =
      R"({"messages":[{"role":"user","content":")" + std::string(2 << 20, 'a') + R"("}]})";
  auto [status, body] = post("/v1/chat/completions", big);
  EXPECT_EQ(status, 413);
  expect_error_shape(body);
  expect_healthy();
}

TEST_F(ServerTest, UnknownRouteAndWrongMethod) {
  auto [s1, b1] = get("/v1/nothing-here");
  EXPECT_EQ(s1, 404);
  expect_error_shape(json::parse(b1));
  auto [s2, b2] = get("/v1/chat/completions");
  EXPECT_EQ(s2, 405);
  expect_error_shape(json::parse(b2));
  expect_healthy();
}

TEST_F(ServerTest, ForeignHostHeaderIsRefusedWithoutAKey) {
  httplib::Client cli = server_->client();
  auto r = cli.Get("/v1/models", {{"Host", "evil.example"}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 403);
  expect_error_shape(json::parse(r->body));
}

TEST_F(ServerTest, ApiKeyIsRequiredOnEveryRoute) {
  ServerOptions o;
  o.api_key = "s3cret";
  LiveServer keyed(*engine_, o);
  for (const char* path : {"/v1/models", "/metrics", "/v1/cache", "/health", "/no/such/route"}) {
    httplib::Client none = keyed.client();
    auto r = none.Get(path);
    ASSERT_TRUE(r) << path;
    EXPECT_EQ(r->status, 401) << path;
    json body = json::parse(r->body);
    expect_error_shape(body);
    EXPECT_EQ(body["error"]["code"], "invalid_api_key");
    httplib::Client wrong = keyed.client("nope");
    EXPECT_EQ(wrong.Get(path)->status, 401) << path;
  }
  httplib::Client none = keyed.client();
  auto r = none.Post("/v1/chat/completions", chat_body().dump(), "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 401);
  httplib::Client right = keyed.client("s3cret");
  EXPECT_EQ(right.Get("/v1/models")->status, 200);
  auto ok = right.Post("/v1/chat/completions", chat_body().dump(), "application/json");
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200) << ok->body;
}

TEST_F(ServerTest, ClientDisconnectMidStreamCancelsAndFreesPages) {
  const double out_before = metric(metrics(), "radixchat_output_tokens_total");
  const int max_tokens = engine_->model_info().context_length - 32;
  httplib::Client cli = server_->client();
  int chunks = 0;
  auto r = post_streaming(cli, "/v1/completions",
                          {{"prompt", "Once upon a time"},
                           {"max_tokens", max_tokens},
                           {"ignore_eos", true},
                           {"stream", true},
                           {"temperature", 0}},
                          [&](const char*, size_t) { return ++chunks < 3; });
  EXPECT_FALSE(r);  // we hung up
  EXPECT_EQ(chunks, 3);
  const std::string m = wait_idle();
  EXPECT_EQ(metric(m, "radixchat_server_requests_active"), 0);
  EXPECT_EQ(metric(m, "radixchat_requests_running"), 0);
  EXPECT_EQ(metric(m, R"(radixchat_kv_pages{state="held"})"), 0);
  EXPECT_EQ(metric(m, R"(radixchat_kv_pages{state="protected"})"), 0);
  EXPECT_GE(metric(m, "radixchat_server_client_disconnects_total"), 1);
  EXPECT_GE(metric(m, R"(radixchat_server_requests_finished_total{reason="cancelled"})"), 1);
  // Stopped early: far fewer tokens than asked for.
  EXPECT_LT(metric(m, "radixchat_output_tokens_total") - out_before, max_tokens);
  json snap = json::parse(get("/v1/cache?tokens=0&text=0&pages=0").second);
  for (const json& n : snap["nodes"]) EXPECT_EQ(n["lock_ref"], 0);
  expect_healthy();
}

TEST_F(ServerTest, ConcurrentStreams) {
  std::vector<std::thread> clients;
  std::atomic<int> done{0};
  for (int i = 0; i < 6; ++i) {
    clients.emplace_back([&, i] {
      httplib::Client cli = server_->client();
      json body = chat_body({{"stream", true}, {"seed", i}, {"temperature", 0.7}});
      auto r = cli.Post("/v1/chat/completions", body.dump(), "application/json");
      if (r && r->status == 200 && sse_data_lines(r->body).back() == "[DONE]") done++;
    });
  }
  for (auto& t : clients) t.join();
  EXPECT_EQ(done, 6);
  wait_idle();
}

TEST_F(ServerTest, ShutdownEndsStreamsInFlightAndFreesPages) {
  ServerOptions o;
  // Far shorter than the request: the bundled model can finish a whole
  // context's worth of tokens within a few hundred ms, and a stream that
  // ends by itself inside the grace is not ended by the shutdown.
  o.shutdown_grace = 10ms;
  auto live = std::make_unique<LiveServer>(*engine_, o);
  std::atomic<int> chunks{0};
  std::string body;
  std::thread client([&] {
    httplib::Client cli = live->client();
    post_streaming(cli, "/v1/completions",
                   {{"prompt", "Once upon a time"},
                    {"max_tokens", engine_->model_info().context_length - 32},
                    {"ignore_eos", true},
                    {"stream", true}},
                   [&](const char* d, size_t n) {
                     body.append(d, n);
                     chunks++;
                     return true;
                   });
  });
  for (int i = 0; i < 200 && chunks < 2; ++i) std::this_thread::sleep_for(10ms);
  const auto t0 = std::chrono::steady_clock::now();
  live->stop();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 5s);
  client.join();
  std::vector<std::string> lines = sse_data_lines(body);
  ASSERT_GE(lines.size(), 2u);
  EXPECT_EQ(lines.back(), "[DONE]");
  EXPECT_NE(lines[lines.size() - 2].find("shutting down"), std::string::npos)
      << lines[lines.size() - 2];
  // The engine released the request's pages.
  for (int i = 0; i < 100; ++i) {
    const EngineStats s = engine_->stats();
    if (s.requests_running == 0 && s.cache.held_pages == 0 && s.cache.protected_pages == 0) break;
    std::this_thread::sleep_for(20ms);
  }
  EXPECT_EQ(engine_->stats().cache.held_pages, 0);
  EXPECT_EQ(engine_->stats().cache.protected_pages, 0);
}

}  // namespace
}  // namespace rc::server::testing
