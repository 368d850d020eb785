// Draft tokens for speculative decoding, taken from what the engine has
// already seen instead of from a draft model
// (docs/architecture.md section 20):
//   tree    the cache tree's continuation of the request's whole sequence
//           (prompt and output so far): what an earlier request that began
//           exactly so went on with — a regenerated reply, the sibling of
//           an edited branch, a repeated agent step;
//   prompt  the tokens that followed the most recent earlier occurrence of
//           the sequence's last few tokens within the sequence itself
//           (prompt lookup): text the reply copies from the prompt.
// The scheduler verifies a draft in one forward pass and keeps the longest
// prefix the model itself produces (scheduler.h), so a draft only changes
// speed, never tokens.
//
// Threading: engine thread only, like the cache it reads.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "radixchat/cache.h"

namespace rc::runtime {

enum class DraftSource { none, tree, prompt };

struct Draft {
  std::vector<int32_t> tokens;
  DraftSource source = DraftSource::none;
  // tree: the deepest node the tokens come from (KvCache::note_draft names
  // it after verification); id kNoNode otherwise.
  NodeHandle node{kNoNode, 0};
};

// How many tokens a request may draft next: starts at half the most,
// doubles while whole drafts are accepted, falls back to what was accepted
// otherwise, and asks for a two tokens longer prompt-lookup match after a
// draft that failed at once, so a request with nothing to match soon stops
// paying for verification. On the CPU a verifying step costs a few decode
// steps whatever its length up to 16 tokens (the prefill kernels take 16
// tokens per pass), so drafts of fewer than kMinTokens are not verified.
class DraftBudget {
 public:
  static constexpr int kMaxTokens = 15;
  static constexpr int kMinTokens = 2;
  static constexpr int kMinMatch = 4;  // prompt lookup: tokens that must agree
  static constexpr int kMaxMatch = 8;

  int limit() const { return limit_; }
  int min_match() const { return min_match_; }
  // After a draft of `drafted` tokens of which the first `accepted` were kept.
  void update(int drafted, int accepted);

 private:
  int limit_ = (kMaxTokens + 1) / 2;
  int min_match_ = kMinMatch;
};

// Up to max_tokens draft tokens for `sequence` (prompt + output so far, at
// least one token): the cache's continuation when it has one, else prompt
// lookup with matches of at least min_match tokens (longest match wins,
// the most recent occurrence among equals). Empty when nothing matches.
Draft propose_draft(const KvCache& cache, std::span<const int32_t> sequence, int max_tokens,
                    int min_match);

}  // namespace rc::runtime
