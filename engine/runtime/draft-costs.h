// Whether a draft is worth verifying, from what this engine has measured:
// how long its steps take by their token count, and how often each draft
// source's tokens were kept (docs/architecture.md section 20).
//
// A step that decodes n requests (n tokens) gives n tokens. Adding a
// draft of k tokens to one of them makes it a step of n + k tokens that
// gives n + E(k), where E(k) = a + a^2 + ... + a^k is the expected number
// of draft tokens kept when each is kept with probability a. The draft is
// worth it when (n + E(k)) / time(n + k) >= n / time(n): the step's rate
// of tokens, not the drafting request's alone, so in a batch a draft pays
// only for what it adds to the step (a verifying step costs more than a
// decode step: on the CPU, several decode steps even for small k). So
// drafts whose tokens are seldom kept (prompt lookup over text the reply
// does not copy) stop, and a model whose decode step is cheap next to its
// prefill drafts only what is likely kept.
//
// Unmeasured step sizes count as worth it, so the first drafts measure
// them; a source whose drafts have stopped is still tried once every
// kExploreEvery refusals, so its rate follows the requests of the moment.
//
// Threading: the scheduler's (engine thread) only.
#pragma once

#include <array>

#include "drafter.h"

namespace rc::runtime {

class DraftCosts {
 public:
  static constexpr int kExploreEvery = 32;

  // A step of `tokens` tokens (all requests) took `ms`.
  void note_step(int tokens, double ms);
  // A verified draft from `source`: `drafted` tokens, the first `accepted`
  // kept.
  void note_draft(DraftSource source, int drafted, int accepted);
  // Whether to verify a draft of k tokens from `source` in a step that
  // decodes `step_tokens` tokens without it (n above, at least 1). Not
  // const: refusals count towards the next exploration.
  bool worth(DraftSource source, int k, int step_tokens = 1);

  // The measured time of a step of `tokens` tokens, or a negative number
  // when no step of about that size has been measured.
  double step_ms(int tokens) const;
  // The estimated probability that a draft token from `source` is kept.
  double keep_rate(DraftSource source) const;

 private:
  // Steps by size: bucket b holds steps of [2^b, 2^(b+1)) tokens, the last
  // every longer step too.
  static constexpr int kBuckets = 10;
  static int bucket_of(int tokens);
  struct Bucket {
    double ms = 0, tokens = 0;  // moving averages
    bool known = false;
  };
  struct Rate {
    // Kept and missed draft tokens, decayed so recent drafts weigh most;
    // the start is a prior of 3 kept for 1 missed.
    double kept = 3, missed = 1;
    int refused = 0;
  };
  std::array<Bucket, kBuckets> steps_{};
  std::array<Rate, 3> rates_{};  // by DraftSource
};

}  // namespace rc::runtime
