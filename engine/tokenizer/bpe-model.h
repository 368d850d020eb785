// Byte-level BPE (GPT-2 style) as GGUF vocabularies with
// tokenizer.ggml.model == "gpt2" describe it: the text of each pre-tokenizer
// word is taken as bytes, each byte stands for one vocabulary entry through
// GPT-2's byte-to-unicode table (printable Latin-1 bytes map to themselves,
// the 68 others to U+0100..U+0143), and adjacent pieces are merged, lowest
// tokenizer.ggml.merges rank first and leftmost on ties, until no listed
// pair is left. Special tokens are not handled here (see Tokenizer).
//
// The vocabulary is checked when the model is built, so encoding can never
// meet an entry that is missing: every byte must have its token, and every
// merge "A B" must name two entries whose concatenation is an entry too.
//
// Thread safety: immutable after create(); encode() may run on several threads.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "bpe-pretokenize.h"
#include "radixchat/status.h"
#include "spm-proto.h"

namespace rc::tok {

// GPT-2's byte-to-unicode table: the UTF-8 spelling of the character byte
// `b` stands for in a byte-level vocabulary.
const std::string& bpe_byte_char(uint8_t b);
// The bytes a byte-level vocabulary entry stands for: each character mapped
// back through the table; characters outside it are kept as they are.
std::string bpe_entry_bytes(std::string_view entry);

class BpeModel {
 public:
  // `pieces`: the vocabulary (text as stored, with its types); `merges`:
  // tokenizer.ggml.merges in rank order; `pre`: tokenizer.ggml.pre.
  // corrupt_data naming the offending byte or merge when the vocabulary
  // cannot encode every input; unsupported for an unknown `pre`.
  static Result<std::unique_ptr<BpeModel>> create(const std::vector<SpmPiece>& pieces,
                                                  const std::vector<std::string_view>& merges,
                                                  std::string_view pre);

  // Appends the ids of plain `text` (valid UTF-8, no special tokens).
  Status encode(std::string_view text, std::vector<int32_t>& out) const;
  const PreTokenizer& pre_tokenizer() const { return *pre_; }
  size_t n_merges() const { return merges_.size(); }

 private:
  BpeModel() = default;
  void encode_word(std::string_view word, std::vector<int32_t>& out) const;

  struct Merge {
    int32_t rank;
    int32_t result;
  };
  static uint64_t pair_key(int32_t a, int32_t b) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(a)) << 32) | static_cast<uint32_t>(b);
  }

  std::unique_ptr<PreTokenizer> pre_;
  std::unordered_map<std::string, int32_t> ids_;  // entry text -> id (not control/unknown)
  std::unordered_map<uint64_t, Merge> merges_;    // (left id, right id) -> rank, result
  std::array<int32_t, 256> byte_ids_{};           // the token of each single byte
};

}  // namespace rc::tok
