// MarkdownView: a read-only, selectable QTextBrowser that sizes itself to its
// text: the chat view gives it a maximum width, it wraps to that width (or
// shrinks to its longest line when asked) and takes exactly the height the
// text needs, so bubbles never scroll on their own. Each code block's header
// line carries a Copy button (a child of the viewport, object name
// "codeCopyButton") that copies exactly that block's code. GUI thread.
#pragma once

#include <QTextBrowser>
#include <vector>

#include "chat/markdown-render.h"

class QToolButton;

namespace rc::ui {

class MarkdownView : public QTextBrowser {
  Q_OBJECT
 public:
  explicit MarkdownView(QWidget* parent = nullptr);

  void setMarkdownText(const QString& markdown);
  const QString& markdownText() const { return markdown_; }
  const std::vector<RenderedCodeBlock>& codeBlocks() const { return codeBlocks_; }
  // maxWidth: outer width available; shrink: narrower when the text is.
  void setLayoutWidth(int maxWidth, bool shrink);

 protected:
  // QTextEdit re-wraps the text to the viewport on resize; the height then
  // follows, and style changes (a style sheet's borders) re-measure.
  void resizeEvent(QResizeEvent* event) override;
  void changeEvent(QEvent* event) override;

 private:
  void relayout();
  void fitHeight();
  // One Copy button per code block, on the right of its header line.
  void placeCopyButtons();

  QString markdown_;
  std::vector<RenderedCodeBlock> codeBlocks_;
  std::vector<QToolButton*> copyButtons_;  // children of the viewport
  MarkdownStyle style_;
  int maxWidth_ = 600;
  bool shrink_ = false;
};

}  // namespace rc::ui
