// Tokenizer for the two vocabulary kinds GGUF files carry.
//
// SPM ("llama" vocabularies), through sentencepiece. Two sources give the
// same tokenizer:
//  - a sidecar tokenizer.model (the sentencepiece model file itself);
//  - a GGUF vocabulary (tokenizer.ggml.tokens / scores / token_type with
//    tokenizer.ggml.model == "llama"), turned into a sentencepiece BPE
//    ModelProto in memory. llama.cpp's SPM tokenizer merges the highest-score
//    pair first (leftmost on ties), which is exactly sentencepiece BPE; the
//    normalizer is llama's: identity, dummy prefix per
//    tokenizer.ggml.add_space_prefix (default on), extra whitespace kept
//    unless tokenizer.ggml.remove_extra_whitespaces, and
//    tokenizer.ggml.precompiled_charsmap when the file carries one.
//
// Byte-level BPE ("gpt2" vocabularies: Llama 3.x, Qwen2/2.5/3, R1 distills,
// SmolLM, GPT-2), by bpe-model.h: tokenizer.ggml.tokens / token_type /
// merges, pre-tokenizer by tokenizer.ggml.pre (bpe-pretokenize.h; an unknown
// name is refused with `unsupported`, a missing key means "default" as in
// llama.cpp). Special ids default to none; add_bos_token defaults to on for
// the llama3 pre-tokenizers and off otherwise. No normalizer runs (llama.cpp
// runs none either): Qwen's tokenizer.json applies NFC first, so text that is
// not in NFC can tokenize differently from Hugging Face there.
//
// Special tokens: CONTROL and UNKNOWN pieces (GGUF types 3, 2; e.g. <s>,
// <|im_end|>, <|eot_id|>) become their ids only when parse_special is set:
// encode() then splits the text on their exact spellings first (leftmost,
// longest), emits their ids, and encodes the text between them separately
// (each such SPM span gets sentencepiece's dummy prefix, as llama.cpp does
// after a special token). USER_DEFINED pieces (type 4; e.g. Qwen3's <think>)
// are always matched as whole pieces, as in llama.cpp and Hugging Face (SPM:
// by sentencepiece itself).
//
// Thread safety: a Tokenizer is immutable after loading; all methods are const
// and may be called from several threads at once.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "model/gguf-reader.h"
#include "radixchat/status.h"
#include "spm-proto.h"

namespace sentencepiece {
class SentencePieceProcessor;
}

namespace rc::tok {

class BpeModel;

class Tokenizer {
 public:
  // Ids of the special tokens (-1: none) and whether BOS is added by default.
  struct Specials {
    int32_t bos = -1, eos = -1, unk = -1, pad = -1, eot = -1, eom = -1;
    bool add_bos = true;
    bool add_eos = false;
  };
  enum class Kind { spm, bpe };

  // From a GGUF's metadata ("llama" or "gpt2" tokenizer model). unsupported
  // for another model or an unknown pre-tokenizer, not_found when the file has
  // no vocabulary, corrupt_data for a vocabulary that cannot work (missing
  // merges, a merge or special id naming no entry, a byte without its entry).

  static Result<std::unique_ptr<Tokenizer>> from_gguf(const model::GgufFile& file);
  // From a sentencepiece model file / its bytes.
  static Result<std::unique_ptr<Tokenizer>> from_spm_file(const std::string& path);
  static Result<std::unique_ptr<Tokenizer>> from_spm_bytes(std::string bytes);
  // `path` is a GGUF (its vocabulary; or, when it has none, a tokenizer.model
  // in the same folder) or a sentencepiece model file. Only the GGUF header
  // is read: vocabulary-only GGUFs and models of any tensor type work.
  static Result<std::unique_ptr<Tokenizer>> load(const std::string& path);
  ~Tokenizer();

  // Token ids of `text` (BOS first when add_bos and the vocabulary has one).
  // Empty text gives no ids (just BOS). invalid_argument when `text` is not
  // valid UTF-8, naming the offset. parse_special=false encodes special
  // spellings as plain text (use for untrusted text).
  Result<std::vector<int32_t>> encode(std::string_view text, bool add_bos,
                                      bool parse_special = true) const;
  // Text of `ids`. Control tokens are dropped unless render_special. Each run
  // of text tokens between control tokens loses the dummy-prefix space that
  // encode() added, so decode(encode(t), true) == t for valid UTF-8 t. Ids
  // outside the vocabulary are skipped; BPE bytes that do not form UTF-8
  // become U+FFFD.
  std::string decode(std::span<const int32_t> ids, bool render_special = false) const;
  // The bytes one token stands for (SPM: ▁ as a space, <0xNN> as that byte;
  // BPE: the entry mapped back through GPT-2's byte table), for streaming; may be part of a UTF-8
  // character (see StreamDecoder). Control tokens give "" unless render_special. "" for ids outside
  // the vocabulary.
  std::string token_to_piece(int32_t id, bool render_special = false) const;
  // The vocabulary entry as stored ("▁the", "<0x0A>", "<s>", "Ġthe").
  std::string_view piece(int32_t id) const;
  PieceType piece_type(int32_t id) const;

