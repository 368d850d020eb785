#include "chat/markdown-render.h"

#include <QFontDatabase>
#include <QTextBlock>
#include <QTextCursor>
#include <QTextDocument>
#include <utility>

#include "chat/code-highlight.h"

namespace rc::ui {

namespace {

// Marks the header line above a code block (its value: the block's index).
constexpr int kCodeHeaderProperty = QTextFormat::UserProperty + 1;

QString codeLanguage(const QTextBlock& b) {
  return b.blockFormat().stringProperty(QTextFormat::BlockCodeLanguage);
}

// A code line that starts a new block: after prose, or after a block of
// another language (two fences with nothing between them).
bool startsCodeBlock(const QTextBlock& b) {
  const QTextBlock prev = b.previous();
  return !prev.isValid() || !isCodeBlock(prev) || codeLanguage(prev) != codeLanguage(b);
}

QColor tokenColor(CodeToken kind, const MarkdownStyle& style) {
  switch (kind) {
    case CodeToken::Keyword:
      return style.keyword;
    case CodeToken::String:
      return style.string;
    case CodeToken::Comment:
      return style.comment;
    case CodeToken::Number:
      return style.number;
  }
  return style.codeForeground;
}

struct CodeRun {
  int position = 0;  // of its first line
  QTextBlockFormat format;
  RenderedCodeBlock block;
};

}  // namespace

bool isCodeBlock(const QTextBlock& block) {
  // Qt's importer marks every line of a code block with the language
  // property (empty for indented blocks) and fenced ones with the fence.
  const QTextBlockFormat f = block.blockFormat();
  return f.hasProperty(QTextFormat::BlockCodeLanguage) ||
         f.hasProperty(QTextFormat::BlockCodeFence);
}

bool isCodeHeader(const QTextBlock& block) {
  return block.blockFormat().hasProperty(kCodeHeaderProperty);
}

std::vector<RenderedCodeBlock> renderMarkdown(QTextDocument* doc, const QString& markdown,
                                              const MarkdownStyle& style) {
  doc->setMarkdown(markdown, QTextDocument::MarkdownDialectGitHub);
  QFont mono = QFontDatabase::systemFont(QFontDatabase::FixedFont);
  mono.setPointSizeF(doc->defaultFont().pointSizeF() > 0 ? doc->defaultFont().pointSizeF() * 0.95
                                                         : mono.pointSizeF());

  std::vector<std::pair<int, int>> inlineCode;  // position, length
  std::vector<CodeRun> runs;
  QTextCursor cursor(doc);
  cursor.beginEditBlock();
  for (QTextBlock b = doc->begin(); b.isValid(); b = b.next()) {
    if (isCodeBlock(b)) {
      // One QTextBlock per code line: shade each with no vertical margin so
      // the lines join into one box under its header, with air below.
      const bool first = startsCodeBlock(b);
      const bool last = !b.next().isValid() || !isCodeBlock(b.next()) || startsCodeBlock(b.next());
      QTextBlockFormat bf = b.blockFormat();
      bf.setBackground(style.codeBackground);
      bf.setLeftMargin(4);
      bf.setRightMargin(4);
      bf.setTopMargin(0);
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
      if (first) {
        runs.push_back({b.position(), bf, {codeLanguage(b), b.text(), 0}});
      } else {
        runs.back().block.code += QLatin1Char('\n') + b.text();
      }
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
  // Colours: a run's lines are consecutive blocks, so an offset into its
  // '\n'-joined text is an offset from its first line's position.
  for (const CodeRun& run : runs) {
    for (const CodeSpan& span : highlightCode(run.block.language, run.block.code)) {
      cursor.setPosition(run.position + span.start);
      cursor.setPosition(run.position + span.start + span.length, QTextCursor::KeepAnchor);
      QTextCharFormat cf;
      cf.setForeground(tokenColor(span.kind, style));
      cursor.mergeCharFormat(cf);
    }
  }
  // Header lines, last block first so the earlier positions still hold:
  // split before the first line and turn the empty half into the header.
  for (int i = int(runs.size()) - 1; i >= 0; --i) {
    const CodeRun& run = runs[i];
    cursor.setPosition(run.position);
    cursor.insertBlock(run.format);
    QTextBlockFormat hf = run.format;
    hf.clearProperty(QTextFormat::BlockCodeLanguage);
    hf.clearProperty(QTextFormat::BlockCodeFence);
    hf.setProperty(kCodeHeaderProperty, i);
    hf.setTopMargin(6);
    hf.setBottomMargin(0);
    hf.setLineHeight(style.codeHeaderHeight, QTextBlockFormat::MinimumHeight);
    QTextCharFormat lf;
    lf.setForeground(style.codeLabel);
    lf.setFontPointSize(mono.pointSizeF() * 0.9);
    cursor.setPosition(run.position);
    cursor.setBlockFormat(hf);
    cursor.setBlockCharFormat(lf);
    cursor.insertText(run.block.language.isEmpty() ? QObject::tr("code") : run.block.language, lf);
  }
  cursor.endEditBlock();

  std::vector<RenderedCodeBlock> blocks;
  for (const CodeRun& run : runs) blocks.push_back(run.block);
  for (QTextBlock b = doc->begin(); b.isValid(); b = b.next()) {
    if (isCodeHeader(b))
      blocks[b.blockFormat().intProperty(kCodeHeaderProperty)].headerBlock = b.blockNumber();
  }
  return blocks;
}

}  // namespace rc::ui
