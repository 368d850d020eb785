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
};

// How many tokens a request may draft next: starts small, doubles while
// whole drafts are accepted, falls back to what was accepted otherwise, and
// asks for a longer prompt-lookup match after drafts that failed at once,
// so a request with nothing to match stops paying for verification.
class DraftBudget {
 public:
  static constexpr int kMaxTokens = 12;
  static constexpr int kMinMatch = 3;  // prompt lookup: tokens that must agree
  static constexpr int kMaxMatch = 8;

  int limit() const { return limit_; }
  int min_match() const { return min_match_; }
  // After a draft of `drafted` tokens of which the first `accepted` were kept.
  void update(int drafted, int accepted);

 private:
  int limit_ = 4;
  int min_match_ = kMinMatch;
};

// Up to max_tokens draft tokens for `sequence` (prompt + output so far, at
// least one token): the cache's continuation when it has one, else prompt
// lookup with matches of at least min_match tokens (longest match wins,
// the most recent occurrence among equals). Empty when nothing matches.
Draft propose_draft(const KvCache& cache, std::span<const int32_t> sequence, int max_tokens,
                    int min_match);

}  // namespace rc::runtime