  int n_vocab() const { return static_cast<int>(pieces_.size()); }
  int32_t bos() const { return bos_; }  // -1 when none
  int32_t eos() const { return eos_; }
  int32_t unk() const { return unk_; }
  int32_t pad() const { return pad_; }
  int32_t eot() const { return eot_; }  // -1 when none
  // Whether BOS should be added to a plain prompt (tokenizer.ggml.add_bos_token).
  bool add_bos_default() const { return add_bos_; }
  // tokenizer.ggml.add_eos_token (BPE vocabularies; encode() never appends EOS).
  bool add_eos_default() const { return add_eos_; }
  Kind kind() const { return bpe_ ? Kind::bpe : Kind::spm; }
  // The BPE pre-tokenizer's name ("" for SPM).
  std::string pre_tokenizer() const;
  // End of generation: eos, eot, and control/user-defined turn enders such as
  // <|end|>, <|im_end|>, <|eot_id|>, <|endoftext|>.
  bool is_eog(int32_t id) const;
  const std::vector<int32_t>& eog_ids() const { return eog_; }
  // Id of a piece that encode() emits as one token when it meets `text`
  // (control, unknown or user-defined spelling); nullopt otherwise.
  std::optional<int32_t> special_id(std::string_view text) const;
  // "gguf" or "tokenizer.model": where the vocabulary came from.
  const std::string& source() const { return source_; }

 private:
  Tokenizer();
  // `pieces` are the vocabulary as stored; `serialized` the ModelProto
  // sentencepiece loads (whose pieces may be renamed to satisfy it).
  static Result<std::unique_ptr<Tokenizer>> create(std::vector<SpmPiece> pieces,
                                                   const std::string& serialized,
                                                   const Specials& specials, std::string source);
  // A byte-level BPE tokenizer over `pieces` (gguf-bpe-vocab.cpp).
  static std::unique_ptr<Tokenizer> create_bpe(std::vector<SpmPiece> pieces,
                                               std::unique_ptr<BpeModel> bpe,
                                               const Specials& specials);
  static Result<std::unique_ptr<Tokenizer>> from_gguf_bpe(const model::GgufFile& file);
  // What both kinds share once the pieces are known: specials, EOG ids,
  // the spellings encode() splits out.
  void index_pieces(const Specials& specials);
  Status append_text(std::string_view text, std::vector<int32_t>& out) const;
  std::string bpe_piece(int32_t id, bool render_special) const;

  std::unique_ptr<sentencepiece::SentencePieceProcessor> sp_;  // SPM only
  std::unique_ptr<BpeModel> bpe_;                              // BPE only
  std::vector<std::string> bpe_bytes_;  // BPE: the bytes of each normal entry
  std::vector<SpmPiece> pieces_;  // as in the vocabulary (before any renaming for sentencepiece)
  std::string source_;
  int32_t bos_ = -1, eos_ = -1, unk_ = -1, pad_ = -1, eot_ = -1;
  bool add_bos_ = true, add_eos_ = false;
  bool escape_ws_ = true;
  std::vector<int32_t> eog_;
  // Spellings split out of text by encode(), by first byte, longest first;
  // `control` ones only when parse_special.
  struct Spelling {
    std::string text;
    int32_t id;
    bool control;
  };
  std::unordered_map<unsigned char, std::vector<Spelling>> split_;
  bool split_always_ = false;            // some spelling is split even without parse_special
  std::array<bool, 256> split_first_{};  // fast reject for bytes that start no spelling
  std::unordered_map<std::string, int32_t> special_ids_;
};

// Turns a stream of token ids into text that never splits a UTF-8
// character: push() returns only whole characters and holds back the bytes
// of an incomplete one until the next token completes it. Invalid bytes are
// replaced by U+FFFD, so everything returned is valid UTF-8.
class StreamDecoder {
 public:
  explicit StreamDecoder(const Tokenizer& tok, bool render_special = false)
      : tok_(tok), render_special_(render_special) {}
  std::string push(int32_t id);
  // The held bytes at the end of the stream (as U+FFFD when incomplete).
  std::string flush();
  void reset() { pending_.clear(); }

 private:
  const Tokenizer& tok_;
  bool render_special_;
  std::string pending_;
};

}  // namespace rc::tok
