#include "chat/markdown-render.h"

#include <QFontDatabase>
#include <QTextBlock>
#include <QTextCursor>
#include <QTextDocument>
#include <utility>
#include <vector>

namespace rc::ui {

bool isCodeBlock(const QTextBlock& block) {
  // Qt's importer marks every line of a code block with the language
  // property (empty for indented blocks) and fenced ones with the fence.
  const QTextBlockFormat f = block.blockFormat();
  return f.hasProperty(QTextFormat::BlockCodeLanguage) ||
         f.hasProperty(QTextFormat::BlockCodeFence);
}

void renderMarkdown(QTextDocument* doc, const QString& markdown, const MarkdownStyle& style) {
  doc->setMarkdown(markdown, QTextDocument::MarkdownDialectGitHub);
  QFont mono = QFontDatabase::systemFont(QFontDatabase::FixedFont);
  mono.setPointSizeF(doc->defaultFont().pointSizeF() > 0 ? doc->defaultFont().pointSizeF() * 0.95
                                                         : mono.pointSizeF());

  std::vector<std::pair<int, int>> inlineCode;  // position, length
  QTextCursor cursor(doc);
  cursor.beginEditBlock();
  for (QTextBlock b = doc->begin(); b.isValid(); b = b.next()) {
    if (isCodeBlock(b)) {
      // One QTextBlock per code line: shade each with no vertical margin so
      // the lines join into one box, and give the box air above and below.
      const bool first = !b.previous().isValid() || !isCodeBlock(b.previous());
      const bool last = !b.next().isValid() || !isCodeBlock(b.next());
      QTextBlockFormat bf = b.blockFormat();
      bf.setBackground(style.codeBackground);
      bf.setLeftMargin(4);
      bf.setRightMargin(4);
      bf.setTopMargin(first ? 6 : 0);
      bf.setBottomMargin(last ? 6 : 0);
      bf.setNonBreakableLines(false);  // wrap long lines instead of clipping
      cursor.setPosition(b.position());
      cursor.setBlockFormat(bf);
      cursor.setPosition(b.position());
      cursor.setPosition(b.position() + b.length() - 1, QTextCursor::KeepAnchor);
      QTextCharFormat cf;
      cf.setFont(mono, QTextCharFormat::FontPropertiesSpecifiedOnly);
      cf.setFontFixedPitch(true);
      cf.setForeground(style.codeForeground);
      cursor.mergeCharFormat(cf);
      continue;
    }
    for (auto it = b.begin(); !it.atEnd(); ++it) {
      const QTextFragment frag = it.fragment();
      if (frag.charFormat().fontFixedPitch())
        inlineCode.push_back({frag.position(), frag.length()});
    }
  }
  // Formatted after the walk: merging formats re-cuts the fragments.
  for (const auto& [pos, len] : inlineCode) {
    cursor.setPosition(pos);
    cursor.setPosition(pos + len, QTextCursor::KeepAnchor);
    QTextCharFormat cf;
    cf.setBackground(style.inlineCodeBackground);
    cf.setFontFamilies(mono.families());
    cursor.mergeCharFormat(cf);
  }
  cursor.endEditBlock();
}

}  // namespace rc::ui
