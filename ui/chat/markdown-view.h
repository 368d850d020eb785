// MarkdownView: a read-only, selectable QTextBrowser that sizes itself to its
// text: the chat view gives it a maximum width, it wraps to that width (or
// shrinks to its longest line when asked) and takes exactly the height the
// text needs, so bubbles never scroll on their own. GUI thread.
#pragma once

#include <QTextBrowser>

#include "chat/markdown-render.h"

namespace rc::ui {

class MarkdownView : public QTextBrowser {
  Q_OBJECT
 public:
  explicit MarkdownView(QWidget* parent = nullptr);

  void setMarkdownText(const QString& markdown);
  const QString& markdownText() const { return markdown_; }
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

  QString markdown_;
  MarkdownStyle style_;
  int maxWidth_ = 600;
  bool shrink_ = false;
};

}  // namespace rc::ui
