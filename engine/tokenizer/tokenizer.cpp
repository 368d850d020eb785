#include "tokenizer.h"

#include <sentencepiece_processor.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "bpe-model.h"
#include "utf8.h"

namespace rc::tok {

namespace {

constexpr std::string_view kSpace = "\xE2\x96\x81";         // U+2581, sentencepiece's space
constexpr std::string_view kUnkSurface = " \xE2\x81\x87 ";  // sentencepiece's default

// Spellings of turn-ending tokens across chat formats.
constexpr std::string_view kEogSpellings[] = {
    "<|end|>",       "<|im_end|>",      "<|eot_id|>",    "<|eom_id|>",
    "<|endoftext|>", "<|end_of_text|>", "<end_of_turn>", "<|END_OF_TURN_TOKEN|>"};

bool splits_text(PieceType t) { return t == PieceType::control || t == PieceType::unknown; }

}  // namespace

Tokenizer::Tokenizer() = default;
Tokenizer::~Tokenizer() = default;

Result<std::unique_ptr<Tokenizer>> Tokenizer::create(std::vector<SpmPiece> pieces,
                                                     const std::string& serialized,
                                                     const Specials& sp, std::string source) {
  std::unique_ptr<Tokenizer> t(new Tokenizer());
  t->sp_ = std::make_unique<sentencepiece::SentencePieceProcessor>();
  const auto st = t->sp_->LoadFromSerializedProto(serialized);
  if (!st.ok()) {
    return Status(StatusCode::corrupt_data,
                  "sentencepiece rejected the vocabulary: " + std::string(st.message()));
  }
  if (t->sp_->GetPieceSize() != static_cast<int>(pieces.size())) {
    return Status(StatusCode::internal, "sentencepiece vocabulary size mismatch");
  }
  Result<SpmModel> parsed = parse_spm_model(serialized);
  if (parsed.ok()) t->escape_ws_ = parsed->escape_whitespaces;
  t->pieces_ = std::move(pieces);
  t->source_ = std::move(source);
  t->index_pieces(sp);
  return t;
}

std::unique_ptr<Tokenizer> Tokenizer::create_bpe(std::vector<SpmPiece> pieces,
                                                 std::unique_ptr<BpeModel> bpe,
                                                 const Specials& sp) {
  std::unique_ptr<Tokenizer> t(new Tokenizer());
  t->bpe_ = std::move(bpe);
  t->pieces_ = std::move(pieces);
  t->source_ = "gguf";
  t->bpe_bytes_.resize(t->pieces_.size());
  for (size_t id = 0; id < t->pieces_.size(); ++id) {
    if (t->pieces_[id].type == PieceType::normal || t->pieces_[id].type == PieceType::byte) {
      t->bpe_bytes_[id] = bpe_entry_bytes(t->pieces_[id].piece);
    }
  }
  t->index_pieces(sp);
  return t;
}

void Tokenizer::index_pieces(const Specials& sp) {
  bos_ = sp.bos;
  eos_ = sp.eos;
  unk_ = sp.unk;
  pad_ = sp.pad;
  eot_ = sp.eot;
  add_bos_ = sp.add_bos;
  add_eos_ = sp.add_eos;
  for (int32_t id : {sp.eos, sp.eot, sp.eom}) {
    if (id >= 0 && !is_eog(id)) eog_.push_back(id);
  }
  for (int32_t id = 0; id < static_cast<int32_t>(pieces_.size()); ++id) {
    const SpmPiece& p = pieces_[id];
    if (p.piece.empty()) continue;
    // sentencepiece matches user-defined pieces itself; BPE needs them split out.
    const bool user = p.type == PieceType::user_defined;
    if (splits_text(p.type) || (user && bpe_)) {
      split_[static_cast<unsigned char>(p.piece[0])].push_back({p.piece, id, !user});
      split_always_ = split_always_ || user;
    }
    if (splits_text(p.type) || user) {
      special_ids_.emplace(p.piece, id);
      for (std::string_view e : kEogSpellings) {
        if (p.piece == e && !is_eog(id)) eog_.push_back(id);
      }
    }
  }
  for (auto& [first, list] : split_) {
    split_first_[first] = true;
    std::stable_sort(list.begin(), list.end(), [](const Spelling& a, const Spelling& b) {
      return a.text.size() > b.text.size();
    });
  }
}

Result<std::unique_ptr<Tokenizer>> Tokenizer::from_spm_bytes(std::string bytes) {
  Result<SpmModel> m = parse_spm_model(bytes);
  if (!m.ok()) return m.status();
  const int64_t n = static_cast<int64_t>(m->pieces.size());
  if (n == 0) return Status(StatusCode::corrupt_data, "sentencepiece model has no pieces");
  auto in_range = [n](int32_t id) { return id >= 0 && id < n ? id : -1; };
  Specials sp;
  sp.bos = in_range(m->bos_id);
  sp.eos = in_range(m->eos_id);
  sp.unk = in_range(m->unk_id);
  sp.pad = in_range(m->pad_id);
  return create(std::move(m->pieces), bytes, sp, "tokenizer.model");
}

Result<std::unique_ptr<Tokenizer>> Tokenizer::from_spm_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status(StatusCode::not_found, path + ": cannot open");
  std::ostringstream ss;
  ss << in.rdbuf();
  Result<std::unique_ptr<Tokenizer>> t = from_spm_bytes(ss.str());
  if (!t.ok()) return Status(t.status().code(), path + ": " + t.status().message());
  return t;
}

