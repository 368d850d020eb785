#include "constraint-factory.h"

#include <algorithm>

#include "tokenizer/tokenizer.h"

namespace rc::structured {

Result<std::unique_ptr<JsonConstraint>> ConstraintFactory::make(const ResponseFormat& format) {
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
  return std::make_unique<JsonConstraint>(grammar, trie, tok_.eog_ids());
}

}  // namespace rc::structured
