// A long multi-turn chat on the bundled model, far past its 1024-token
// context, under the rolling-window policy: each turn's prompt is the cut
// history fit_context() returns, and the per-reply metrics show the cache
// hitting the whole previous prompt on every turn that did not move the cut.
#include <gtest/gtest.h>

#include <cstdio>

#include "engine-reply.h"
#include "radixchat/context-fit.h"
#include "radixchat/engine.h"

namespace rc {
namespace {

using test::Reply;

Reply run(Engine& engine, std::vector<ChatMessage> messages, int max_tokens) {
  GenerateRequest req;
  req.messages = std::move(messages);
  req.max_tokens = max_tokens;
  return test::run_request(engine, std::move(req));
}

TEST(ContextOverflow, LongChatPastTheContextKeepsHittingTheCache) {
  EngineConfig cfg;
  cfg.n_threads = 2;
  auto created = Engine::create(cfg);
  ASSERT_TRUE(created.ok()) << created.status().to_string();
  Engine& engine = **created;
  const int context = engine.model_info().context_length;
  ASSERT_EQ(context, 1024);
  const int max_tokens = 24;
  const int budget = context - max_tokens;
  const TokenCounter count = chat_token_counter(engine);
  Result<int> system_tokens = count({{"system", "You are a helpful assistant."}});
  ASSERT_TRUE(system_tokens.ok());

  std::vector<ChatMessage> history = {{"system", "You are a helpful assistant."}};
  int cuts = 0, prev_prompt = 0, total_prompt = 0, total_cached = 0;
  for (int turn = 0; turn < 24; ++turn) {
    history.push_back({"user", "Turn " + std::to_string(turn) +
                                   ": tell me one more thing about the cache, the tree, the "
                                   "pages and the way a prefix is shared between requests."});
    Result<ContextFit> fit = fit_context(history, budget, ContextPolicy::rolling_window, count);
    ASSERT_TRUE(fit.ok()) << fit.status().to_string();
    const Reply r = run(engine, fit->messages, max_tokens);
    ASSERT_NE(r.reason, FinishReason::error);
    EXPECT_EQ(r.metrics.prompt_tokens, fit->prompt_tokens);
    EXPECT_LE(r.metrics.prompt_tokens, budget);
    if (turn > 0 && !fit->prefix_changed) {
      // Everything the previous turn sent is cached (the reply may add more).
      EXPECT_GE(r.metrics.cached_tokens, prev_prompt) << "turn " << turn;
    } else if (turn > 0) {
      // The cut moved: at least the system prompt still hits.
      EXPECT_GE(r.metrics.cached_tokens, *system_tokens - 1) << "turn " << turn;
      ++cuts;
    }
    if (turn > 0) {
      total_prompt += r.metrics.prompt_tokens;
      total_cached += r.metrics.cached_tokens;
    }
    prev_prompt = r.metrics.prompt_tokens;
    history.push_back({"assistant", r.text});
  }
  std::printf("24 turns, %d cuts: %d of %d prompt tokens cached (turns 2-24)\n", cuts, total_cached,
              total_prompt);
  // The chat went past the context (some turns were dropped), the cut moved
  // only now and then, and most prompt tokens came from the cache.
  EXPECT_GE(cuts, 1);
  EXPECT_LE(cuts, 6);
  EXPECT_GT(double(total_cached) / total_prompt, 0.7)
      << total_cached << " of " << total_prompt << " prompt tokens cached";
}

}  // namespace
}  // namespace rc
