// Byte-level BPE vocabularies for tests: hand-built ones (the 256 byte
// entries plus chosen merges) and the reference vocabularies the oracle
// script writes (bpe-oracle/), as vocabulary-only GGUFs in memory.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "model/gguf-reader.h"
#include "model/gguf-writer.h"
#include "tokenizer/tokenizer.h"

namespace rc::testing {

struct BpeVocab {
  std::vector<std::string> tokens;                 // as stored (GPT-2 byte characters)
  std::vector<int32_t> types;                      // token_type per entry; empty: all normal
  std::vector<std::string> merges;                 // "A B", rank order
  bool with_merges = true;                         // false: no tokenizer.ggml.merges key
  std::string pre = "gpt-2";                       // "": no tokenizer.ggml.pre key
  int64_t bos = -1, eos = -1, eot = -1, pad = -1;  // -1: key absent
  std::optional<bool> add_bos;

  // Appends an entry (raw bytes, mapped through GPT-2's table unless `raw`).
  int32_t add(const std::string& text, int32_t type = 1, bool raw = false);
  // Appends the merge of two raw-byte pieces and, when new, their concatenation.
  int32_t merge(const std::string& a, const std::string& b);
};

// The 256 single-byte entries (ids 0..255 in byte order), with `merges`
// (raw-byte pairs) appended in rank order.
BpeVocab byte_vocab(const std::vector<std::pair<std::string, std::string>>& merges = {},
                    const std::string& pre = "gpt-2");
// The GPT-2 spelling of raw bytes ("Ġthe" for " the").
std::string bpe_spelling(const std::string& raw);

std::vector<uint8_t> bpe_vocab_gguf(const BpeVocab& v);

// A GGUF held in memory with the tokenizer loaded from it.
struct LoadedBpe {
  std::vector<uint8_t> bytes;
  std::unique_ptr<model::GgufFile> file;
  Result<std::unique_ptr<tok::Tokenizer>> tok = Status(StatusCode::internal, "not loaded");
};
LoadedBpe load_bpe(const BpeVocab& v);

// The oracle's output for one vocabulary (bpe-oracle/oracle.mjs).
struct OracleCase {
  std::string text;
  std::vector<int32_t> special, plain;
};
struct Oracle {
  std::string name;
  BpeVocab vocab;
  std::vector<OracleCase> cases;
};
// nullopt when the file does not exist (the fixture could not make it).
std::optional<Oracle> read_oracle(const std::string& path);

}  // namespace rc::testing
