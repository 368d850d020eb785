// What to send when a chat no longer fits the context (docs/architecture.md
// section 10; LM Studio's stop / truncate middle / rolling window).
//
// Cache-friendly cutting. Dropping the oldest message every turn would
// change the first kept message every turn, so only the system prompt would
// ever hit the radix cache. Instead the cut point moves in steps: when the
// conversation overflows, whole old turns (a user message and the replies
// after it) are dropped until the kept part fills at most `low_water` of the
// budget; the following turns append to that same kept history, which is
// byte-identical turn to turn and hits the cache, until it overflows again.
// The cut is not stored anywhere: fit_context() replays the conversation's
// turns from the start, so the same history and budget always give the same
// cut (after an app restart, in the server, for another branch).
//
// Thread safety: pure functions; `count` is called on the caller's thread.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "radixchat/engine.h"
#include "radixchat/status.h"

namespace rc {

enum class ContextPolicy {
  stop,             // refuse: the user starts a new chat or changes the policy
  truncate_middle,  // keep the system prompt and the first exchange, drop after it
  rolling_window,   // keep the system prompt, drop the oldest turns (the default)
};

// "stop", "truncate-middle", "rolling-window".
const char* context_policy_name(ContextPolicy p);
std::optional<ContextPolicy> parse_context_policy(std::string_view name);
constexpr const char* kContextPolicyNames = "stop, truncate-middle, rolling-window";

struct ContextFit {
  std::vector<ChatMessage> messages;  // what to render and send
  int dropped = 0;                    // messages left out
  // The cut moved at this turn: the kept history no longer starts as it did
  // last turn, so the cached prefix (beyond the system prompt / first
  // exchange) stops matching once. False on turns that only append.
  bool prefix_changed = false;
  int prompt_tokens = 0;  // count(messages)
};

// Tokens a conversation renders to (e.g. Engine::render_chat(m)->size()).
using TokenCounter = std::function<Result<int>(const std::vector<ChatMessage>&)>;
// The counter for an engine's chat template: render_chat(m)->size(). The
// engine must outlive it.
TokenCounter chat_token_counter(const Engine& engine);

// `messages`: an optional system message first, the last message the one
// being answered. Fits them into `budget` tokens under `policy`. Errors:
// too_long when the policy is stop and the chat does not fit, or when even
// the kept head plus the last message does not fit (the message says what
// to do); whatever `count` returns.
Result<ContextFit> fit_context(const std::vector<ChatMessage>& messages, int budget,
                               ContextPolicy policy, const TokenCounter& count,
                               double low_water = 0.5);

}  // namespace rc
