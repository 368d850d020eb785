// Byte-level BPE mechanics on small hand-built vocabularies: pre-tokenizer
// splits, merge order, ignore_merges, special tokens, decoding and
// streaming, and the errors a broken vocabulary gets.
#include <gtest/gtest.h>

#include "bpe-fixtures.h"
#include "tokenizer/bpe-model.h"
#include "tokenizer/bpe-pretokenize.h"

namespace rc::tok {
namespace {

using rc::testing::BpeVocab;
using rc::testing::byte_vocab;
using rc::testing::load_bpe;

std::vector<std::string> words(const std::string& pre, const std::string& text) {
  auto p = PreTokenizer::create(pre);
  EXPECT_TRUE(p.ok()) << p.status().to_string();
  std::vector<std::string_view> w;
  EXPECT_TRUE((*p)->split(text, w).ok());
  return {w.begin(), w.end()};
}

using W = std::vector<std::string>;

TEST(BpePreTokenizer, Gpt2) {
  EXPECT_EQ(words("gpt-2", "Hello world, it's 2024!"),
            (W{"Hello", " world", ",", " it", "'s", " 2024", "!"}));
  // A space before a word goes with it; a run keeps all but the last space.
  EXPECT_EQ(words("gpt-2", "a   b"), (W{"a", "  ", " b"}));
  // A tab before a letter is matched by nothing: kept as its own piece.
  EXPECT_EQ(words("gpt-2", "a\tb"), (W{"a", "\t", "b"}));
  EXPECT_EQ(words("gpt-2", "DON'T"), (W{"DON", "'", "T"}));  // case-sensitive
}

TEST(BpePreTokenizer, Llama3) {
  EXPECT_EQ(words("llama-bpe", "12345 DON'T"), (W{"123", "45", " DON", "'T"}));
  EXPECT_EQ(words("llama-bpe", "x\n\n  y"), (W{"x", "\n\n", " ", " y"}));
  EXPECT_EQ(words("llama-bpe", "(hi)"), (W{"(hi", ")"}));
  EXPECT_EQ(words("llama-bpe", "Привет мир"), (W{"Привет", " мир"}));
  EXPECT_EQ(words("llama-bpe", "a.\n\nb"), (W{"a", ".\n\n", "b"}));
}

TEST(BpePreTokenizer, QwenSmollmAndDefault) {
  EXPECT_EQ(words("qwen2", "x12345"), (W{"x", "1", "2", "3", "4", "5"}));
  EXPECT_EQ(words("deepseek-r1-qwen", "x12"), (W{"x", "1", "2"}));
  EXPECT_EQ(words("smollm", "abc123 d"), (W{"abc", "1", "2", "3", " d"}));
  // default: punctuation runs first, then GPT-2's pattern, then digit runs.
  EXPECT_EQ(words("default", "a+b=1234"), (W{"a", "+", "b", "=", "123", "4"}));
  EXPECT_EQ(words("default", "hi!? there"), (W{"hi", "!?", " there"}));
}

TEST(BpePreTokenizer, UnknownNameIsAnError) {
  auto p = PreTokenizer::create("klingon-bpe");
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), StatusCode::unsupported);
  EXPECT_NE(p.status().message().find("'klingon-bpe'"), std::string::npos);
  EXPECT_NE(p.status().message().find("llama-bpe"), std::string::npos);  // lists known names
}

TEST(BpePreTokenizer, LongRunsStayLinear) {
  // Long whitespace and letter runs go through PCRE2 (JIT or interpreter).
  const std::string spaces(1 << 20, ' ');
  auto w = words("llama-bpe", spaces + "x");
  ASSERT_EQ(w.size(), 2u);
  EXPECT_EQ(w[0].size(), spaces.size() - 1);
  EXPECT_EQ(words("qwen2", std::string(1 << 20, 'a')).size(), 1u);
}

TEST(BpeTokenizer, ByteTableRoundTrips) {
  for (int b = 0; b < 256; ++b) {
    const std::string& c = bpe_byte_char(static_cast<uint8_t>(b));
    EXPECT_EQ(bpe_entry_bytes(c), std::string(1, static_cast<char>(b))) << b;
  }
  EXPECT_EQ(bpe_byte_char(' '), "\xC4\xA0");   // Ġ
  EXPECT_EQ(bpe_byte_char('\n'), "\xC4\x8A");  // Ċ
  EXPECT_EQ(bpe_byte_char('A'), "A");
}

