// fit_context() with a stand-in token counter: what each policy keeps, that
// the kept history only changes at a cut (so turns in between extend the
// previous prompt and hit the cache), and the errors.
#include "radixchat/context-fit.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace rc {
namespace {

// 2 tokens of markers per message plus one per character: enough to make
// the arithmetic checkable by hand.
Result<int> count(const std::vector<ChatMessage>& m) {
  int n = 0;
  for (const ChatMessage& x : m) n += 2 + static_cast<int>(x.content.size());
  return n;
}

std::vector<ChatMessage> chat(int turns, int user_len, int reply_len) {
  std::vector<ChatMessage> m = {{"system", std::string(8, 's')}};
  for (int i = 0; i < turns; ++i) {
    m.push_back({"user", std::string(user_len, 'a' + i % 26)});
    if (i + 1 < turns) m.push_back({"assistant", std::string(reply_len, 'A' + i % 26)});
  }
  return m;
}

bool is_prefix(const std::vector<ChatMessage>& a, const std::vector<ChatMessage>& b) {
  if (a.size() > b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].role != b[i].role || a[i].content != b[i].content) return false;
  }
  return true;
}

TEST(ContextFit, FittingChatsAreSentWhole) {
  for (ContextPolicy p :
       {ContextPolicy::stop, ContextPolicy::truncate_middle, ContextPolicy::rolling_window}) {
    auto f = fit_context(chat(3, 10, 10), 1000, p, count);
    ASSERT_TRUE(f.ok());
    EXPECT_EQ(f->messages.size(), 6u);
    EXPECT_EQ(f->dropped, 0);
    EXPECT_FALSE(f->prefix_changed);
    EXPECT_EQ(f->prompt_tokens, 10 + 5 * 12);
  }
}

TEST(ContextFit, StopRefusesWithAnExplanation) {
  auto f = fit_context(chat(20, 10, 10), 100, ContextPolicy::stop, count);
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.status().code(), StatusCode::too_long);
  EXPECT_NE(f.status().message().find("rolling-window"), std::string::npos);
}

// Turn by turn, as a chat grows: the kept history extends the previous
// turn's except where the cut moved, cuts are rare, and every prompt fits.
void check_growing_chat(ContextPolicy p, size_t head) {
  const int budget = 200;
  std::vector<ChatMessage> prev;
  int cuts = 0, last_dropped = 0;
  for (int turns = 1; turns <= 60; ++turns) {
    const std::vector<ChatMessage> m = chat(turns, 10, 20);
    auto f = fit_context(m, budget, p, count);
    ASSERT_TRUE(f.ok()) << f.status().to_string();
    EXPECT_LE(f->prompt_tokens, budget);
    EXPECT_EQ(*count(f->messages), f->prompt_tokens);
    EXPECT_EQ(f->messages.back().content, m.back().content);
    EXPECT_EQ(f->messages.size() + f->dropped, m.size());
    // The kept head is always there (a short chat is all head).
    const size_t kept_head = std::min(head, m.size());
    ASSERT_GE(f->messages.size(), kept_head) << turns;
    for (size_t i = 0; i < kept_head; ++i) EXPECT_EQ(f->messages[i].content, m[i].content);
    // Whole turns are dropped: the first message after the head is a user's.
    if (f->dropped > 0) EXPECT_EQ(f->messages[head].role, "user");
    // Previous prompt + its reply is a prefix now, unless the cut moved.
    std::vector<ChatMessage> extended = prev;
    if (!prev.empty()) extended.push_back(m[m.size() - 2]);
    EXPECT_EQ(f->prefix_changed, f->dropped != last_dropped) << turns;
    if (!f->prefix_changed && !prev.empty()) EXPECT_TRUE(is_prefix(extended, f->messages)) << turns;
    cuts += f->prefix_changed;
    last_dropped = f->dropped;
    prev = f->messages;
  }
  // One turn (user 12 + reply 22 tokens) of 34; about half the budget is
  // freed at each cut, so a cut every ~3 turns at most, not every turn.
  EXPECT_GT(cuts, 3);
  EXPECT_LT(cuts, 25);
}

TEST(ContextFit, RollingWindowKeepsTheSystemPromptAndCutsInSteps) {
  check_growing_chat(ContextPolicy::rolling_window, 1);
}

TEST(ContextFit, TruncateMiddleKeepsTheFirstExchange) {
  check_growing_chat(ContextPolicy::truncate_middle, 3);
  auto f = fit_context(chat(30, 10, 20), 200, ContextPolicy::truncate_middle, count);
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->messages[1].content, std::string(10, 'a'));
  EXPECT_EQ(f->messages[2].content, std::string(20, 'A'));
}

TEST(ContextFit, SameHistorySameCut) {
  // No state: a replay of the same history always gives the same answer.
  const std::vector<ChatMessage> m = chat(40, 10, 20);
  auto a = fit_context(m, 200, ContextPolicy::rolling_window, count);
  auto b = fit_context(m, 200, ContextPolicy::rolling_window, count);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->dropped, b->dropped);
}

TEST(ContextFit, ALastMessageThatCannotFitIsAnError) {
  std::vector<ChatMessage> m = chat(3, 10, 10);
  m.back().content = std::string(500, 'x');
  auto f = fit_context(m, 200, ContextPolicy::rolling_window, count);
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.status().code(), StatusCode::too_long);
  EXPECT_FALSE(fit_context({}, 200, ContextPolicy::rolling_window, count).ok());
  // A counter error is passed on.
  auto bad = fit_context(m, 200, ContextPolicy::rolling_window, [](const auto&) -> Result<int> {
    return Status(StatusCode::invalid_argument, "bad role");
  });
  EXPECT_EQ(bad.status().message(), "bad role");
  EXPECT_EQ(parse_context_policy("rolling-window"), ContextPolicy::rolling_window);
  EXPECT_EQ(parse_context_policy("truncate-middle"), ContextPolicy::truncate_middle);
  EXPECT_EQ(parse_context_policy("stop"), ContextPolicy::stop);
  EXPECT_FALSE(parse_context_policy("middle").has_value());
}

}  // namespace
}  // namespace rc
