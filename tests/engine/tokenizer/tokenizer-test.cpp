// Tokenizer: round trips, invalid input, special tokens, and the GGUF
// vocabulary path against the sidecar tokenizer.model on the bundled vocabulary.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>

#include "model/gguf-writer.h"
#include "random-gguf.h"
#include "tokenizer-fixtures.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/utf8.h"

namespace rc::tok {
namespace {

using rc::testing::bundled_gguf_tokenizer;
using rc::testing::bundled_sidecar;
using rc::testing::kBundledTokenizer;
using rc::testing::sample_texts;

std::vector<int32_t> enc(const Tokenizer& t, std::string_view s, bool bos = false) {
  Result<std::vector<int32_t>> r = t.encode(s, bos);
  EXPECT_TRUE(r.ok()) << r.status().to_string();
  return r.ok() ? *r : std::vector<int32_t>{};
}

TEST(Tokenizer, SidecarBasics) {
  const Tokenizer& t = bundled_sidecar();
  EXPECT_EQ(t.source(), "tokenizer.model");
  EXPECT_EQ(t.n_vocab(), 4096);
  EXPECT_EQ(t.bos(), 1);
  EXPECT_EQ(t.eos(), 2);
  EXPECT_EQ(t.unk(), 0);
  EXPECT_TRUE(t.add_bos_default());
  EXPECT_TRUE(enc(t, "").empty());
  EXPECT_EQ(enc(t, "", true), std::vector<int32_t>{1});
  EXPECT_EQ(t.piece(1), "<s>");
  EXPECT_EQ(t.piece_type(1), PieceType::control);
  EXPECT_EQ(t.token_to_piece(1), "");
  EXPECT_EQ(t.token_to_piece(1, true), "<s>");
  EXPECT_EQ(t.token_to_piece(-1), "");
  EXPECT_EQ(t.token_to_piece(4096), "");
  // <|end|> closes a radixchat turn: end of generation for both sources.
  const std::optional<int32_t> end = t.special_id("<|end|>");
  ASSERT_TRUE(end.has_value());
  EXPECT_TRUE(t.is_eog(*end));
  EXPECT_TRUE(t.is_eog(2));
  EXPECT_FALSE(t.is_eog(1));
}

TEST(Tokenizer, RoundTrips) {
  for (const Tokenizer* t : {&bundled_sidecar(), &bundled_gguf_tokenizer()}) {
    for (const std::string& s : sample_texts(300)) {
      const std::vector<int32_t> ids = enc(*t, s);
      EXPECT_EQ(t->decode(ids, /*render_special=*/true), s) << t->source();
      for (int32_t id : ids) ASSERT_TRUE(id >= 0 && id < t->n_vocab());
    }
  }
}

TEST(Tokenizer, ByteFallbackForRareCharacters) {
  const Tokenizer& t = bundled_sidecar();
  const std::string rare = "\xF0\x9D\x94\x98 \xEA\x99\xAE \xF0\x9F\xA6\x80";  // 𝔘 ꙮ 🦀
  const std::vector<int32_t> ids = enc(t, rare);
  int bytes = 0;
  for (int32_t id : ids) bytes += t.piece_type(id) == PieceType::byte;
  EXPECT_GE(bytes, 8);
  EXPECT_EQ(t.decode(ids), rare);
  for (int32_t id : ids) EXPECT_NE(id, t.unk());
}

TEST(Tokenizer, InvalidUtf8IsAStatus) {
  const std::pair<std::string, std::string> cases[] = {
      {"\xff", "byte 0xff at offset 0"},
      {"abc\xc3", "byte 0xc3 at offset 3"},           // truncated sequence
      {"ok \xc0\xaf", "byte 0xc0 at offset 3"},       // overlong '/'
      {"\xed\xa0\x80", "byte 0xed at offset 0"},      // UTF-16 surrogate
      {"\xf4\x90\x80\x80", "offset 0"},               // above U+10FFFF
      {"caf\xc3\xa9 \x80", "byte 0x80 at offset 6"},  // stray continuation
  };
  for (const Tokenizer* t : {&bundled_sidecar(), &bundled_gguf_tokenizer()}) {
    for (const auto& [text, where] : cases) {
      Result<std::vector<int32_t>> r = t->encode(text, true);
      ASSERT_FALSE(r.ok());
      EXPECT_EQ(r.status().code(), StatusCode::invalid_argument);
      EXPECT_NE(r.status().message().find("not valid UTF-8"), std::string::npos);
      EXPECT_NE(r.status().message().find(where), std::string::npos) << r.status().message();
    }
  }
}

TEST(Tokenizer, VeryLongInput) {
  std::string text;
  const std::vector<std::string> samples = sample_texts(64);
  for (size_t i = 0; text.size() < (1u << 20); ++i) text += samples[i % samples.size()] + " ";
  const auto t0 = std::chrono::steady_clock::now();
  const std::vector<int32_t> ids = enc(bundled_sidecar(), text, true);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_FALSE(ids.empty());
  EXPECT_EQ(ids[0], 1);
  EXPECT_EQ(bundled_sidecar().decode(ids), text);
  EXPECT_LT(s, 30.0);
  std::printf("1 MB -> %zu tokens in %.2f s\n", ids.size(), s);
}

TEST(Tokenizer, ChatMarkersAreSingleTokens) {
  for (const Tokenizer* t : {&bundled_sidecar(), &bundled_gguf_tokenizer()}) {
    for (const char* m : {"<|system|>", "<|user|>", "<|assistant|>", "<|end|>"}) {
      const std::vector<int32_t> ids = enc(*t, m);
      ASSERT_EQ(ids.size(), 1u) << m;
      EXPECT_EQ(t->piece(ids[0]), m);
      EXPECT_EQ(t->piece_type(ids[0]), PieceType::user_defined);
      EXPECT_EQ(t->special_id(m), ids[0]);
    }
    const std::vector<int32_t> ids = enc(*t, "<|user|>\nhi<|end|>\n<|assistant|>\n");
    EXPECT_EQ(ids.front(), *t->special_id("<|user|>"));
    EXPECT_NE(std::find(ids.begin(), ids.end(), *t->special_id("<|end|>")), ids.end());
    // Control tokens in text: split out when parse_special, plain text otherwise.
    const std::vector<int32_t> with = enc(*t, "<s>hello</s>");
    EXPECT_EQ(with.front(), 1);
    EXPECT_EQ(with.back(), 2);
    Result<std::vector<int32_t>> without = t->encode("<s>hello</s>", false, false);
    ASSERT_TRUE(without.ok());
    EXPECT_EQ(std::count(without->begin(), without->end(), 1), 0);
    EXPECT_EQ(t->decode(*without), "<s>hello</s>");
    EXPECT_EQ(t->decode(with), "hello");
    EXPECT_EQ(t->decode(with, true), "<s>hello</s>");
  }
}

TEST(Tokenizer, GgufVocabularyMatchesSidecar) {
  const Tokenizer& side = bundled_sidecar();
  const Tokenizer& gguf = bundled_gguf_tokenizer();
  EXPECT_EQ(gguf.source(), "gguf");
  ASSERT_EQ(gguf.n_vocab(), side.n_vocab());
  EXPECT_EQ(gguf.bos(), side.bos());
  EXPECT_EQ(gguf.eos(), *side.special_id("<|end|>"));  // as the exporter writes it
  int compared = 0;
  for (const std::string& s : sample_texts(3000)) {
    ASSERT_EQ(enc(side, s, true), enc(gguf, s, true)) << "text: " << s;
    ++compared;
  }
  for (int32_t id = 0; id < side.n_vocab(); ++id) {
    ASSERT_EQ(side.token_to_piece(id, true), gguf.token_to_piece(id, true)) << id;
  }
  std::printf("%d texts tokenized identically\n", compared);
}

TEST(Tokenizer, GoldenIdsFromPythonSentencepiece) {
  const std::filesystem::path golden =
      std::filesystem::path(RADIXCHAT_SOURCE_DIR) / "assets/model/golden.json";
  ASSERT_TRUE(std::filesystem::exists(golden)) << golden << " is committed";
  const std::vector<rc::testing::GoldenCase> cases = rc::testing::golden_cases(golden.string());
  ASSERT_FALSE(cases.empty());
  std::vector<const Tokenizer*> toks = {&bundled_sidecar(), &bundled_gguf_tokenizer()};
  std::unique_ptr<Tokenizer> shipped;
  const std::filesystem::path gguf =
      std::filesystem::path(RADIXCHAT_SOURCE_DIR) / "assets/model/radixchat-demo.gguf";
  auto loaded = Tokenizer::load(gguf.string());
  ASSERT_TRUE(loaded.ok()) << loaded.status().to_string();
  EXPECT_EQ((*loaded)->source(), "gguf");
  shipped = std::move(loaded).value();
  toks.push_back(shipped.get());
  for (const Tokenizer* t : toks) {
    for (const auto& c : cases)
      EXPECT_EQ(enc(*t, c.text, true), c.tokens) << c.name << " via " << t->source();
  }
}

TEST(Tokenizer, StreamDecoderNeverSplitsCharacters) {
  const Tokenizer& t = bundled_sidecar();
  for (const std::string& s : sample_texts(200)) {
    StreamDecoder sd(t);
    std::string out;
    for (int32_t id : enc(t, s)) {
      const std::string chunk = sd.push(id);
      ASSERT_EQ(utf8_first_invalid(chunk), std::string::npos) << "chunk of " << s;
      out += chunk;
    }
    out += sd.flush();
    EXPECT_EQ(out, s);
  }
  // Byte tokens of one emoji: nothing until the character is complete.
  auto byte = [&t](int b) {
    char p[8];
    std::snprintf(p, sizeof p, "<0x%02X>", b);
    for (int32_t id = 0; id < t.n_vocab(); ++id)
      if (t.piece(id) == p) return id;
    return -1;
  };
  StreamDecoder sd(t);
  EXPECT_EQ(sd.push(byte(0xF0)), "");
  EXPECT_EQ(sd.push(byte(0x9F)), "");
  EXPECT_EQ(sd.push(byte(0x99)), "");
  EXPECT_EQ(sd.push(byte(0x82)), "\xF0\x9F\x99\x82");
  // Invalid bytes come out as U+FFFD, never as broken UTF-8.
  EXPECT_EQ(sd.push(byte(0xFF)), "\xEF\xBF\xBD");
  EXPECT_EQ(sd.push(byte(0xE2)), "");
  EXPECT_EQ(sd.push(enc(t, "a")[0]),
            "\xEF\xBF\xBD"
            "a");
  EXPECT_EQ(sd.push(byte(0xC3)), "");
  EXPECT_EQ(sd.flush(), "\xEF\xBF\xBD");
  EXPECT_EQ(sd.flush(), "");
}

}  // namespace
}  // namespace rc::tok