TEST(BpeTokenizer, MergesByRankLeftmostFirst) {
  {
    auto l = load_bpe(byte_vocab({{"a", "b"}, {"b", "c"}}));
    ASSERT_TRUE(l.tok.ok()) << l.tok.status().to_string();
    EXPECT_EQ(*(*l.tok)->encode("abc", false), (std::vector<int32_t>{256, 'c'}));
  }
  {
    auto l = load_bpe(byte_vocab({{"b", "c"}, {"a", "b"}}));
    ASSERT_TRUE(l.tok.ok());
    EXPECT_EQ(*(*l.tok)->encode("abc", false), (std::vector<int32_t>{'a', 256}));
  }
  {
    // Equal ranks: the leftmost pair first ("aaa" -> "aa" "a").
    auto l = load_bpe(byte_vocab({{"a", "a"}}));
    ASSERT_TRUE(l.tok.ok());
    EXPECT_EQ(*(*l.tok)->encode("aaa", false), (std::vector<int32_t>{256, 'a'}));
    EXPECT_EQ(*(*l.tok)->encode("aaaa", false), (std::vector<int32_t>{256, 256}));
  }
  {
    // Merges build on merges, within one word only.
    auto l = load_bpe(byte_vocab({{"a", "b"}, {"ab", "ab"}, {" ", "ab"}}));
    ASSERT_TRUE(l.tok.ok());
    const Tokenizer& t = **l.tok;
    EXPECT_EQ(*t.encode("abab", false), (std::vector<int32_t>{257}));
    EXPECT_EQ(*t.encode("abab ab", false), (std::vector<int32_t>{257, 258}));
    EXPECT_EQ(t.piece(258),
              "\xC4\xA0"
              "ab");
    EXPECT_EQ(t.token_to_piece(258), " ab");
  }
}

TEST(BpeTokenizer, IgnoreMergesOnlyForLlama3) {
  // "abc" is an entry no merge reaches: Llama 3's ignore_merges takes it whole.
  for (const char* pre : {"llama-bpe", "qwen2"}) {
    BpeVocab v = byte_vocab({{"a", "b"}}, pre);
    const int32_t abc = v.add("abc");
    auto l = load_bpe(v);
    ASSERT_TRUE(l.tok.ok());
    const auto ids = *(*l.tok)->encode("abc", false);
    if (std::string(pre) == "llama-bpe")
      EXPECT_EQ(ids, (std::vector<int32_t>{abc}));
    else
      EXPECT_EQ(ids, (std::vector<int32_t>{256, 'c'}));
  }
}

TEST(BpeTokenizer, EveryByteRoundTrips) {
  auto l = load_bpe(byte_vocab({{"h", "e"}, {"l", "l"}, {"he", "ll"}, {" ", "w"}}));
  ASSERT_TRUE(l.tok.ok());
  const Tokenizer& t = **l.tok;
  EXPECT_EQ(t.kind(), Tokenizer::Kind::bpe);
  EXPECT_EQ(t.pre_tokenizer(), "gpt-2");
  const std::string texts[] = {"hello world", "Zürich 中文 😀\n\t x", "\x01\x7f ok", ""};
  for (const std::string& s : texts) {
    auto ids = t.encode(s, false);
    ASSERT_TRUE(ids.ok());
    EXPECT_EQ(t.decode(*ids), s);
  }
  // Invalid UTF-8 is refused, naming the offset.
  auto bad = t.encode("ok\xC3(", false);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("offset 2"), std::string::npos);
  // A BPE decode of ids that split a character shows U+FFFD, never bad bytes.
  EXPECT_EQ(t.decode(std::vector<int32_t>{0xC3}), "\xEF\xBF\xBD");
}

TEST(BpeTokenizer, StreamingHoldsPartialCharacters) {
  auto l = load_bpe(byte_vocab());
  ASSERT_TRUE(l.tok.ok());
  const Tokenizer& t = **l.tok;
  const std::string text = "é😀!";  // C3 A9, F0 9F 98 80, 21: one byte per token
  auto ids = *t.encode(text, false);
  ASSERT_EQ(ids.size(), 7u);
  StreamDecoder sd(t);
  std::vector<std::string> out;
  for (int32_t id : ids) out.push_back(sd.push(id));
  EXPECT_EQ(out, (std::vector<std::string>{"", "é", "", "", "", "😀", "!"}));
  EXPECT_EQ(sd.flush(), "");
  sd.push(0xF0);
  EXPECT_EQ(sd.flush(), "\xEF\xBF\xBD");  // an unfinished character at the end
}

BpeVocab chat_vocab(const std::string& pre = "qwen2") {
  BpeVocab v = byte_vocab({{"<", "|"}, {"|", ">"}}, pre);
  v.add("<|im_start|>", 3, true);
  v.add("<|im_end|>", 3, true);
  v.add("<think>", 4, true);
  v.add("[PAD1]", 5, true);
  return v;
}