Result<std::unique_ptr<Tokenizer>> Tokenizer::load(const std::string& path) {
  char magic[4] = {};
  {
    std::ifstream in(path, std::ios::binary);
    if (!in) return Status(StatusCode::not_found, path + ": no such file");
    in.read(magic, 4);
  }
  if (std::string_view(magic, 4) != "GGUF") {
    Result<std::unique_ptr<Tokenizer>> t = from_spm_file(path);
    if (!t.ok()) {
      return Status(t.status().code(), path + ": neither a GGUF file nor a sentencepiece model (" +
                                           t.status().message() + ")");
    }
    return t;
  }
  model::GgufOpenOptions opt;
  opt.allow_unsupported_types = true;  // only the vocabulary is needed
  Result<std::unique_ptr<model::GgufFile>> f = model::GgufFile::open(path, opt);
  if (!f.ok()) return f.status();
  Result<std::unique_ptr<Tokenizer>> t = from_gguf(**f);
  if (t.ok()) return t;
  // A broken vocabulary is reported; only a missing or unsupported one is replaced.
  if (t.status().code() != StatusCode::not_found && t.status().code() != StatusCode::unsupported) {
    return Status(t.status().code(), path + ": " + t.status().message());
  }
  // A tokenizer.model beside the file stands in for a missing or unsupported vocabulary.
  const size_t slash = path.find_last_of('/');
  const std::string sidecar =
      (slash == std::string::npos ? std::string() : path.substr(0, slash + 1)) + "tokenizer.model";
  if (std::ifstream(sidecar).good()) return from_spm_file(sidecar);
  return Status(t.status().code(), path + ": " + t.status().message());
}

Status Tokenizer::append_text(std::string_view text, std::vector<int32_t>& out) const {
  if (text.empty()) return {};
  if (bpe_) return bpe_->encode(text, out);
  std::vector<int> ids;
  const auto st = sp_->Encode(text, &ids);
  (void)st;  // fails only when no model is loaded, which create() rules out
  out.insert(out.end(), ids.begin(), ids.end());
  return {};
}

Result<std::vector<int32_t>> Tokenizer::encode(std::string_view text, bool add_bos,
                                               bool parse_special) const {
  if (const size_t bad = utf8_first_invalid(text); bad != std::string_view::npos) {
    char msg[96];
    std::snprintf(msg, sizeof msg, "text is not valid UTF-8 (byte 0x%02x at offset %zu)",
                  static_cast<unsigned char>(text[bad]), bad);
    return Status(StatusCode::invalid_argument, msg);
  }
  std::vector<int32_t> out;
  if (add_bos && bos_ >= 0) out.push_back(bos_);
  if (split_.empty() || (!parse_special && !split_always_)) {
    if (Status st = append_text(text, out); !st.ok()) return st;
    return out;
  }
  size_t start = 0;  // start of the pending plain-text span
  for (size_t i = 0; i < text.size();) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    const Spelling* hit = nullptr;
    if (split_first_[c]) {
      for (const Spelling& s : split_.find(c)->second) {  // longest first
        if ((parse_special || !s.control) && text.compare(i, s.text.size(), s.text) == 0) {
          hit = &s;
          break;
        }
      }
    }
    if (!hit) {
      ++i;
      continue;
    }
    if (Status st = append_text(text.substr(start, i - start), out); !st.ok()) return st;
    out.push_back(hit->id);
    i += hit->text.size();
    start = i;
  }
  if (Status st = append_text(text.substr(start), out); !st.ok()) return st;
  return out;
}

