// Shared tokenizer fixtures: the bundled tokenizer.model loaded directly and
// through a GGUF vocabulary written the way assets/model/export_gguf.py
// writes it, sample texts, and the golden cases.
#pragma once

#include <string>
#include <vector>

#include "tokenizer/tokenizer.h"

namespace rc::testing {

inline const std::string kBundledTokenizer =
    std::string(RADIXCHAT_SOURCE_DIR) + "/assets/model/tokenizer.model";

const tok::Tokenizer& bundled_sidecar();
const tok::Tokenizer& bundled_gguf_tokenizer();
// GGUF bytes of the bundled vocabulary alone (export_gguf.py's tokenizer keys).
std::vector<uint8_t> bundled_vocab_gguf();

// Deterministic texts: prose, chat renderings, Unicode (accents, CJK, Greek,
// emoji with ZWJ), whitespace runs, and random code-point strings.
std::vector<std::string> sample_texts(int n);

struct GoldenCase {
  std::string name;
  std::string text;
  std::vector<int32_t> tokens;
};
std::vector<GoldenCase> golden_cases(const std::string& path);

}  // namespace rc::testing
