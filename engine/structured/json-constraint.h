// One request's grammar state: masks logits before sampling, advances past
// the sampled token, and says when the document is complete.
//
// Threading: engine thread (one per request; not shared).
#pragma once

#include <climits>
#include <cstdint>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "json-grammar.h"
#include "json-matcher.h"
#include "token-trie.h"

namespace rc::structured {

class JsonConstraint {
 public:
  // `eog`: the end-of-generation ids, allowed once the document is complete.
  // `max_tokens`: the request's budget; as it runs out, only tokens after
  // which the document can still be finished in the tokens left are allowed
  // (json-closing.h), so a reply cut by max_tokens is complete JSON.
  JsonConstraint(std::shared_ptr<const Grammar> grammar, std::shared_ptr<const TokenTrie> trie,
                 std::vector<int32_t> eog, int max_tokens = INT32_MAX);

  // Sets the logits of tokens that may not come next to -infinity (EOG ids
  // only when `allow_eog` and the document is complete). False when no
  // token may come next: the caller ends the request.
  bool mask_logits(std::span<float> logits, bool allow_eog);
  // The allowed set alone (bit per token id), for tests and benchmarks.
  std::vector<bool> allowed_tokens(bool allow_eog);

  // Advances past `token`; false when the grammar does not accept it.
  bool accept(int32_t token);
  // Advances past raw bytes (tests).
  bool accept_bytes(std::string_view bytes);
  // The document is complete and nothing may follow: stop now.
  bool finished() const;
  // The document is complete (a trailing number could still grow).
  bool accepting() const;

  const std::vector<Thread>& threads() const { return threads_; }
  // Tokens the request may still produce.
  int budget() const { return budget_; }
  // Whether the budget ever refused a token the grammar allowed: a document
  // that then finishes was cut short by max_tokens (finish reason `length`).
  bool steered() const { return steered_; }
  // Trie nodes the last mask visited (benchmarks).
  uint64_t nodes_visited() const { return builder_.nodes_visited(); }

 private:
  void compute();
  bool apply_full_row(std::span<float> logits);
  bool apply_short_row(std::span<float> logits);

  std::shared_ptr<const Grammar> grammar_;
  std::shared_ptr<const TokenTrie> trie_;
  std::vector<int32_t> eog_;
  int budget_;  // tokens this request may still produce
  bool steered_ = false;
  std::vector<Thread> threads_, scratch_;
  MaskBuilder builder_;
  std::vector<uint64_t> bits_;
  std::vector<std::pair<int32_t, float>> kept_;  // apply_full_row's scratch
};

}  // namespace rc::structured
