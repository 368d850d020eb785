#include "json-constraint.h"

#include <algorithm>
#include <bit>
#include <limits>

#include "json-closing.h"

namespace rc::structured {

namespace {

// More threads than this can only come from nested anyOf branches that stay
// alike for long; the first ones are kept (each kept thread is a valid
// reading, so the output stays valid; a later branch may be lost).
constexpr size_t kMaxThreads = 32;

}  // namespace

JsonConstraint::JsonConstraint(std::shared_ptr<const Grammar> grammar,
                               std::shared_ptr<const TokenTrie> trie, std::vector<int32_t> eog,
                               int max_tokens)
    : grammar_(std::move(grammar)),
      trie_(std::move(trie)),
      eog_(std::move(eog)),
      budget_(max_tokens) {
  threads_.push_back(start_thread(*grammar_));
}

// After the token being chosen, budget_ - 1 tokens are left: at least
// that many bytes, one token each.
void JsonConstraint::compute() {
  const uint32_t limit = budget_ <= 0 ? 0 : static_cast<uint32_t>(budget_ - 1);
  builder_.compute(*grammar_, *trie_, threads_, bits_, limit);
  steered_ = steered_ || builder_.budget_refused();
}

bool JsonConstraint::mask_logits(std::span<float> logits, bool allow_eog) {
  compute();
  // End-of-generation ids are never in the trie; keep their logits aside.
  std::vector<std::pair<int32_t, float>> keep;
  if (allow_eog && accepting()) {
    for (int32_t e : eog_) {
      if (e >= 0 && static_cast<size_t>(e) < logits.size()) keep.emplace_back(e, logits[e]);
    }
  }
  const bool any =
      (logits.size() >= static_cast<size_t>(trie_->n_vocab()) ? apply_full_row(logits)
                                                              : apply_short_row(logits)) ||
      !keep.empty();
  for (const auto& [id, value] : keep) logits[id] = value;
  return any;
}

// A row covering the vocabulary: only the smaller of the allowed and the
// refused sets is visited, so the cost follows the mask, not the row.
bool JsonConstraint::apply_full_row(std::span<float> logits) {
  const float kOff = -std::numeric_limits<float>::infinity();
  const uint32_t n_tokens = static_cast<uint32_t>(trie_->n_tokens());
  size_t allowed = 0;
  for (uint64_t w : bits_) allowed += static_cast<size_t>(std::popcount(w));
  if (allowed * 2 < n_tokens) {
    // Few allowed: save them, clear the row, put them back.
    kept_.clear();
    for (size_t w = 0; w < bits_.size(); ++w) {
      for (uint64_t m = bits_[w]; m; m &= m - 1) {
        const int32_t id = trie_->token_at(static_cast<uint32_t>(w * 64 + std::countr_zero(m)));
        kept_.emplace_back(id, logits[id]);
      }
    }
    std::fill(logits.begin(), logits.end(), kOff);
    for (const auto& [id, value] : kept_) logits[id] = value;
  } else {
    // Most allowed: clear the refused ones, the ids outside the trie and the
    // row's padding.
    for (size_t w = 0; w < bits_.size(); ++w) {
      uint64_t m = ~bits_[w];
      if (w + 1 == bits_.size() && (n_tokens & 63)) m &= (1ull << (n_tokens & 63)) - 1;
      for (; m; m &= m - 1) {
        logits[trie_->token_at(static_cast<uint32_t>(w * 64 + std::countr_zero(m)))] = kOff;
      }
    }
    for (int32_t id : trie_->outside()) logits[id] = kOff;
    std::fill(logits.begin() + trie_->n_vocab(), logits.end(), kOff);
  }
  return allowed > 0;
}

// A row shorter than the vocabulary (not what models produce): token by token.
bool JsonConstraint::apply_short_row(std::span<float> logits) {
  const float kOff = -std::numeric_limits<float>::infinity();
  bool any = false;
  for (size_t id = 0; id < logits.size(); ++id) {
    const int32_t pos = trie_->position(static_cast<int32_t>(id));
    if (pos >= 0 && test_bit(bits_, static_cast<uint32_t>(pos))) {
      any = true;
    } else {
      logits[id] = kOff;
    }
  }
  return any;
}

std::vector<bool> JsonConstraint::allowed_tokens(bool allow_eog) {
  compute();
  std::vector<bool> out(trie_->n_vocab(), false);
  for (int id = 0; id < trie_->n_vocab(); ++id) {
    const int32_t pos = trie_->position(id);
    out[id] = pos >= 0 && test_bit(bits_, static_cast<uint32_t>(pos));
  }
  if (allow_eog && accepting()) {
    for (int32_t e : eog_) {
      if (e >= 0 && e < trie_->n_vocab()) out[e] = true;
    }
  }
  return out;
}

bool JsonConstraint::accept_bytes(std::string_view bytes) {
  for (char c : bytes) {
    scratch_.clear();
    for (const Thread& t : threads_) feed(*grammar_, t, static_cast<uint8_t>(c), scratch_);
    if (scratch_.empty()) return false;
    dedupe(scratch_);
    if (scratch_.size() > kMaxThreads) {
      // Keep the threads that finish soonest: one of them is what the
      // budget steering counts on.
      std::stable_sort(scratch_.begin(), scratch_.end(), [&](const Thread& a, const Thread& b) {
        return closing_bytes(*grammar_, a) < closing_bytes(*grammar_, b);
      });
      scratch_.resize(kMaxThreads);
    }
    threads_.swap(scratch_);
  }
  return true;
}

bool JsonConstraint::accept(int32_t token) {
  if (token < 0 || token >= trie_->n_vocab()) return false;
  const std::string& piece = trie_->piece(token);
  if (piece.empty()) return false;  // control, unknown or end of generation
  if (!accept_bytes(piece)) return false;
  --budget_;
  return true;
}

bool JsonConstraint::finished() const {
  return std::all_of(threads_.begin(), threads_.end(),
                     [&](const Thread& t) { return structured::finished(*grammar_, t); });
}

bool JsonConstraint::accepting() const {
  return std::any_of(threads_.begin(), threads_.end(),
                     [&](const Thread& t) { return structured::accepting(*grammar_, t); });
}

}  // namespace rc::structured
