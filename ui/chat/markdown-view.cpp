#include "chat/markdown-view.h"

#include <QEvent>
#include <QTextBlock>
#include <QTextDocument>
#include <QTextFrame>
#include <QTextLayout>
#include <QToolButton>
#include <cmath>

#include "chat/copy-feedback.h"

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
  codeBlocks_ = renderMarkdown(document(), markdown, style_);
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
    // A code block's header holds its language and the Copy button.
    if (!codeBlocks_.empty()) width = std::max(width, std::min(maxWidth_, 220));
    doc->setTextWidth(width - frame);
  }
  const int height = static_cast<int>(std::ceil(doc->size().height())) + frame;
  setFixedSize(width, height);
  fitHeight();
  placeCopyButtons();
}

void MarkdownView::placeCopyButtons() {
  while (copyButtons_.size() > codeBlocks_.size()) {
    delete copyButtons_.back();
    copyButtons_.pop_back();
  }
  while (copyButtons_.size() < codeBlocks_.size()) {
    const size_t index = copyButtons_.size();
    auto* b = new QToolButton(viewport());
    b->setObjectName(QStringLiteral("codeCopyButton"));
    b->setText(tr("Copy"));
    b->setToolTip(tr("Copy this code"));
    b->setAutoRaise(true);
    b->setCursor(Qt::PointingHandCursor);
    b->setFixedHeight(style_.codeHeaderHeight - 4);
    // Wide enough for its confirmation too: it is placed by its right edge.
    b->ensurePolished();
    b->setText(tr("Copied"));
    const int wide = b->sizeHint().width();
    b->setText(tr("Copy"));
    b->setFixedWidth(std::max(wide, b->sizeHint().width()));
    // The block is looked up at click time: a streaming reply re-renders.
    connect(b, &QToolButton::clicked, this, [this, index] {
      if (index < codeBlocks_.size())
        copyWithConfirmation(copyButtons_[index], codeBlocks_[index].code);
    });
    copyButtons_.push_back(b);
  }
  const int right = viewport()->width() - int(document()->documentMargin()) - 6;
  for (size_t i = 0; i < codeBlocks_.size(); ++i) {
    QToolButton* b = copyButtons_[i];
    const QTextBlock header = document()->findBlockByNumber(codeBlocks_[i].headerBlock);
    const QTextLayout* layout = header.layout();
    if (!layout || layout->lineCount() == 0) {
      b->hide();
      continue;
    }
    const QRectF line = layout->lineAt(0).rect().translated(layout->position());
    b->move(right - b->width(), int(std::round(line.center().y() - b->height() / 2.0)));
    b->show();
  }
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
  placeCopyButtons();
}

void MarkdownView::changeEvent(QEvent* event) {
  QTextBrowser::changeEvent(event);
  if (event->type() == QEvent::StyleChange || event->type() == QEvent::FontChange) relayout();
}

}  // namespace rc::ui
