// libFuzzer target for the tokenizer on arbitrary text, with the bundled
// vocabulary loaded both ways (tokenizer.model and the GGUF vocabulary path).
// Checks the contracts, not just crashes: invalid UTF-8 is refused with a
// Status; valid text round-trips through decode (except U+2581, which
// sentencepiece itself maps to a space); both sources give the same ids;
// streamed text is always valid UTF-8 and adds up to decode().
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string_view>

#include "model/gguf-writer.h"
#include "tokenizer/spm-proto.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/utf8.h"

namespace {

using rc::tok::Tokenizer;

struct Both {
  std::unique_ptr<Tokenizer> side, gguf;
  std::vector<uint8_t> bytes;
  std::unique_ptr<rc::model::GgufFile> file;
};

Both* load() {
  auto* b = new Both;
  const std::string path = std::string(RADIXCHAT_SOURCE_DIR) + "/assets/model/tokenizer.model";
  auto s = Tokenizer::from_spm_file(path);
  if (!s.ok()) std::abort();
  b->side = std::move(s).value();
  // The GGUF vocabulary as assets/model/export_gguf.py writes it.
  rc::model::GgufWriter w;
  std::vector<std::string> toks;
  std::vector<float> scores;
  std::vector<int32_t> types;
  int32_t end = -1;
  for (int32_t i = 0; i < b->side->n_vocab(); ++i) {
    toks.emplace_back(b->side->piece(i));
    scores.push_back(0);
    types.push_back(static_cast<int32_t>(b->side->piece_type(i)));
    if (toks.back() == "<|end|>") end = i;
  }
  // Scores come from the proto (the Tokenizer does not expose them).
  std::FILE* f = std::fopen(path.c_str(), "rb");
  std::string raw;
  char buf[65536];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) raw.append(buf, n);
  std::fclose(f);
  auto m = rc::tok::parse_spm_model(raw);
  if (!m.ok()) std::abort();
  for (size_t i = 0; i < scores.size(); ++i) scores[i] = m->pieces[i].score;
  w.set_string("tokenizer.ggml.model", "llama");
  w.set("tokenizer.ggml.tokens", rc::model::GgufOwnedValue::strings(toks));
  w.set("tokenizer.ggml.scores", rc::model::GgufOwnedValue::f32s(scores));
  w.set("tokenizer.ggml.token_type", rc::model::GgufOwnedValue::i32s(types));
  w.set_u32("tokenizer.ggml.eos_token_id", static_cast<uint32_t>(end));
  w.set_bool("tokenizer.ggml.add_space_prefix", false);
  b->bytes = w.serialize();
  auto g = rc::model::GgufFile::from_memory({b->bytes.data(), b->bytes.size()});
  if (!g.ok()) std::abort();
  b->file = std::move(g).value();
  auto t = Tokenizer::from_gguf(*b->file);
  if (!t.ok()) std::abort();
  b->gguf = std::move(t).value();
  return b;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Both* both = load();
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const bool valid = rc::tok::utf8_first_invalid(text) == std::string_view::npos;
  for (bool special : {true, false}) {
    auto a = both->side->encode(text, false, special);
    auto b = both->gguf->encode(text, false, special);
    if (a.ok() != valid || b.ok() != valid) std::abort();
    if (!valid) continue;
    if (*a != *b) std::abort();
    auto with_bos = both->gguf->encode(text, true, special);
    if (!with_bos.ok() || with_bos->size() != a->size() + 1 || (*with_bos)[0] != 1) std::abort();
    const std::string back = both->side->decode(*a, /*render_special=*/true);
    if (text.find("\xE2\x96\x81") == std::string_view::npos && back != text) std::abort();
    rc::tok::StreamDecoder sd(*both->side, /*render_special=*/true);
    std::string streamed;
    for (int32_t id : *a) {
      const std::string chunk = sd.push(id);
      if (rc::tok::utf8_first_invalid(chunk) != std::string_view::npos) std::abort();
      streamed += chunk;
    }
    streamed += sd.flush();
    if (streamed != back) std::abort();
  }
  return 0;
}
