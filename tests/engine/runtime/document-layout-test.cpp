// layout_documents (radixchat/documents.h) with a whitespace word counter
// as the token count, so every budget is plain arithmetic.
#include <sstream>

#include <gtest/gtest.h>

#include "word-count.h"

#include "radixchat/documents.h"
#include "radixchat/engine.h"

namespace rc {
namespace {

using test::words;

std::string repeat(const std::string& word, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += word + std::to_string(i) + " ";
  return out;
}

DocumentSet two_documents() {
  DocumentSet set;
  set.documents = {{"b.md", 2, "bravo text\n"}, {"a.txt", 1, "alpha text\n"}};
  return set;
}

TEST(DocumentLayout, WholeDocumentsInLibraryOrderWhateverTheGivenOrder) {
  DocumentSet set = two_documents();
  const DocumentLayout one = layout_documents(set, 100, words);
  std::swap(set.documents[0], set.documents[1]);
  const DocumentLayout two = layout_documents(set, 100, words);
  EXPECT_EQ(one.text, two.text);
  EXPECT_EQ(one.text, "### Document: a.txt\nalpha text\n\n### Document: b.md\nbravo text\n");
  EXPECT_FALSE(one.retrieved);
  EXPECT_EQ(one.tokens, words(one.text));
  // The same document named twice goes in once.
  set.documents.push_back(set.documents[0]);
  EXPECT_EQ(layout_documents(set, 100, words).text, one.text);
}

TEST(DocumentLayout, OverTheBudgetRetrievedChunksGoInDocumentAndPositionOrder) {
  DocumentSet set;
  set.documents = {{"first", 1, repeat("f", 300)}, {"second", 2, repeat("s", 300)}};
  // Ranked best first, in an order that is neither document nor position order.
  set.ranked_chunks = {{"second", 7, "s7 words here"},
                       {"first", 3, "f3 words"},
                       {"second", 2, "s2 words"},
                       {"first", 1, "f1 words"},
                       {"nobody", 0, "ignored: not one of the documents"},
                       {"first", 3, "f3 words"}};
  const DocumentLayout l = layout_documents(set, 100, words);
  EXPECT_TRUE(l.retrieved);
  EXPECT_EQ(l.chunks, 4);
  EXPECT_EQ(l.text,
            "### Document: first (excerpts)\nf1 words\nf3 words\n\n"
            "### Document: second (excerpts)\ns2 words\ns7 words here\n");
  // Only what fits, best first: s7 with its header (8), not f3 with a
  // second header (7 more), but s2 under the header already paid for (3).
  const DocumentLayout tight = layout_documents(set, 12, words);
  EXPECT_EQ(tight.text, "### Document: second (excerpts)\ns2 words\ns7 words here\n");
  EXPECT_LE(tight.tokens, 12);
  set.max_chunks = 1;
  EXPECT_EQ(layout_documents(set, 100, words).text,
            "### Document: second (excerpts)\ns7 words here\n");
}

TEST(DocumentLayout, TheBudgetSwitchesAtTheWholeDocumentsCount) {
  DocumentSet set = two_documents();
  set.ranked_chunks = {{"a.txt", 0, "alpha"}};
  // Headers (3 words each) + texts (2 words each) + a separator each: 12.
  EXPECT_FALSE(layout_documents(set, 12, words).retrieved);
  const DocumentLayout over = layout_documents(set, 11, words);
  EXPECT_TRUE(over.retrieved);
  // The retrieved chunk's document fits what is left (6 of 11): it goes in whole.
  EXPECT_EQ(over.text, "### Document: a.txt\nalpha text\n");
  EXPECT_EQ(over.whole_documents, 1);
  EXPECT_EQ(over.chunks, 0);
  // A longer a.txt (3 + 5 + 1) does not fit 8: the chunk goes in alone,
  // under the excerpts header (4 + 1 + 1).
  set.documents[1].text = "alpha text and three more\n";
  EXPECT_EQ(layout_documents(set, 8, words).text, "### Document: a.txt (excerpts)\nalpha\n");
}

// Small to big: the best chunk's document goes in whole while it fits; a
// later chunk whose document no longer fits goes in alone; the placed
// documents and chunks then follow library order. Questions that hit
// different paragraphs of the same documents get the same block.
TEST(DocumentLayout, RetrievedChunksBringTheirWholeDocumentWhileItFits) {
  DocumentSet set;
  set.documents = {{"big", 3, repeat("b", 300)},
                   {"small", 2, "small one two three\n"},
                   {"mid", 1, repeat("m", 20)}};
  set.ranked_chunks = {{"small", 1, "two three"}, {"big", 4, "b4 b5"}, {"mid", 0, "m0 m1"}};
  const DocumentLayout l = layout_documents(set, 60, words);
  EXPECT_TRUE(l.retrieved);
  EXPECT_EQ(l.whole_documents, 2);  // small (8 words), then mid (24): big never fits
  EXPECT_EQ(l.chunks, 1);
  EXPECT_EQ(l.text, "### Document: mid\n" + repeat("m", 20) +
                        "\n\n### Document: small\nsmall one two three\n"
                        "\n### Document: big (excerpts)\nb4 b5\n");
  EXPECT_LE(l.tokens, 60);
  // Another question, other paragraphs of the same documents: the same block.
  set.ranked_chunks = {{"mid", 7, "m7"}, {"small", 0, "small"}, {"big", 4, "b4 b5"}};
  EXPECT_EQ(layout_documents(set, 60, words).text, l.text);
  // Whole documents lead, excerpts follow, whatever the library order: the
  // shared part comes first.
  set.documents[0].order = 0;  // big before the others in the library
  EXPECT_EQ(layout_documents(set, 60, words).text, l.text);
}

// Over the budget with nothing retrieved (no chunk shares a word with the
// question): the whole documents that fit go in, in library order, rather
// than none at all.
TEST(DocumentLayout, NothingRetrievedPlacesTheWholeDocumentsThatFit) {
  DocumentSet set;
  set.documents = {
      {"big", 1, repeat("b", 300)}, {"b.md", 3, "bravo text\n"}, {"a.txt", 2, "alpha text\n"}};
  const DocumentLayout l = layout_documents(set, 20, words);
  EXPECT_TRUE(l.retrieved);
  EXPECT_EQ(l.whole_documents, 2);
  EXPECT_EQ(l.text, "### Document: a.txt\nalpha text\n\n### Document: b.md\nbravo text\n");
}

TEST(DocumentLayout, RankedOrderKeepsTheRankForBenchmarks) {
  DocumentSet set;
  set.documents = {{"first", 1, repeat("f", 300)}, {"second", 2, repeat("s", 300)}};
  set.ranked_chunks = {{"second", 7, "s7"}, {"first", 3, "f3"}};
  set.ranked_order = true;
  EXPECT_EQ(layout_documents(set, 100, words).text,
            "### Document: second (excerpts)\ns7\n\n### Document: first (excerpts)\nf3\n");
}

TEST(DocumentLayout, GoesIntoTheSystemMessage) {
  DocumentLayout l;
  l.text = "### Document: a\nx\n";
  const auto with_system = messages_with_documents({{"system", "Be brief."}, {"user", "q"}}, l);
  ASSERT_EQ(with_system.size(), 2u);
  EXPECT_EQ(with_system[0].content, "Be brief.\n\nDocuments:\n\n### Document: a\nx\n");
  const auto without = messages_with_documents({{"user", "q"}}, l);
  ASSERT_EQ(without.size(), 2u);
  EXPECT_EQ(without[0].role, "system");
  EXPECT_EQ(without[0].content, "Documents:\n\n### Document: a\nx\n");
  EXPECT_EQ(messages_with_documents({{"user", "q"}}, DocumentLayout{}).size(), 1u);
}

}  // namespace
}  // namespace rc
