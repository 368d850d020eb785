// Markdown -> QTextDocument for chat bubbles: QTextDocument::setMarkdown
// (CommonMark + GitHub tables and task lists, as Qt parses it), then code made
// readable: fenced and indented blocks get the system monospace font, a
// shaded background, a header line naming their language (where the view
// puts a Copy button) and the colours of code-highlight.h; `inline code`
// gets a lighter shade. GUI thread (fonts).
#pragma once

#include <QColor>
#include <QString>
#include <vector>

class QTextBlock;
class QTextDocument;

namespace rc::ui {

struct MarkdownStyle {
  QColor codeBackground = QColor(0xf0, 0xf2, 0xf5);
  QColor inlineCodeBackground = QColor(0xe8, 0xea, 0xee);
  QColor codeForeground = QColor(0x1f, 0x23, 0x28);
  QColor codeLabel = QColor(0x6b, 0x72, 0x80);  // the header's language name
  QColor keyword = QColor(0xcf, 0x22, 0x2e);
  QColor string = QColor(0x0a, 0x30, 0x69);
  QColor comment = QColor(0x6e, 0x77, 0x81);
  QColor number = QColor(0x05, 0x50, 0xae);
  int codeHeaderHeight = 24;  // px; room for the view's Copy button
};

// One code block as rendered: what its Copy button copies and where its
// header line is.
struct RenderedCodeBlock {
  QString language;     // the fence's info string ("python"); empty when none
  QString code;         // exactly the code, lines joined by '\n', no final newline
  int headerBlock = 0;  // QTextBlock::blockNumber() of its header line
};

// Replaces `doc`'s contents. Unclosed fences (a reply still streaming) render
// as a code block up to the end, which is what the user expects to see.
// Returns the code blocks in document order.
std::vector<RenderedCodeBlock> renderMarkdown(QTextDocument* doc, const QString& markdown,
                                              const MarkdownStyle& style = {});

// True when `block` came from a fenced or indented code block (a line of
// code, not its header).
bool isCodeBlock(const QTextBlock& block);
// True for the header line renderMarkdown() puts above each code block.
bool isCodeHeader(const QTextBlock& block);

}  // namespace rc::ui
