// The few fields of sentencepiece's ModelProto that RadixChat writes and
// reads, in protobuf wire format by hand (no sentencepiece_model.pb.h is
// installed). Field numbers are those of sentencepiece_model.proto:
//   ModelProto      { pieces = 1; trainer_spec = 2; normalizer_spec = 3; }
//   SentencePiece   { piece = 1; score = 2 (float); type = 3 (enum); }
//   TrainerSpec     { model_type = 3; vocab_size = 4; treat_whitespace_as_suffix = 24;
//                     byte_fallback = 35; unk_id = 40; bos_id = 41; eos_id = 42; pad_id = 43; }
//   NormalizerSpec  { name = 1; precompiled_charsmap = 2; add_dummy_prefix = 3;
//                     remove_extra_whitespaces = 4; escape_whitespaces = 5; }
// Unknown fields are skipped when reading. Defaults below are the proto's.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "radixchat/status.h"

namespace rc::tok {

// sentencepiece's piece types; GGUF's tokenizer.ggml.token_type uses the same values.
enum class PieceType : int32_t {
  normal = 1,
  unknown = 2,
  control = 3,
  user_defined = 4,
  unused = 5,
  byte = 6,
};

struct SpmPiece {
  std::string piece;
  float score = 0.0f;
  PieceType type = PieceType::normal;
};

struct SpmModel {
  std::vector<SpmPiece> pieces;
  // TrainerSpec
  int32_t model_type = 1;  // 1 UNIGRAM (proto default), 2 BPE, 3 WORD, 4 CHAR
  int32_t vocab_size = 0;
  bool byte_fallback = false;
  bool treat_whitespace_as_suffix = false;
  int32_t unk_id = 0, bos_id = 1, eos_id = 2, pad_id = -1;
  // NormalizerSpec
  std::string normalizer_name;
  std::string precompiled_charsmap;
  bool add_dummy_prefix = true;
  bool remove_extra_whitespaces = true;
  bool escape_whitespaces = true;
};

std::string serialize_spm_model(const SpmModel& model);
// corrupt_data for malformed wire data (truncated varints, lengths past the end).
Result<SpmModel> parse_spm_model(std::string_view bytes);

}  // namespace rc::tok
