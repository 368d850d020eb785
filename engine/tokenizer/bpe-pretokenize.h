// Pre-tokenizers of byte-level BPE vocabularies: the regular expressions that
// cut text into words before BPE merges run inside each word, chosen by the
// GGUF key tokenizer.ggml.pre (the names llama.cpp's converter writes).
//
// A pre-tokenizer is a list of patterns applied in turn: each pattern splits
// every fragment left by the previous one into its matches and the text
// between them, which is kept as fragments of its own (Hugging Face's
// "Isolated" split). Patterns are PCRE2 with PCRE2_UTF | PCRE2_UCP, so \p{L},
// \p{N} and \s follow Unicode, and are JIT-compiled when PCRE2 supports it.
//
// Thread safety: immutable after create(); split() may run on several threads.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "radixchat/status.h"

namespace rc::tok {

class PreTokenizer {
 public:
  // The pre-tokenizer named by tokenizer.ggml.pre. Known names:
  //   default                                   llama.cpp's fallback patterns
  //   llama3, llama-v3, llama-bpe               Llama 3.x (ignore_merges, BOS)
  //   qwen2, deepseek-r1-qwen, megrez           Qwen2/2.5/3, R1 distills
  //   gpt-2, phi-2, mpt, olmo                   GPT-2's pattern
  //   smollm, starcoder, refact, command-r, codeshell
  //                                             digits alone, then GPT-2's
  // unsupported, naming `name` and the known names, for anything else.
  static Result<std::unique_ptr<PreTokenizer>> create(std::string_view name);
  ~PreTokenizer();

  // Appends the words of `text` (valid UTF-8; not checked again) to `words`
  // in order; together they cover `text` exactly. internal when PCRE2 fails
  // to match (resource limits), which no input is known to cause.
  Status split(std::string_view text, std::vector<std::string_view>& words) const;

  const std::string& name() const { return name_; }
  // Whether a word that is itself a vocabulary entry skips the merges
  // (Llama 3's tokenizer.json sets ignore_merges).
  bool ignore_merges() const { return ignore_merges_; }
  // BOS default when the GGUF has no tokenizer.ggml.add_bos_token.
  bool add_bos_default() const { return add_bos_; }

  struct Pattern;  // one compiled PCRE2 pattern

 private:
  PreTokenizer() = default;
  Status split_one(const Pattern& p, std::string_view frag,
                   std::vector<std::string_view>& out) const;

  std::string name_;
  bool ignore_merges_ = false, add_bos_ = false;
  std::vector<std::unique_ptr<Pattern>> patterns_;
};

}  // namespace rc::tok
