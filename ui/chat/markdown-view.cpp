#include "chat/markdown-view.h"

#include <QEvent>
#include <QTextDocument>
#include <QTextFrame>
#include <cmath>

namespace rc::ui {

MarkdownView::MarkdownView(QWidget* parent) : QTextBrowser(parent) {
  setFrameShape(QFrame::NoFrame);
  setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  setOpenExternalLinks(true);
  setTextInteractionFlags(Qt::TextBrowserInteraction);
  setSizePolicy(QSizePolicy::Fixed, QSizePolicy::Fixed);
  // Transparent: the bubble behind it provides the colour.
  setStyleSheet(QStringLiteral("QTextBrowser { background: transparent; }"));
  viewport()->setAutoFillBackground(false);
  document()->setDocumentMargin(2);
}

void MarkdownView::setMarkdownText(const QString& markdown) {
  markdown_ = markdown;
  renderMarkdown(document(), markdown, style_);
  relayout();
}

void MarkdownView::setLayoutWidth(int maxWidth, bool shrink) {
  if (maxWidth == maxWidth_ && shrink == shrink_) return;
  maxWidth_ = std::max(80, maxWidth);
  shrink_ = shrink;
  relayout();
}

void MarkdownView::relayout() {
  QTextDocument* doc = document();
  const int frame = 2 * frameWidth();
  doc->setTextWidth(maxWidth_ - frame);
  int width = maxWidth_;
  if (shrink_) {
    // idealWidth: the widest line once wrapped at the maximum.
    width = std::min(maxWidth_, static_cast<int>(std::ceil(doc->idealWidth())) + frame + 2);
    doc->setTextWidth(width - frame);
  }
  const int height = static_cast<int>(std::ceil(doc->size().height())) + frame;
  setFixedSize(width, height);
  fitHeight();
}

void MarkdownView::fitHeight() {
  // Whatever surrounds the viewport now (frame, style sheet border) plus the
  // text at the viewport's width: converges in one step, the width is fixed.
  // (A hidden widget's viewport is laid out only when it is shown.)
  const int chrome = isVisible() ? height() - viewport()->height() : 2 * frameWidth();
  const int wanted = static_cast<int>(std::ceil(document()->size().height())) + std::max(0, chrome);
  if (wanted != height()) setFixedHeight(wanted);
}

void MarkdownView::resizeEvent(QResizeEvent* event) {
  QTextBrowser::resizeEvent(event);
  fitHeight();
}

void MarkdownView::changeEvent(QEvent* event) {
  QTextBrowser::changeEvent(event);
  if (event->type() == QEvent::StyleChange || event->type() == QEvent::FontChange) relayout();
}

}  // namespace rc::ui