std::string Tokenizer::decode(std::span<const int32_t> ids, bool render_special) const {
  if (bpe_) {
    std::string bytes, out;
    for (int32_t id : ids) bytes += bpe_piece(id, render_special);
    utf8_sanitize(bytes, out, /*hold_incomplete=*/false);
    return out;
  }
  std::string out, run_text;
  std::vector<int> run;
  auto flush = [&] {
    if (run.empty()) return;
    run_text.clear();
    const auto st = sp_->Decode(run, &run_text);
    (void)st;
    out += run_text;
    run.clear();
  };
  for (int32_t id : ids) {
    if (id < 0 || id >= n_vocab()) continue;
    const PieceType t = pieces_[id].type;
    if (t == PieceType::control || (t == PieceType::unknown && render_special)) {
      flush();
      if (render_special) out += pieces_[id].piece;
    } else {
      run.push_back(id);
    }
  }
  flush();
  return out;
}

std::string_view Tokenizer::piece(int32_t id) const {
  return id >= 0 && id < n_vocab() ? std::string_view(pieces_[id].piece) : std::string_view();
}

PieceType Tokenizer::piece_type(int32_t id) const {
  return id >= 0 && id < n_vocab() ? pieces_[id].type : PieceType::unused;
}

std::string Tokenizer::token_to_piece(int32_t id, bool render_special) const {
  if (id < 0 || id >= n_vocab()) return {};
  if (bpe_) return bpe_piece(id, render_special);
  const SpmPiece& p = pieces_[id];
  switch (p.type) {
    case PieceType::control:
      return render_special ? p.piece : std::string();
    case PieceType::unknown:
      return render_special ? p.piece : std::string(kUnkSurface);
    case PieceType::byte: {
      unsigned v = 0;
      if (p.piece.size() == 6 && std::sscanf(p.piece.c_str(), "<0x%2X>", &v) == 1) {
        return std::string(1, static_cast<char>(v));
      }
      return p.piece;
    }
    default:
      break;
  }
  if (!escape_ws_) return p.piece;
  std::string s;
  s.reserve(p.piece.size());
  for (size_t i = 0; i < p.piece.size();) {
    if (p.piece.compare(i, kSpace.size(), kSpace) == 0) {
      s += ' ';
      i += kSpace.size();
    } else {
      s += p.piece[i++];
    }
  }
  return s;
}

std::string Tokenizer::bpe_piece(int32_t id, bool render_special) const {
  if (id < 0 || id >= n_vocab()) return {};
  const SpmPiece& p = pieces_[id];
  switch (p.type) {
    case PieceType::control:
    case PieceType::unknown:
      return render_special ? p.piece : std::string();
    case PieceType::user_defined:
      return p.piece;  // added tokens are stored as text, not byte-mapped
    case PieceType::normal:
    case PieceType::byte:
      return bpe_bytes_[id];
    default:
      return {};  // unused entries (padding) stand for nothing
  }
}

std::string Tokenizer::pre_tokenizer() const {
  return bpe_ ? bpe_->pre_tokenizer().name() : std::string();
}

bool Tokenizer::is_eog(int32_t id) const {
  return id >= 0 && std::find(eog_.begin(), eog_.end(), id) != eog_.end();
}

std::optional<int32_t> Tokenizer::special_id(std::string_view text) const {
  auto it = special_ids_.find(std::string(text));
  if (it == special_ids_.end()) return std::nullopt;
  return it->second;
}

std::string StreamDecoder::push(int32_t id) {
  pending_ += tok_.token_to_piece(id, render_special_);
  std::string out;
  const size_t used = utf8_sanitize(pending_, out, /*hold_incomplete=*/true);
  pending_.erase(0, used);
  return out;
}

std::string StreamDecoder::flush() {
  std::string out;
  utf8_sanitize(pending_, out, /*hold_incomplete=*/false);
  pending_.clear();
  return out;
}

}  // namespace rc::tok
