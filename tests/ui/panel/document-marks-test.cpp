// Document nodes in the cache panel (docs/architecture.md section 21): the
// names of the documents whose layout headers a node's span holds, and the
// label the tree view draws for it (the mark and the file's name first).
#include <gtest/gtest.h>

#include "panel/document-marks.h"
#include "panel/tree-state.h"

namespace rc::ui::panel {
namespace {

TEST(DocumentMarks, NamesTheDocumentsWhoseHeadersASpanHolds) {
  const std::string span =
      "You are helpful.\n\n### Document: notes.md\nZebras.\n\n### Document: paper.pdf "
      "(excerpts)\nKettles.\n";
  EXPECT_EQ(document_names(span), (std::vector<std::string>{"notes.md", "paper.pdf (excerpts)"}));
  // Not at a line start, or cut by the node's end: not a header.
  EXPECT_TRUE(document_names("see ### Document: x.md\n").empty());
  EXPECT_TRUE(document_names("### Document: cut-he").empty());
  EXPECT_TRUE(document_names("plain text").empty());
}

// Two layouts that part inside a header ("### Document: lo" shared, then
// "g.md" or "af.md"): each branch names the document its span ends the
// header of; the parent's own whole headers stay the parent's.
TEST(DocumentMarks, AHeaderThePathBeganIsNamedWhereItEnds) {
  const std::string parent = "Be brief.\n\n### Document: a.md\nApples.\n\n### Document: lo";
  EXPECT_EQ(document_names(parent), std::vector<std::string>{"a.md"});
  EXPECT_EQ(document_names("g.md\nFog.\n\n### Document: loaf.md\nFlour.\n", parent),
            (std::vector<std::string>{"log.md", "loaf.md"}));
  EXPECT_EQ(with_document_mark("af.md\nFlour.\n", parent), "\u25A4 loaf.md \u00B7 af.md\nFlour.\n");
  EXPECT_TRUE(document_names("Fog.\n", "### Document: log.md\n").empty())
      << "a header the parent holds whole is not the child's";
}

TEST(DocumentMarks, LabelStartsWithTheMarkAndTheName) {
  EXPECT_EQ(with_document_mark("plain"), "plain");
  EXPECT_EQ(with_document_mark("### Document: notes.md\nZebras.\n"),
            "\u25A4 notes.md \u00B7 ### Document: notes.md\nZebras.\n");
}

// The tree view's label of a node goes through the mark.
TEST(DocumentMarks, TreeStateLabelsDocumentNodes) {
  TreeState tree;
  tree.span_text = [](const std::vector<Token>& t) {
    return t.size() == 2 ? std::string("### Document: report.html\nQ3 figures.\n")
                         : std::string("You are a helpful assistant.");
  };
  TreeNode doc;
  doc.id = 7;
  doc.tokens = {11, 12};
  TreeNode other;
  other.id = 8;
  other.tokens = {13};
  EXPECT_EQ(tree.label(doc).full.rfind("\u25A4 report.html \u00B7 ", 0), 0u)
      << tree.label(doc).full;
  EXPECT_EQ(tree.label(other).full, "You are a helpful assistant.");
}

}  // namespace
}  // namespace rc::ui::panel
