#include "json-constraint.h"

#include <algorithm>
#include <limits>

namespace rc::structured {

namespace {

// More threads than this can only come from nested anyOf branches that stay
// alike for long; the first ones are kept (each kept thread is a valid
// reading, so the output stays valid; a later branch may be lost).
constexpr size_t kMaxThreads = 32;

}  // namespace

JsonConstraint::JsonConstraint(std::shared_ptr<const Grammar> grammar,
                               std::shared_ptr<const TokenTrie> trie, std::vector<int32_t> eog)
    : grammar_(std::move(grammar)), trie_(std::move(trie)), eog_(std::move(eog)) {
  threads_.push_back(start_thread(*grammar_));
}

void JsonConstraint::compute() { builder_.compute(*grammar_, *trie_, threads_, bits_); }

bool JsonConstraint::mask_logits(std::span<float> logits, bool allow_eog) {
  compute();
  const float kOff = -std::numeric_limits<float>::infinity();
  const int n = std::min<int>(static_cast<int>(logits.size()), trie_->n_vocab());
  // End-of-generation ids are never in the trie; keep their logits aside.
  const bool eog_ok = allow_eog && accepting();
  std::vector<std::pair<int32_t, float>> keep;
  if (eog_ok) {
    for (int32_t e : eog_) {
      if (e >= 0 && e < n) keep.emplace_back(e, logits[e]);
    }
  }
  bool any = !keep.empty();
  for (int id = 0; id < n; ++id) {
    const int32_t pos = trie_->position(id);
    if (pos >= 0 && test_bit(bits_, static_cast<uint32_t>(pos))) {
      any = true;
    } else {
      logits[id] = kOff;
    }
  }
  for (size_t id = n; id < logits.size(); ++id) logits[id] = kOff;
  for (const auto& [id, value] : keep) logits[id] = value;
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
    if (scratch_.size() > kMaxThreads) scratch_.resize(kMaxThreads);
    threads_.swap(scratch_);
  }
  return true;
}

bool JsonConstraint::accept(int32_t token) {
  if (token < 0 || token >= trie_->n_vocab()) return false;
  const std::string& piece = trie_->piece(token);
  if (piece.empty()) return false;  // control, unknown or end of generation
  return accept_bytes(piece);
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
