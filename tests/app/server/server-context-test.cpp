// Chats longer than the context through the server: the default policy
// drops whole old turns and says so in a header (and the next turn hits the
// cache again); `stop` answers 400 context_length_exceeded. /v1/models says
// which chat template was picked and how.
#include <gtest/gtest.h>

#include "server-test-util.h"
#include "skip-or-fail.h"

namespace rc::server::testing {
namespace {

using nlohmann::json;

// A chat of `turns` exchanges (about 60 tokens each) and a last question.
json long_chat(const std::string& model, int turns) {
  json messages = json::array({{{"role", "system"}, {"content", "You are a helpful assistant."}}});
  for (int i = 0; i < turns; ++i) {
    messages.push_back({{"role", "user"},
                        {"content", "Question " + std::to_string(i) +
                                        ": how does the radix cache share a prefix between "
                                        "two requests that start the same way?"}});
    messages.push_back({{"role", "assistant"},
                        {"content",
                         "It matches the longest cached prefix, locks that node, "
                         "and computes only the rest of the prompt."}});
  }
  messages.push_back({{"role", "user"}, {"content", "And then?"}});
  return {{"model", model}, {"messages", messages}, {"max_tokens", 8}, {"temperature", 0}};
}

int dropped_header(const httplib::Response& r) {
  const std::string v = r.get_header_value("X-RadixChat-Dropped-Messages");
  return v.empty() ? 0 : std::stoi(v);
}

httplib::Result post(LiveServer& s, const json& body) {
  httplib::Client cli = s.client();
  return cli.Post("/v1/chat/completions", body.dump(), "application/json");
}

TEST(ServerContext, LongChatsDropOldTurnsAndSaySo) {
  std::string why;
  Engine* engine = shared_engine(&why);
  if (!engine) RC_SKIP_OR_FAIL("model not available: " << why);
  LiveServer server(*engine, ServerOptions{});
  const std::string model = engine->model_info().name;

  auto r = post(server, long_chat(model, 30));
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  const int dropped = dropped_header(*r);
  EXPECT_GT(dropped, 0);
  EXPECT_EQ(dropped % 2, 0) << "whole turns (a question and its answer) are dropped";
  json body = json::parse(r->body);
  EXPECT_LE(body["usage"]["prompt_tokens"].get<int>(), engine->model_info().context_length);

  // One more exchange: the same cut, so the previous prompt is all cached.
  const int before = body["usage"]["prompt_tokens"].get<int>();
  json next = long_chat(model, 30);
  next["messages"].back() = {{"role", "user"}, {"content", "And then?"}};
  next["messages"].push_back(
      {{"role", "assistant"}, {"content", body["choices"][0]["message"]["content"]}});
  next["messages"].push_back({{"role", "user"}, {"content", "Thanks."}});
  auto r2 = post(server, next);
  ASSERT_TRUE(r2);
  ASSERT_EQ(r2->status, 200) << r2->body;
  EXPECT_EQ(dropped_header(*r2), dropped);
  EXPECT_FALSE(r2->has_header("X-RadixChat-Context-Cut"));
  json b2 = json::parse(r2->body);
  EXPECT_GE(b2["usage"]["prompt_tokens_details"]["cached_tokens"].get<int>(), before);

  // A short chat is untouched.
  json shortc = long_chat(model, 1);
  auto r3 = post(server, shortc);
  ASSERT_TRUE(r3);
  EXPECT_EQ(r3->status, 200);
  EXPECT_FALSE(r3->has_header("X-RadixChat-Dropped-Messages"));
}

TEST(ServerContext, StopPolicyRefusesWithContextLengthExceeded) {
  std::string why;
  Engine* engine = shared_engine(&why);
  if (!engine) RC_SKIP_OR_FAIL("model not available: " << why);
  ServerOptions o;
  o.context_overflow = "stop";
  LiveServer server(*engine, o);
  auto r = post(server, long_chat(engine->model_info().name, 30));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);
  json body = json::parse(r->body);
  EXPECT_EQ(body["error"]["code"], "context_length_exceeded") << body;

  httplib::Client cli = server.client();
  auto m = cli.Get("/v1/models");
  ASSERT_TRUE(m);
  json models = json::parse(m->body);
  const json& d = models["data"][0];
  EXPECT_EQ(d["chat_template"], engine->model_info().chat_template);
  EXPECT_NE(d["chat_template_detail"].get<std::string>().find("tokenizer.chat_template"),
            std::string::npos)
      << d;
  EXPECT_EQ(d["chat_template_notice"], "");
  EXPECT_EQ(d["context_overflow"], "stop");
}

}  // namespace
}  // namespace rc::server::testing
