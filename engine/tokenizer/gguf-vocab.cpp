// GGUF vocabulary -> sentencepiece ModelProto (see tokenizer.h for the
// semantics). Sentencepiece insists on a few invariants a GGUF vocabulary
// need not satisfy (unique non-empty pieces, exactly one <unk>, all 256
// byte pieces when any exist); the copy handed to sentencepiece is adjusted
// so it loads, while the Tokenizer keeps the vocabulary as stored for
// token_to_piece().
#include "gguf-vocab.h"

#include <cstdio>
#include <unordered_set>

#include "tokenizer.h"

namespace rc::tok {

namespace {

Status corrupt(std::string msg) { return Status(StatusCode::corrupt_data, std::move(msg)); }

bool is_byte_piece(std::string_view p, int* value) {
  // sentencepiece spells byte pieces exactly "<0xHH>" with upper-case hex.
  if (p.size() != 6 || p.substr(0, 3) != "<0x" || p[5] != '>') return false;
  int v = 0;
  for (int i = 3; i < 5; ++i) {
    const char c = p[i];
    if (c >= '0' && c <= '9')
      v = v * 16 + (c - '0');
    else if (c >= 'A' && c <= 'F')
      v = v * 16 + (c - 'A' + 10);
    else
      return false;
  }
  *value = v;
  return true;
}

}  // namespace

Status read_special_id(const model::GgufFile& f, const char* key, int32_t fallback, int64_t n,
                       int32_t* out) {
  if (!f.has(key)) {
    *out = fallback < n ? fallback : -1;
    return {};
  }
  Result<int64_t> v = f.get_i64(key);
  if (!v.ok()) return v.status();
  if (*v >= n) {
    return corrupt(std::string(key) + " " + std::to_string(*v) + " is outside the vocabulary (" +
                   std::to_string(n) + " tokens)");
  }
  *out = *v < 0 ? -1 : static_cast<int32_t>(*v);
  return {};
}

Result<std::vector<SpmPiece>> read_vocab_pieces(const model::GgufFile& f) {
  Result<std::vector<std::string_view>> tokens = f.get_string_array("tokenizer.ggml.tokens");
  if (!tokens.ok()) return tokens.status();
  const int64_t n = static_cast<int64_t>(tokens->size());
  if (n == 0 || n > (1 << 24)) {
    return corrupt("tokenizer.ggml.tokens has " + std::to_string(n) + " entries");
  }
  std::vector<float> scores(n, 0.0f);
  if (f.has("tokenizer.ggml.scores")) {
    Result<std::vector<float>> s = f.get_f32_array("tokenizer.ggml.scores");
    if (!s.ok()) return s.status();
    if (static_cast<int64_t>(s->size()) != n) {
      return corrupt("tokenizer.ggml.scores has " + std::to_string(s->size()) + " entries for " +
                     std::to_string(n) + " tokens");
    }
    scores = std::move(s).value();
  }
  std::vector<int32_t> types(n, static_cast<int32_t>(PieceType::normal));
  if (f.has("tokenizer.ggml.token_type")) {
    Result<std::vector<int32_t>> t = f.get_i32_array("tokenizer.ggml.token_type");
    if (!t.ok()) return t.status();
    if (static_cast<int64_t>(t->size()) != n) {
      return corrupt("tokenizer.ggml.token_type has " + std::to_string(t->size()) +
                     " entries for " + std::to_string(n) + " tokens");
    }
    types = std::move(t).value();
  }

  std::vector<SpmPiece> pieces(n);
  for (int64_t i = 0; i < n; ++i) {
    pieces[i].piece = std::string((*tokens)[i]);
    pieces[i].score = scores[i];
    const int32_t t = types[i];
    // 0 (undefined) and unknown values are ordinary pieces, as in llama.cpp.
    pieces[i].type = t >= 1 && t <= 6 ? static_cast<PieceType>(t) : PieceType::normal;
  }
  return pieces;
}

Result<std::unique_ptr<Tokenizer>> Tokenizer::from_gguf(const model::GgufFile& f) {
  Result<std::string_view> kind = f.get_string("tokenizer.ggml.model");
  if (!kind.ok()) {
    if (kind.status().code() == StatusCode::not_found) {
      return Status(StatusCode::not_found,
                    "the GGUF has no tokenizer (tokenizer.ggml.model is missing)");
    }
    return kind.status();
  }
  if (*kind == "gpt2") return from_gguf_bpe(f);
  if (*kind != "llama") {
    return Status(StatusCode::unsupported,
                  "unsupported tokenizer model '" + std::string(*kind) +
                      "' (supported: llama, i.e. sentencepiece, and gpt2, i.e. byte-level BPE)");
  }
  Result<std::vector<SpmPiece>> read = read_vocab_pieces(f);
  if (!read.ok()) return read.status();
  std::vector<SpmPiece> pieces = std::move(read).value();
  const int64_t n = static_cast<int64_t>(pieces.size());

  // Special ids; llama.cpp's SPM defaults when the keys are absent.
  Specials sp;
  if (Status s = read_special_id(f, "tokenizer.ggml.bos_token_id", 1, n, &sp.bos); !s.ok())
    return s;
  if (Status s = read_special_id(f, "tokenizer.ggml.eos_token_id", 2, n, &sp.eos); !s.ok())
    return s;
  if (Status s = read_special_id(f, "tokenizer.ggml.padding_token_id", -1, n, &sp.pad); !s.ok())
    return s;
  if (Status s = read_special_id(f, "tokenizer.ggml.eot_token_id", -1, n, &sp.eot); !s.ok())
    return s;
  if (Status s = read_special_id(f, "tokenizer.ggml.eom_token_id", -1, n, &sp.eom); !s.ok())
    return s;
  int32_t unk_fallback = -1;
  for (int64_t i = 0; i < n && unk_fallback < 0; ++i) {
    if (pieces[i].type == PieceType::unknown) unk_fallback = static_cast<int32_t>(i);
  }
  if (Status s = read_special_id(f, "tokenizer.ggml.unknown_token_id", unk_fallback, n, &sp.unk);
      !s.ok())
    return s;
  if (sp.unk < 0) return corrupt("the vocabulary has no unknown token");
  Result<bool> add_bos = f.get_bool_or("tokenizer.ggml.add_bos_token", true);
  if (!add_bos.ok()) return add_bos.status();
  sp.add_bos = *add_bos;

  // The copy sentencepiece loads.
  SpmModel m;
  m.pieces = pieces;
  m.model_type = 2;  // BPE: merge by score, as llama.cpp's SPM tokenizer
  m.vocab_size = static_cast<int32_t>(n);
  m.unk_id = sp.unk;
  m.bos_id = sp.bos;
  m.eos_id = sp.eos;
  m.pad_id = sp.pad;
  std::unordered_set<std::string_view> seen;
  std::vector<bool> bytes_found(256, false);
  bool any_byte = false;
  for (int64_t i = 0; i < n; ++i) {
    SpmPiece& p = m.pieces[i];
    if (i == sp.unk)
      p.type = PieceType::unknown;
    else if (p.type == PieceType::unknown)
      p.type = PieceType::control;  // only one <unk>
    int b = 0;
    if (p.type == PieceType::byte) {
      if (is_byte_piece(p.piece, &b)) {
        bytes_found[b] = true;
        any_byte = true;
      } else {
        p.type = PieceType::normal;
      }
    }
    if (p.piece.empty() || seen.count(p.piece)) {
      // Never produced by encoding anyway; rename so sentencepiece accepts it.
      std::string name = "<rc-unused-" + std::to_string(i) + ">";
      while (seen.count(name)) name += "_";
      p.piece = std::move(name);
      p.type = PieceType::unused;
    }
    seen.insert(p.piece);
  }
  m.byte_fallback = any_byte;
  for (int b = 0; b < 256 && any_byte; ++b) {
    if (!bytes_found[b]) {
      // Incomplete byte set: sentencepiece refuses byte fallback, so drop it.
      m.byte_fallback = false;
      for (SpmPiece& p : m.pieces) {
        if (p.type == PieceType::byte) p.type = PieceType::normal;
      }
      break;
    }
  }
  Result<bool> dummy = f.get_bool_or("tokenizer.ggml.add_space_prefix", true);
  if (!dummy.ok()) return dummy.status();
  Result<bool> remove_ws = f.get_bool_or("tokenizer.ggml.remove_extra_whitespaces", false);
  if (!remove_ws.ok()) return remove_ws.status();
  m.add_dummy_prefix = *dummy;
  m.remove_extra_whitespaces = *remove_ws;
  m.escape_whitespaces = true;
  m.normalizer_name = "identity";
  if (const model::GgufArray* cm = f.find_array("tokenizer.ggml.precompiled_charsmap")) {
    if (cm->elem_type != model::GgufType::u8 && cm->elem_type != model::GgufType::i8) {
      return corrupt("tokenizer.ggml.precompiled_charsmap must be an array of bytes");
    }
    m.precompiled_charsmap.assign(reinterpret_cast<const char*>(cm->scalars), cm->count);
    m.normalizer_name = "nmt_nfkc";  // informational; the charsmap defines the mapping
  }
  return create(std::move(pieces), serialize_spm_model(m), sp, "gguf");
}

}  // namespace rc::tok
