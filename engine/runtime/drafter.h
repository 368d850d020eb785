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

// How many tokens a request may draft next, for each source. A budget
// starts at kStartTokens, doubles while whole drafts are kept, falls back to
// what was kept otherwise, and a prompt-lookup draft that failed at once
// asks for a two tokens longer match next time, so a request with nothing
// to match soon stops paying for verification. Drafts of fewer than
// kMinTokens are not verified: on the CPU a verifying step of two tokens
// already costs more than two decode steps.
//
// A greedy request's tree budget starts at the most. The tree's
// continuation of the request's whole sequence is what an earlier request
// decoded from exactly this point, and greedy decoding of the same tokens
// gives the same tokens again (section 7), unless that request sampled; a
// long verifying step costs far less per token than a short one (the
// prefill kernels), and a failure costs one step before the budget falls
// back.
class DraftBudget {
 public:
  static constexpr int kMaxTokens = 63;  // with the step's last token, 64 logit rows
  static constexpr int kStartTokens = 8;
  static constexpr int kMinTokens = 2;
  static constexpr int kMinMatch = 4;  // prompt lookup: tokens that must agree
  static constexpr int kMaxMatch = 8;

  explicit DraftBudget(bool greedy = false)
      : greedy_(greedy), tree_limit_(greedy ? kMaxTokens : kStartTokens) {}

  bool greedy() const { return greedy_; }

  int limit(DraftSource source) const {
    return source == DraftSource::tree ? tree_limit_ : prompt_limit_;
  }
  int min_match() const { return min_match_; }
  // After a draft from `source` of `drafted` tokens of which the first
  // `accepted` were kept.
  void update(DraftSource source, int drafted, int accepted);

 private:
  bool greedy_;
  int tree_limit_;
  int prompt_limit_ = kStartTokens;
  int min_match_ = kMinMatch;
};

// A draft of at most max_tokens for `sequence` (prompt + output so far, at
// least one token), within the budget's limit for its source: the cache's
// continuation when it has one and the tree budget allows kMinTokens, else
// prompt lookup with matches of at least budget.min_match() tokens (longest
// match wins, the most recent occurrence among equals). Empty when nothing
// matches.
Draft propose_draft(const CacheDraftSource& cache, std::span<const int32_t> sequence,
                    const DraftBudget& budget, int max_tokens);

}  // namespace rc::runtime
