// Why did this request miss: a prompt against the best cached path at the
// moment it was matched.
//
// The prompt is walked down the tree as far as it matches (token by token,
// regardless of page alignment): that is the divergence index d. Below that
// point, every cached continuation (up to a bound) is compared with the rest
// of the prompt: the first place, within `window` tokens on either side,
// where `anchor` tokens agree again realigns them, and the agreeing run from
// there is what the cache held beyond the divergent span. The continuation
// with the longest run is the best cached path.
//
// Every chat prompt ends with the template's fixed closing tokens (end of
// the user's turn, the assistant's header), and so does every cached chat
// path: a run that ends with the prompt and is no longer than those tokens
// says nothing about the user's text, so it is not counted as agreeing again.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "radixchat/cache.h"
#include "radixchat/engine.h"

namespace rc::recording {

struct MissOptions {
  int window = 64;      // span lengths searched on each side
  int anchor = 4;       // tokens that must agree to call it realigned
  int max_paths = 256;  // cached continuations compared
  // The chat template's fixed closing tokens (template_closing_tokens);
  // 0 when the prompts are not chats or the template is unknown.
  int closing_tokens = 0;
};

struct MissExplanation {
  int64_t prompt_tokens = 0;
  int64_t divergence = 0;            // prompt tokens on the cached path (token level)
  bool realigned = false;            // a cached continuation agrees again after a span
  std::vector<int32_t> prompt_span;  // prompt[d, d + i): what this prompt had
  std::vector<int32_t> cached_span;  // the cached path's tokens there instead
  int64_t run_after = 0;             // agreeing tokens after the spans
  // Prompt tokens the cache would have served had the span matched:
  // divergence + span + run_after (== divergence when not realigned).
  int64_t would_reuse = 0;
  std::vector<int32_t> cached_next;  // first tokens of the best path below d
};

// How many tokens every chat prompt of `engine`'s template ends with,
// whatever the user wrote: the longest common suffix of two one-message
// chats. 0 when the template renders nothing. Any thread the engine allows.
int template_closing_tokens(const Engine& engine);

// The meta key under which a recorder of chat prompts keeps its template's
// template_closing_tokens, so that cache-report and the panel's Request tab
// count "agree again" as the live panel does, whatever model is loaded.
inline constexpr const char* kClosingTokensMeta = "template_closing_tokens";
// meta(kClosingTokensMeta) when a recorder wrote a count, else `otherwise`.
int recorded_closing_tokens(const std::map<std::string, std::string>& meta, int otherwise);

// `tree` as a snapshot (nodes sorted by id, nodes[0] the root).
MissExplanation explain_miss(const CacheSnapshot& tree, const std::vector<int32_t>& prompt,
                             const MissOptions& options = {});

}  // namespace rc::recording
