// A model's vocabulary alone, for tools that show token text without running
// the model (cache-watch --model, the cache panel attached to a remote
// server): any GGUF (only its header and tokenizer metadata are read) or a
// sentencepiece tokenizer.model. Immutable once loaded; safe to share
// between threads.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "radixchat/status.h"

namespace rc {

class Vocabulary {
 public:
  // invalid_argument / not_found with the reason when the file has no
  // usable vocabulary.
  static Result<std::unique_ptr<Vocabulary>> load(const std::string& path);
  virtual ~Vocabulary() = default;

  // Text of `ids`, control tokens spelled out. An id the vocabulary does not
  // have (a remote server may run another model) shows as <id>, so a wrong
  // vocabulary is visible instead of silently dropped.
  virtual std::string text(std::span<const int64_t> ids) const = 0;
  virtual int size() const = 0;
};

}  // namespace rc