TEST(BpeTokenizer, ControlTokensOnlyWhenParsingSpecials) {
  BpeVocab v = chat_vocab();
  v.eos = 259;
  auto l = load_bpe(v);
  ASSERT_TRUE(l.tok.ok()) << l.tok.status().to_string();
  const Tokenizer& t = **l.tok;
  const int32_t start = 258, end = 259, think = 260;
  EXPECT_EQ(t.special_id("<|im_end|>"), end);
  EXPECT_EQ(t.special_id("<think>"), think);
  EXPECT_TRUE(t.is_eog(end));
  const std::string text = "<|im_start|>hi<|im_end|><think>";
  EXPECT_EQ(*t.encode(text, false, true), (std::vector<int32_t>{start, 'h', 'i', end, think}));
  // As a user's text: control spellings are text, user-defined pieces whole.
  auto plain = *t.encode(text, false, false);
  EXPECT_EQ(std::count(plain.begin(), plain.end(), start), 0);
  EXPECT_EQ(std::count(plain.begin(), plain.end(), end), 0);
  EXPECT_EQ(plain.back(), think);
  EXPECT_EQ(t.decode(plain), text);
  // Rendering: control tokens only on request; user-defined always; padding never.
  const auto special = *t.encode(text, false, true);
  EXPECT_EQ(t.decode(special), "hi<think>");
  EXPECT_EQ(t.decode(special, true), text);
  EXPECT_EQ(t.token_to_piece(261, true), "");
  // No BOS id: add_bos adds nothing.
  EXPECT_EQ(t.bos(), -1);
  EXPECT_EQ(*t.encode("hi", true), (std::vector<int32_t>{'h', 'i'}));
}

TEST(BpeTokenizer, BosDefaultsFollowThePreTokenizer) {
  for (const char* pre : {"llama-bpe", "qwen2"}) {
    BpeVocab v = chat_vocab(pre);
    v.bos = 258;
    auto l = load_bpe(v);
    ASSERT_TRUE(l.tok.ok());
    EXPECT_EQ((*l.tok)->add_bos_default(), std::string(pre) == "llama-bpe") << pre;
    EXPECT_EQ(*(*l.tok)->encode("a", true), (std::vector<int32_t>{258, 'a'}));
    v.add_bos = false;
    auto k = load_bpe(v);
    EXPECT_FALSE((*k.tok)->add_bos_default());
  }
  BpeVocab v = chat_vocab();
  v.pre = "";  // no tokenizer.ggml.pre: llama.cpp's default
  auto l = load_bpe(v);
  ASSERT_TRUE(l.tok.ok());
  EXPECT_EQ((*l.tok)->pre_tokenizer(), "default");
}

void expect_error(const BpeVocab& v, StatusCode code, const std::string& needle) {
  auto l = load_bpe(v);
  ASSERT_FALSE(l.tok.ok()) << needle;
  EXPECT_EQ(l.tok.status().code(), code) << l.tok.status().to_string();
  EXPECT_NE(l.tok.status().message().find(needle), std::string::npos) << l.tok.status().message();
}

TEST(BpeTokenizer, BrokenVocabulariesGetOneClearError) {
  BpeVocab v = byte_vocab({{"a", "b"}});
  v.with_merges = false;
  expect_error(v, StatusCode::corrupt_data, "tokenizer.ggml.merges is missing");

  v = byte_vocab({{"a", "b"}});
  v.merges.push_back("ab zz");
  expect_error(v, StatusCode::corrupt_data, "merges[1] 'ab zz': 'zz' is not in the vocabulary");

  v = byte_vocab({{"a", "b"}});
  v.merges.push_back("ab c");  // "abc" is no entry
  expect_error(v, StatusCode::corrupt_data, "makes 'abc', which is not in the vocabulary");

  v = byte_vocab();
  v.merges.push_back("abc");
  expect_error(v, StatusCode::corrupt_data, "is not two vocabulary entries");

  v = byte_vocab();
  v.tokens[10] = "x-not-a-byte";  // '\n' (Ċ) has no entry now
  expect_error(v, StatusCode::corrupt_data, "no entry for byte 0x0a");

  v = byte_vocab();
  v.eos = 100000;
  expect_error(v, StatusCode::corrupt_data, "tokenizer.ggml.eos_token_id 100000 is outside");

  v = byte_vocab();
  v.pre = "klingon-bpe";
  expect_error(v, StatusCode::unsupported, "unknown BPE pre-tokenizer 'klingon-bpe'");
}

}  // namespace
}  // namespace rc::tok
