// libFuzzer target for the byte-level BPE tokenizer on arbitrary text. The
// first byte picks the pre-tokenizer (default, llama-bpe, qwen2, gpt-2,
// smollm), the rest is the text, run through a small hand-built byte-level
// vocabulary with merges, a control token and a user-defined token. Checks
// the contracts, not just crashes: invalid UTF-8 is refused with a Status;
// valid text gives in-range ids that decode back to the text exactly, with
// and without special-token parsing; as plain text no control id appears;
// streamed text is always valid UTF-8 and adds up to decode().
#include <cstdlib>
#include <memory>
#include <string_view>

#include "engine/tokenizer/bpe-fixtures.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/utf8.h"

namespace {

using rc::tok::Tokenizer;

constexpr const char* kPres[] = {"default", "llama-bpe", "qwen2", "gpt-2", "smollm"};
constexpr int kPreCount = 5;

struct Vocabs {
  rc::testing::LoadedBpe loaded[kPreCount];
  int32_t control = -1;
};

Vocabs* load() {
  auto* v = new Vocabs;
  for (int i = 0; i < kPreCount; ++i) {
    rc::testing::BpeVocab b = rc::testing::byte_vocab(
        {{" ", "t"}, {"h", "e"}, {" t", "he"}, {"i", "n"}, {"in", "g"}, {"e", "r"}, {" ", "a"},
         {"1", "2"}, {"12", "3"}, {"\n", "\n"}, {" ", " "}, {"  ", "  "}, {"\xC3", "\xA9"},
         {"<", "|"}, {"|", ">"}, {"'", "s"}, {"\xF0", "\x9F"}, {"\xF0\x9F", "\x98"}},
        kPres[i]);
    v->control = b.add("<|im_end|>", 3, true);
    b.add("<think>", 4, true);
    b.eos = v->control;
    b.bos = v->control;
    v->loaded[i] = rc::testing::load_bpe(b);
    if (!v->loaded[i].tok.ok()) std::abort();
  }
  return v;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Vocabs* vocabs = load();
  if (size == 0) return 0;
  const Tokenizer& tok = *vocabs->loaded[data[0] % kPreCount].tok.value();
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  const bool valid = rc::tok::utf8_first_invalid(text) == std::string_view::npos;
  for (bool special : {true, false}) {
    auto ids = tok.encode(text, false, special);
    if (ids.ok() != valid) std::abort();
    if (!valid) continue;
    for (int32_t id : *ids) {
      if (id < 0 || id >= tok.n_vocab()) std::abort();
      if (!special && id == vocabs->control) std::abort();
    }
    if (tok.decode(*ids, /*render_special=*/true) != text) std::abort();
    rc::tok::StreamDecoder sd(tok, /*render_special=*/true);
    std::string streamed;
    for (int32_t id : *ids) {
      const std::string chunk = sd.push(id);
      if (rc::tok::utf8_first_invalid(chunk) != std::string_view::npos) std::abort();
      streamed += chunk;
    }
    streamed += sd.flush();
    if (streamed != text) std::abort();
    auto with_bos = tok.encode(text, true, special);
    if (!with_bos.ok() || with_bos->size() != ids->size() + 1) std::abort();
  }
  return 0;
}
