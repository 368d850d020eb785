// GGUF vocabularies: control markers split out of text, unsupported models,
// odd vocabularies sentencepiece would refuse, loading by path, the proto.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "model/gguf-writer.h"
#include "random-gguf.h"
#include "tokenizer-fixtures.h"
#include "tokenizer/spm-proto.h"
#include "tokenizer/tokenizer.h"

namespace rc::tok {
namespace {

using model::GgufOwnedValue;
using model::GgufWriter;
using rc::testing::VocabPieces;

struct Owned {
  std::vector<uint8_t> bytes;
  std::unique_ptr<model::GgufFile> file;
};

Owned open_bytes(std::vector<uint8_t> bytes) {
  Owned o{std::move(bytes), nullptr};
  auto f = model::GgufFile::from_memory({o.bytes.data(), o.bytes.size()});
  EXPECT_TRUE(f.ok()) << f.status().to_string();
  if (f.ok()) o.file = std::move(f).value();
  return o;
}

// The synthetic byte-level vocabulary plus ChatML markers as CONTROL tokens.
VocabPieces chatml_vocab() {
  VocabPieces v = rc::testing::synthetic_vocab(400);
  for (const char* m : {"<|im_start|>", "<|im_end|>", "<|im"}) {
    v.tokens.push_back(m);
    v.scores.push_back(0);
    v.types.push_back(3);
  }
  return v;
}

Result<std::unique_ptr<Tokenizer>> from_vocab(const VocabPieces& v, Owned* keep,
                                              const std::function<void(GgufWriter&)>& edit = {}) {
  GgufWriter w;
  rc::testing::add_vocab_metadata(v, /*add_space_prefix=*/true, w);
  if (edit) edit(w);
  *keep = open_bytes(w.serialize());
  if (!keep->file) return Status(StatusCode::internal, "gguf did not open");
  return Tokenizer::from_gguf(*keep->file);
}

TEST(TokenizerVocab, ControlMarkersAreSplitOutOfText) {
  Owned keep;
  auto t = from_vocab(chatml_vocab(), &keep);
  ASSERT_TRUE(t.ok()) << t.status().to_string();
  const Tokenizer& tok = **t;
  const int32_t start = *tok.special_id("<|im_start|>"), end = *tok.special_id("<|im_end|>");
  EXPECT_TRUE(tok.is_eog(end));
  const std::string text =
      "<|im_start|>user\nhi there<|im_end|>\n<|im_end|><|im_start|>assistant\n";
  auto ids = tok.encode(text, false);
  ASSERT_TRUE(ids.ok());
  EXPECT_EQ(ids->front(), start);
  EXPECT_EQ(std::count(ids->begin(), ids->end(), start), 2);
  EXPECT_EQ(std::count(ids->begin(), ids->end(), end), 2);
  // Adjacent specials stay adjacent; the longest spelling wins over "<|im".
  const std::vector<int32_t> pair = {end, start};
  EXPECT_NE(std::search(ids->begin(), ids->end(), pair.begin(), pair.end()), ids->end());
  EXPECT_EQ(std::count(ids->begin(), ids->end(), *tok.special_id("<|im")), 0);
  EXPECT_EQ(tok.decode(*ids, true), text);
  // Every text span gets the dummy prefix (add_space_prefix), as in llama.cpp.
  auto span = tok.encode("user", false);
  ASSERT_TRUE(span.ok());
  EXPECT_EQ(tok.token_to_piece(span->front()).front(), ' ');
  // Untrusted text: no special ids at all.
  auto plain = tok.encode(text, false, /*parse_special=*/false);
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(std::count(plain->begin(), plain->end(), start), 0);
  EXPECT_EQ(tok.decode(*plain), text);
  // Empty text and text that is only specials.
  EXPECT_TRUE(tok.encode("", false)->empty());
  EXPECT_EQ(*tok.encode("<|im_end|>", true), (std::vector<int32_t>{1, end}));
}

TEST(TokenizerVocab, UnsupportedOrMissingVocabulary) {
  Owned keep;
  auto bert = from_vocab(chatml_vocab(), &keep,
                         [](GgufWriter& w) { w.set_string("tokenizer.ggml.model", "bert"); });
  ASSERT_FALSE(bert.ok());
  EXPECT_EQ(bert.status().code(), StatusCode::unsupported);
  EXPECT_EQ(bert.status().message().rfind("unsupported tokenizer model 'bert'", 0), 0u)
      << bert.status().message();
  // A gpt2 (byte-level BPE) vocabulary without merges is refused as such.
  auto gpt2 = from_vocab(chatml_vocab(), &keep,
                         [](GgufWriter& w) { w.set_string("tokenizer.ggml.model", "gpt2"); });
  ASSERT_FALSE(gpt2.ok());
  EXPECT_EQ(gpt2.status().code(), StatusCode::corrupt_data);
  EXPECT_NE(gpt2.status().message().find("tokenizer.ggml.merges"), std::string::npos)
      << gpt2.status().message();

  GgufWriter w;
  w.set_string("general.architecture", "llama");
  Owned none = open_bytes(w.serialize());
  auto missing = Tokenizer::from_gguf(*none.file);
  EXPECT_EQ(missing.status().code(), StatusCode::not_found);

  auto bad_scores = from_vocab(chatml_vocab(), &keep, [](GgufWriter& w) {
    w.set("tokenizer.ggml.scores", GgufOwnedValue::f32s({1, 2}));
  });
  EXPECT_EQ(bad_scores.status().code(), StatusCode::corrupt_data);
  auto bad_bos = from_vocab(chatml_vocab(), &keep,
                            [](GgufWriter& w) { w.set_u32("tokenizer.ggml.bos_token_id", 99999); });
  EXPECT_NE(bad_bos.status().message().find("bos_token_id 99999 is outside the vocabulary"),
            std::string::npos);
}

TEST(TokenizerVocab, OddVocabulariesStillLoad) {
  VocabPieces v = chatml_vocab();
  v.tokens[300] = v.tokens[301];  // duplicate piece
  v.tokens[302] = "";             // empty piece
  v.types[0] = 1;                 // <unk> typed as normal: the unknown id says which it is
  v.types[303] = 2;               // a second UNKNOWN-typed piece
  Owned keep;
  auto t = from_vocab(v, &keep);
  ASSERT_TRUE(t.ok()) << t.status().to_string();
  EXPECT_EQ((*t)->n_vocab(), static_cast<int>(v.tokens.size()));
  EXPECT_EQ((*t)->piece(302), "");  // kept as stored
  auto ids = (*t)->encode("hello world", true);
  ASSERT_TRUE(ids.ok());
  EXPECT_EQ((*t)->decode(*ids), "hello world");

  // Incomplete byte pieces: byte fallback is dropped, unknown text maps to <unk>.
  VocabPieces nb = rc::testing::synthetic_vocab(400);
  nb.tokens[3 + 0x41] = "A-not-a-byte";
  nb.types[3 + 0x41] = 1;
  auto t2 = from_vocab(nb, &keep);
  ASSERT_TRUE(t2.ok()) << t2.status().to_string();
  auto ids2 = (*t2)->encode("\xE6\x9D\xB1", false);
  ASSERT_TRUE(ids2.ok());
  EXPECT_NE(std::find(ids2->begin(), ids2->end(), 0), ids2->end());

  VocabPieces nounk = rc::testing::synthetic_vocab(400);
  nounk.types[0] = 1;
  auto t3 = from_vocab(nounk, &keep, [](GgufWriter& w) {
    w.set("tokenizer.ggml.unknown_token_id", GgufOwnedValue::i32(-1));
  });
  EXPECT_EQ(t3.status().message(), "the vocabulary has no unknown token");
}

TEST(TokenizerVocab, LoadByPath) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(::testing::TempDir()) / "rc-tok-load";
  fs::create_directories(dir);
  // A tokenizer.model directly.
  auto direct = Tokenizer::load(rc::testing::kBundledTokenizer);
  ASSERT_TRUE(direct.ok()) << direct.status().to_string();
  EXPECT_EQ((*direct)->source(), "tokenizer.model");
  // A GGUF with a vocabulary.
  const std::vector<uint8_t> vocab = rc::testing::bundled_vocab_gguf();
  std::ofstream(dir / "vocab.gguf", std::ios::binary)
      .write(reinterpret_cast<const char*>(vocab.data()),
             static_cast<std::streamsize>(vocab.size()));
  auto g = Tokenizer::load((dir / "vocab.gguf").string());
  ASSERT_TRUE(g.ok()) << g.status().to_string();
  EXPECT_EQ((*g)->source(), "gguf");
  // A GGUF without one falls back to tokenizer.model beside it.
  GgufWriter w;
  w.set_string("general.architecture", "llama");
  ASSERT_TRUE(w.write_file((dir / "novocab.gguf").string()).ok());
  auto none = Tokenizer::load((dir / "novocab.gguf").string());
  EXPECT_EQ(none.status().code(), StatusCode::not_found);
  fs::copy_file(rc::testing::kBundledTokenizer, dir / "tokenizer.model",
                fs::copy_options::overwrite_existing);
  auto side = Tokenizer::load((dir / "novocab.gguf").string());
  ASSERT_TRUE(side.ok()) << side.status().to_string();
  EXPECT_EQ((*side)->source(), "tokenizer.model");
  // Neither GGUF nor sentencepiece.
  std::ofstream(dir / "junk.bin") << "this is not a model at all";
  auto junk = Tokenizer::load((dir / "junk.bin").string());
  ASSERT_FALSE(junk.ok());
  EXPECT_NE(junk.status().message().find("neither a GGUF file nor a sentencepiece model"),
            std::string::npos)
      << junk.status().message();
  EXPECT_EQ(Tokenizer::load((dir / "absent").string()).status().code(), StatusCode::not_found);
  fs::remove_all(dir);
}

TEST(SpmProto, ReadsTheBundledModelAndRoundTrips) {
  std::ifstream in(rc::testing::kBundledTokenizer, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), {});
  Result<SpmModel> m = parse_spm_model(bytes);
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  EXPECT_EQ(m->pieces.size(), 4096u);
  EXPECT_EQ(m->model_type, 2);  // BPE
  EXPECT_TRUE(m->byte_fallback);
  EXPECT_EQ(m->unk_id, 0);
  EXPECT_EQ(m->bos_id, 1);
  EXPECT_EQ(m->eos_id, 2);
  EXPECT_EQ(m->pad_id, -1);
  EXPECT_EQ(m->normalizer_name, "identity");
  EXPECT_FALSE(m->add_dummy_prefix);
  EXPECT_FALSE(m->remove_extra_whitespaces);
  EXPECT_TRUE(m->escape_whitespaces);
  EXPECT_EQ(m->pieces[0].type, PieceType::unknown);
  EXPECT_EQ(m->pieces[1].piece, "<s>");
  EXPECT_EQ(m->pieces[1].type, PieceType::control);
  EXPECT_EQ(m->pieces[3].type, PieceType::user_defined);  // first chat marker

  // serialize -> parse keeps every field we write.
  SpmModel w = *m;
  w.precompiled_charsmap = std::string("\x01\x02\x00\x03", 4);
  w.pad_id = -1;
  Result<SpmModel> back = parse_spm_model(serialize_spm_model(w));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->pieces.size(), w.pieces.size());
  EXPECT_EQ(back->pieces[100].piece, w.pieces[100].piece);
  EXPECT_EQ(back->pieces[100].score, w.pieces[100].score);
  EXPECT_EQ(back->pad_id, -1);
  EXPECT_EQ(back->precompiled_charsmap, w.precompiled_charsmap);
  EXPECT_EQ(back->model_type, 2);

  EXPECT_FALSE(parse_spm_model(std::string("\x0a\xff\xff\xff\xff\x0f", 6)).ok());
  EXPECT_FALSE(parse_spm_model(std::string("\x0a", 1)).ok());
}

}  // namespace
}  // namespace rc::tok
