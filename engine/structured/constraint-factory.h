// Makes a request's JsonConstraint from its ResponseFormat: compiles the
// schema (compiled grammars are kept by schema text, so requests sharing a
// schema compile it once) and builds the vocabulary's token trie on first
// use.
//
// Threading: make() may be called from any thread (it locks); what it
// returns belongs to one request.
#pragma once

#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "json-constraint.h"
#include "radixchat/structured-output.h"

namespace rc::tok {
class Tokenizer;
}

namespace rc::structured {

class ConstraintFactory {
 public:
  explicit ConstraintFactory(const tok::Tokenizer& tokenizer) : tok_(tokenizer) {}
  // nullptr for OutputFormat::text; invalid_argument naming the problem for
  // a schema that does not compile, or when `max_tokens` (> 0) is below the
  // shortest reply (the message names that minimum).
  Result<std::unique_ptr<JsonConstraint>> make(const ResponseFormat& format, int max_tokens);

 private:
  static constexpr size_t kMaxGrammars = 64;

  const tok::Tokenizer& tok_;
  std::mutex mu_;
  std::shared_ptr<const TokenTrie> trie_;
  std::list<std::string> lru_;  // schema keys, most recent first
  std::unordered_map<std::string, std::shared_ptr<const Grammar>> grammars_;
};

}  // namespace rc::structured
