// split_chunks (app/library/chunker.h): sizes, boundaries and coverage,
// with a whitespace word counter as the token count.
#include <sstream>

#include <gtest/gtest.h>

#include "word-count.h"

#include "library/chunker.h"

namespace rc::library {
namespace {

using test::words;

std::string joined_words(std::string_view text) {
  std::istringstream in{std::string(text)};
  std::string w, out;
  while (in >> w) out += w + " ";
  return out;
}

std::string paragraphs(int count, int words_each) {
  std::string out;
  for (int p = 0; p < count; ++p) {
    for (int i = 0; i < words_each; ++i) {
      out += 'p';
      out += std::to_string(p);
      out += 'w';
      out += std::to_string(i);
      out += ' ';
    }
    out += "\n\n";
  }
  return out;
}

TEST(Chunker, EndsAtParagraphsOnceLargeEnough) {
  const std::string text = paragraphs(6, 100);
  const auto chunks = split_chunks(text, words, 128, 256);
  ASSERT_EQ(chunks.size(), 3u);
  for (const ChunkSpan& c : chunks) {
    EXPECT_EQ(c.tokens, 200);
    EXPECT_EQ(words(text.substr(c.begin, c.end - c.begin)), c.tokens);
  }
}

TEST(Chunker, CoversEveryWordInOrderWithinTheMaximum) {
  // One paragraph far over the maximum: cut at sentences, and one sentence
  // far over it: cut between words.
  std::string text = "Short start. ";
  for (int i = 0; i < 700; ++i) {
    text += 's';
    text += std::to_string(i);
    text += i % 40 == 39 ? ". " : " ";
  }
  text += "\n\n";
  for (int i = 0; i < 600; ++i) text += "long" + std::to_string(i) + " ";
  const auto chunks = split_chunks(text, words, 128, 256);
  std::string seen;
  size_t last_end = 0;
  for (const ChunkSpan& c : chunks) {
    EXPECT_GE(c.begin, last_end);
    last_end = c.end;
    EXPECT_LE(c.tokens, 256);
    EXPECT_GT(c.tokens, 0);
    seen += joined_words(text.substr(c.begin, c.end - c.begin));
  }
  EXPECT_EQ(seen, joined_words(text));
}

TEST(Chunker, CutsAWordLongerThanAChunkAtCharacterBoundaries) {
  // Each byte one "token": a 1000-byte word of two-byte characters.
  auto bytes = [](std::string_view t) { return static_cast<int>(t.size()); };
  std::string text;
  for (int i = 0; i < 500; ++i) text += "\xC3\xA9";
  const auto chunks = split_chunks(text, bytes, 16, 64);
  size_t covered = 0;
  for (const ChunkSpan& c : chunks) {
    EXPECT_LE(c.tokens, 64);
    EXPECT_EQ((static_cast<unsigned char>(text[c.begin]) & 0xC0), 0xC0) << "starts a character";
    covered += c.end - c.begin;
  }
  EXPECT_EQ(covered, text.size());
}

TEST(Chunker, BlankTextHasNoChunks) { EXPECT_TRUE(split_chunks(" \n\n ", words).empty()); }

}  // namespace
}  // namespace rc::library
