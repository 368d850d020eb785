// Token-exact history through the Engine: a temperature-1 chat
// whose replies come back as text (as a server client sends them) computes
// only the new user turn and the template's markers each turn, because the
// engine renders each reply as the ids it generated; and a cached and an
// uncached engine still generate the same tokens.
#include <gtest/gtest.h>

#include <cstdio>

#include "engine-reply.h"
#include "radixchat/engine.h"

namespace rc {
namespace {

using test::Reply;

Reply run(Engine& engine, const std::vector<ChatMessage>& messages, uint64_t seed) {
  GenerateRequest req;
  req.messages = messages;
  req.max_tokens = 48;
  req.sampling.temperature = 1.0f;
  req.sampling.seed = seed;
  return test::run_request(engine, std::move(req));
}

std::unique_ptr<Engine> make_engine(const std::string& cache) {
  EngineConfig cfg;
  cfg.n_threads = 2;
  cfg.cache = parse_cache_setting(cache).value();
  auto e = Engine::create(cfg);
  EXPECT_TRUE(e.ok()) << e.status().to_string();
  return e.ok() ? std::move(e.value()) : nullptr;
}

const char* kUser[] = {"Tell me about the cache.", "Why a tree?", "And the pages?",
                       "What is evicted first?", "Thanks, one more thing?"};

TEST(ExactHistory, TemperatureOneChatComputesOnlyTheNewTurn) {
  std::unique_ptr<Engine> engine = make_engine("radix");
  ASSERT_TRUE(engine);
  std::vector<ChatMessage> history = {{"system", "You are a helpful assistant."}};
  Reply prev;
  int reencoded_differently = 0;
  for (int turn = 0; turn < 5; ++turn) {
    history.push_back({"user", kUser[turn]});
    const Reply r = run(*engine, history, 100 + turn);
    ASSERT_EQ(r.reason == FinishReason::stop || r.reason == FinishReason::length, true);
    if (turn > 0) {
      // Everything the previous turn computed is cached: its prompt and
      // every reply token but the last sampled one (whose K/V was never
      // computed) ...
      EXPECT_EQ(r.metrics.cached_tokens,
                prev.metrics.prompt_tokens + prev.metrics.output_tokens - 1)
          << "turn " << turn;
      // ... and what is computed is the new user turn with the markers
      // around it, counted independently by the tokenizer (markers parsed
      // as special), plus the last reply token when the reply hit the
      // length limit (its end-of-turn marker was never sampled).
      const auto tail = engine->tokenize(
          std::string("<|end|>\n<|user|>\n") + kUser[turn] + "<|end|>\n<|assistant|>\n", false);
      ASSERT_TRUE(tail.ok());
      const int last = prev.reason == FinishReason::length ? 1 : 0;
      EXPECT_EQ(r.metrics.computed_tokens, static_cast<int>(tail.value().size()) + last)
          << "turn " << turn;
    }
    // The text sent back would re-encode to other ids at least once.
    auto again = engine->tokenize(r.text, false);
    if (again.ok() && *again != r.tokens) ++reencoded_differently;
    prev = r;
    history.push_back({"assistant", r.text});
  }
  std::printf("%d of 5 replies re-encode to other ids than generated\n", reencoded_differently);
  EXPECT_GE(reencoded_differently, 1) << "the test no longer exercises the splice";
}

TEST(ExactHistory, CachedAndUncachedGenerateTheSameTokens) {
  // Radix with replies sent back as text (the engine recalls their ids);
  // off with the ids passed explicitly: the same prompts, the same tokens.
  std::unique_ptr<Engine> radix = make_engine("radix");
  std::unique_ptr<Engine> off = make_engine("off");
  ASSERT_TRUE(radix && off);
  std::vector<ChatMessage> a = {{"system", "Be brief."}}, b = a;
  for (int turn = 0; turn < 4; ++turn) {
    a.push_back({"user", kUser[turn]});
    b.push_back({"user", kUser[turn]});
    const Reply ra = run(*radix, a, 7 + turn);
    const Reply rb = run(*off, b, 7 + turn);
    ASSERT_EQ(ra.tokens, rb.tokens) << "turn " << turn;
    EXPECT_EQ(ra.metrics.prompt_tokens, rb.metrics.prompt_tokens);
    a.push_back({"assistant", ra.text});
    ChatMessage with_ids{"assistant", rb.text};
    with_ids.tokens = rb.tokens;  // the streamed ids: an end-of-turn id is never streamed
    b.push_back(with_ids);
  }
  EXPECT_EQ(off->stats().cached_tokens, 0u);
  EXPECT_GT(radix->stats().cached_tokens, 0u);
}

TEST(ExactHistory, RenderedPromptStartsWithThePreviousPromptAndReply) {
  std::unique_ptr<Engine> engine = make_engine("radix");
  ASSERT_TRUE(engine);
  std::vector<ChatMessage> history = {{"user", kUser[0]}};
  const auto before = engine->render_chat(history);
  ASSERT_TRUE(before.ok());
  const Reply r = run(*engine, history, 3);
  const std::vector<int32_t>& generated = r.tokens;
  history.push_back({"assistant", r.text});
  history.push_back({"user", kUser[1]});
  auto next = engine->render_chat(history);
  ASSERT_TRUE(next.ok());
  ASSERT_GE(next->size(), before->size() + generated.size());
  EXPECT_TRUE(std::equal(before->begin(), before->end(), next->begin()));
  EXPECT_TRUE(std::equal(generated.begin(), generated.end(), next->begin() + before->size()));
  // The same text, edited by one character, is not the generated reply.
  history[1].content += "!";
  auto edited = engine->render_chat(history);
  ASSERT_TRUE(edited.ok());
  EXPECT_NE(engine->detokenize(*edited), engine->detokenize(*next));
}

}  // namespace
}  // namespace rc
