// Token-exact history (docs/architecture.md section 10) through the
// server: a client that sends back the assistant
// message it just received, unchanged, at temperature 1, gets the whole
// previous prompt and reply from the cache (usage's cached_tokens), because
// the engine renders that reply as the ids it generated, not as re-encoded
// text.
#include <gtest/gtest.h>

#include "server-test-util.h"
#include "skip-or-fail.h"

namespace rc::server::testing {
namespace {

using nlohmann::json;

json post_chat(LiveServer& server, const json& body) {
  httplib::Client cli = server.client();
  auto r = cli.Post("/v1/chat/completions", body.dump(), "application/json");
  EXPECT_TRUE(r) << httplib::to_string(r.error());
  if (!r) return json();
  EXPECT_EQ(r->status, 200) << r->body;
  return json::parse(r->body, nullptr, false);
}

TEST(ServerExactHistory, AssistantMessageSentBackUnchangedHitsAtTemperatureOne) {
  std::string why;
  Engine* engine = shared_engine(&why);
  if (!engine) RC_SKIP_OR_FAIL("model not available: " << why);
  LiveServer server(*engine, ServerOptions{});
  // Several short chats; a sampled reply is often not the tokenizer's own
  // split of its text (counted below, so the test knows it exercised that).
  int reencode_differently = 0;
  for (int chat = 0; chat < 8; ++chat) {
    json messages = {{{"role", "system"}, {"content", "You answer at length."}},
                     {{"role", "user"},
                      {"content", "Question " + std::to_string(chat) +
                                      ": describe a radix tree and its pages."}}};
    const json body = {{"model", engine->model_info().name},
                       {"messages", messages},
                       {"max_tokens", 64},
                       {"temperature", 1.0},
                       {"seed", 40 + chat}};
    const json first = post_chat(server, body);
    ASSERT_TRUE(first.is_object());
    const std::string reply = first["choices"][0]["message"]["content"];
    const int prompt = first["usage"]["prompt_tokens"];
    const int completion = first["usage"]["completion_tokens"];
    ASSERT_GT(completion, 1);
    auto reencoded = engine->tokenize(reply, false);
    ASSERT_TRUE(reencoded.ok());
    // completion_tokens counts the end-of-turn token, which streams no text.
    const bool ended = first["choices"][0]["finish_reason"] == "stop";
    if (static_cast<int>(reencoded.value().size()) != completion - (ended ? 1 : 0)) {
      ++reencode_differently;
    }

    messages.push_back({{"role", "assistant"}, {"content", reply}});
    messages.push_back({{"role", "user"}, {"content", "Go on."}});
    json next_body = body;
    next_body["messages"] = messages;
    next_body["max_tokens"] = 1;
    const json next = post_chat(server, next_body);
    ASSERT_TRUE(next.is_object());
    // The previous prompt and every reply token whose K/V was computed
    // (all but the last sampled one) come from the cache.
    EXPECT_EQ(next["usage"]["prompt_tokens_details"]["cached_tokens"].get<int>(),
              prompt + completion - 1)
        << "chat " << chat << ", reply: " << reply;
  }
  std::printf("%d of 8 replies re-encode to another number of ids\n", reencode_differently);
  EXPECT_GE(reencode_differently, 1) << "the test no longer exercises token-exact history";
}

}  // namespace
}  // namespace rc::server::testing
