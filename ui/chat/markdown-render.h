// Markdown -> QTextDocument for chat bubbles: QTextDocument::setMarkdown
// (CommonMark + GitHub tables and task lists, as Qt parses it), then code made
// readable: fenced and indented blocks get the system monospace font and a
// shaded background; `inline code` gets a lighter shade. GUI thread (fonts).
#pragma once

#include <QColor>
#include <QString>

class QTextBlock;
class QTextDocument;

namespace rc::ui {

struct MarkdownStyle {
  QColor codeBackground = QColor(0xf0, 0xf2, 0xf5);
  QColor inlineCodeBackground = QColor(0xe8, 0xea, 0xee);
  QColor codeForeground = QColor(0x1f, 0x23, 0x28);
};

// Replaces `doc`'s contents. Unclosed fences (a reply still streaming) render
// as a code block up to the end, which is what the user expects to see.
void renderMarkdown(QTextDocument* doc, const QString& markdown, const MarkdownStyle& style = {});

// True when `block` came from a fenced or indented code block.
bool isCodeBlock(const QTextBlock& block);

}  // namespace rc::ui
