// GGUF byte-level BPE vocabulary ("gpt2") -> Tokenizer (see tokenizer.h and
// bpe-model.h for the semantics).
#include "bpe-model.h"
#include "gguf-vocab.h"
#include "tokenizer.h"

namespace rc::tok {

Result<std::unique_ptr<Tokenizer>> Tokenizer::from_gguf_bpe(const model::GgufFile& f) {
  Result<std::vector<SpmPiece>> read = read_vocab_pieces(f);
  if (!read.ok()) return read.status();
  std::vector<SpmPiece> pieces = std::move(read).value();
  const int64_t n = static_cast<int64_t>(pieces.size());

  if (!f.has("tokenizer.ggml.merges")) {
    return Status(StatusCode::corrupt_data,
                  "the byte-level BPE vocabulary has no merges (tokenizer.ggml.merges is missing)");
  }
  Result<std::vector<std::string_view>> merges = f.get_string_array("tokenizer.ggml.merges");
  if (!merges.ok()) return merges.status();
  // llama.cpp reads a missing tokenizer.ggml.pre as "default" too.
  std::string_view pre = "default";
  if (f.has("tokenizer.ggml.pre")) {
    Result<std::string_view> p = f.get_string("tokenizer.ggml.pre");
    if (!p.ok()) return p.status();
    pre = *p;
  }
  Result<std::unique_ptr<BpeModel>> bpe = BpeModel::create(pieces, *merges, pre);
  if (!bpe.ok()) return bpe.status();

  // Special ids: none unless the file names them (llama.cpp's BPE default of
  // id 11 for BOS/EOS is GPT-2's ",", which no chat model wants).
  Specials sp;
  const std::pair<const char*, int32_t*> ids[] = {
      {"tokenizer.ggml.bos_token_id", &sp.bos},     {"tokenizer.ggml.eos_token_id", &sp.eos},
      {"tokenizer.ggml.unknown_token_id", &sp.unk}, {"tokenizer.ggml.padding_token_id", &sp.pad},
      {"tokenizer.ggml.eot_token_id", &sp.eot},     {"tokenizer.ggml.eom_token_id", &sp.eom},
  };
  for (const auto& [key, out] : ids) {
    if (Status s = read_special_id(f, key, -1, n, out); !s.ok()) return s;
  }
  Result<bool> add_bos =
      f.get_bool_or("tokenizer.ggml.add_bos_token", (*bpe)->pre_tokenizer().add_bos_default());
  if (!add_bos.ok()) return add_bos.status();
  Result<bool> add_eos = f.get_bool_or("tokenizer.ggml.add_eos_token", false);
  if (!add_eos.ok()) return add_eos.status();
  sp.add_bos = *add_bos;
  sp.add_eos = *add_eos;
  return create_bpe(std::move(pieces), std::move(bpe).value(), sp);
}

}  // namespace rc::tok
