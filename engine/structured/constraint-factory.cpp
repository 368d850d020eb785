#include "constraint-factory.h"

#include <algorithm>

#include "json-closing.h"

#include "tokenizer/tokenizer.h"

namespace rc::structured {

Result<std::unique_ptr<JsonConstraint>> ConstraintFactory::make(const ResponseFormat& format,
                                                                int max_tokens) {
  if (format.type == OutputFormat::text) return std::unique_ptr<JsonConstraint>();
  const std::string key =
      format.type == OutputFormat::json_object ? std::string("object") : "schema:" + format.schema;
  std::shared_ptr<const Grammar> grammar;
  std::shared_ptr<const TokenTrie> trie;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = grammars_.find(key); it != grammars_.end()) {
      grammar = it->second;
    }
    if (!trie_) trie_ = TokenTrie::from_tokenizer(tok_);
    trie = trie_;
  }
  if (!grammar) {
    Result<std::shared_ptr<const Grammar>> g = compile_response_format(format);
    if (!g.ok()) return g.status();
    grammar = g.value();
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    grammars_[key] = grammar;
    lru_.remove(key);
    lru_.push_front(key);
    while (lru_.size() > kMaxGrammars) {
      grammars_.erase(lru_.back());
      lru_.pop_back();
    }
  }
  // Steering counts a byte per token; a vocabulary missing some single
  // bytes is not steered (a reply cut by max_tokens may then be incomplete).
  if (!trie->every_byte_a_token()) max_tokens = 0;
  const uint32_t shortest = shortest_reply(*grammar);
  if (max_tokens > 0 && shortest > static_cast<uint32_t>(max_tokens)) {
    return Status(StatusCode::invalid_argument,
                  "max_tokens " + std::to_string(max_tokens) +
                      " is too small for this response_format: its shortest reply needs " +
                      std::to_string(shortest) + " tokens, so max_tokens must be at least " +
                      std::to_string(shortest));
  }
  return std::make_unique<JsonConstraint>(grammar, trie, tok_.eog_ids(),
                                          max_tokens > 0 ? max_tokens : INT32_MAX);
}

}  // namespace rc::structured
