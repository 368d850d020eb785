#include "drafter.h"

#include <algorithm>
#include <utility>

namespace rc::runtime {

void DraftBudget::update(DraftSource source, int drafted, int accepted) {
  if (drafted <= 0 || source == DraftSource::none) return;
  int& limit = source == DraftSource::tree ? tree_limit_ : prompt_limit_;
  if (accepted == drafted) {
    limit = std::min(kMaxTokens, 2 * limit);
    if (source == DraftSource::prompt) min_match_ = std::max(kMinMatch, min_match_ - 1);
  } else {
    limit = std::max(1, accepted + 1);
    if (source == DraftSource::prompt && accepted == 0) {
      min_match_ = std::min(kMaxMatch + 1, min_match_ + 2);
    }
  }
}

namespace {

// The continuation of the latest earlier occurrence of the sequence's last
// m tokens, for the longest m in [min_match, kMaxMatch] that has one.
Draft prompt_lookup(std::span<const int32_t> seq, int max_tokens, int min_match) {
  Draft d;
  const int n = int(seq.size());
  int best_len = 0, best_end = -1;  // match length, and where its continuation starts
  for (int end = n - 1; end >= min_match; --end) {
    // seq[end - m, end) against the last m tokens, m as long as they agree.
    int m = 0;
    while (m < DraftBudget::kMaxMatch && m < end && seq[end - 1 - m] == seq[n - 1 - m]) ++m;
    if (m > best_len && m >= min_match) {
      best_len = m;
      best_end = end;
      if (m == DraftBudget::kMaxMatch) break;
    }
  }
  if (best_end < 0) return d;
  const int take = std::min(max_tokens, n - best_end);
  d.tokens.assign(seq.begin() + best_end, seq.begin() + best_end + take);
  d.source = DraftSource::prompt;
  return d;
}

}  // namespace

Draft propose_draft(const CacheDraftSource& cache, std::span<const int32_t> sequence,
                    const DraftBudget& budget, int max_tokens) {
  Draft d;
  if (max_tokens <= 0 || sequence.empty()) return d;
  const int tree_k = std::min(max_tokens, budget.limit(DraftSource::tree));
  if (tree_k >= DraftBudget::kMinTokens) {
    Continuation c = cache.peek_continuation(sequence, size_t(tree_k));
    if (!c.tokens.empty()) {
      d.tokens = std::move(c.tokens);
      d.source = DraftSource::tree;
      d.node = c.node;
      return d;
    }
  }
  const int prompt_k = std::min(max_tokens, budget.limit(DraftSource::prompt));
  if (prompt_k < DraftBudget::kMinTokens || budget.min_match() > DraftBudget::kMaxMatch) return d;
  return prompt_lookup(sequence, prompt_k, budget.min_match());
}

}  // namespace rc::runtime
