#include "chat/chat-view.h"

#include <algorithm>

#include <QLabel>
#include <QPointer>
#include <QResizeEvent>
#include <QScrollBar>
#include <QStyle>
#include <QTimer>
#include <QVBoxLayout>

#include "chat/chat-model.h"
#include "chat/message-widget.h"

namespace rc::ui {

namespace {

constexpr int kMaxColumn = 860;  // readable line length on wide windows
// How long a found message stays the scroll target while bubbles settle.
constexpr qint64 kFoundSettleMs = 1000;

ChatMessageRow rowAt(const ChatModel* model, int row) {
  return model->rows()[static_cast<size_t>(row)];
}

}  // namespace

ChatView::ChatView(QWidget* parent) : QScrollArea(parent) {
  setObjectName(QStringLiteral("chatView"));
  setWidgetResizable(true);
  setFrameShape(QFrame::NoFrame);
  setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  content_ = new QWidget(this);
  content_->setObjectName(QStringLiteral("chatContent"));
  auto* outer = new QHBoxLayout(content_);
  outer->setContentsMargins(16, 12, 16, 12);
  // The column is centred and capped so long lines stay readable.
  outer->addStretch(1);
  auto* columnHost = new QWidget(content_);
  columnHost->setMaximumWidth(kMaxColumn);
  column_ = new QVBoxLayout(columnHost);
  column_->setContentsMargins(0, 0, 0, 0);
  column_->setSpacing(6);
  placeholder_ = new QLabel(columnHost);
  placeholder_->setObjectName(QStringLiteral("chatPlaceholder"));
  placeholder_->setAlignment(Qt::AlignCenter);
  placeholder_->setWordWrap(true);
  column_->addWidget(placeholder_);
  column_->addStretch(1);
  outer->addWidget(columnHost, 100);
  outer->addStretch(1);
  setWidget(content_);

  // Keep following the bottom only while the user is there.
  connect(verticalScrollBar(), &QScrollBar::valueChanged, this,
          [this](int value) { followBottom_ = value >= verticalScrollBar()->maximum() - 24; });
  connect(verticalScrollBar(), &QScrollBar::rangeChanged, this, [this](int, int max) {
    if (found_ && foundClock_.isValid() && foundClock_.elapsed() < kFoundSettleMs) {
      scrollToFound();
    } else if (followBottom_ && !bubbles_.empty()) {
      verticalScrollBar()->setValue(max);  // an empty chat's page reads from its top
    }
  });
}

void ChatView::setModel(ChatModel* model) {
  if (model_) disconnect(model_, nullptr, this, nullptr);
  model_ = model;
  if (model_) {
    connect(model_, &QAbstractItemModel::modelReset, this, &ChatView::rebuild);
    connect(model_, &QAbstractItemModel::rowsInserted, this,
            [this](const QModelIndex&, int first, int last) { insertRows(first, last); });
    connect(model_, &QAbstractItemModel::rowsRemoved, this, &ChatView::rebuild);
    connect(model_, &QAbstractItemModel::dataChanged, this,
            [this](const QModelIndex& a, const QModelIndex& b) { updateRows(a.row(), b.row()); });
  }
  rebuild();
}

void ChatView::setBusy(bool busy) {
  busy_ = busy;
  for (MessageWidget* w : bubbles_) w->setActionsEnabled(!busy);
}

void ChatView::setPlaceholderText(const QString& text, Qt::TextFormat format) {
  placeholder_->setTextFormat(format);
  placeholder_->setAlignment(format == Qt::MarkdownText ? Qt::AlignLeft | Qt::AlignTop
                                                        : Qt::AlignCenter);
  if (placeholder_->property("page").toBool() != (format == Qt::MarkdownText)) {
    placeholder_->setProperty("page", format == Qt::MarkdownText);
    placeholder_->style()->unpolish(placeholder_);  // the style sheet keys on it
    placeholder_->style()->polish(placeholder_);
  }
  placeholder_->setText(text);
}

MessageWidget* ChatView::messageWidget(int row) const {
  return row >= 0 && row < messageCount() ? bubbles_[static_cast<size_t>(row)] : nullptr;
}

void ChatView::showMessage(qint64 id, const QString& text) {
  const auto it = std::find_if(bubbles_.begin(), bubbles_.end(),
                               [id](const MessageWidget* w) { return w->messageId() == id; });
  if (it == bubbles_.end()) return;
  found_ = *it;
  foundAt_ = found_->markFound(text);
  foundClock_.start();
  followBottom_ = false;
  // After the layout has placed the new bubbles (and after a rebuild's own
  // scroll to the bottom); rangeChanged scrolls again while it settles.
  QTimer::singleShot(0, this, &ChatView::scrollToFound);
}

void ChatView::scrollToFound() {
  if (!found_) return;
  // The found text a third of the way down the view.
  const int y = found_->mapTo(widget(), foundAt_).y();
  verticalScrollBar()->setValue(y - viewport()->height() / 3);
  followBottom_ = false;
}

void ChatView::resizeEvent(QResizeEvent* event) {
  QScrollArea::resizeEvent(event);
  const int width = columnWidth();
  for (MessageWidget* w : bubbles_) w->setAvailableWidth(width);
}

int ChatView::columnWidth() const {
  // Viewport minus the content margins and room for the scroll bar.
  return std::min(kMaxColumn, viewport()->width() - 32 - verticalScrollBar()->sizeHint().width());
}

void ChatView::rebuild() {
  for (MessageWidget* w : bubbles_) {
    column_->removeWidget(w);
    w->deleteLater();
  }
  bubbles_.clear();
  found_ = nullptr;
  followBottom_ = true;
  if (model_) insertRows(0, model_->rowCount() - 1);
  placeholder_->setVisible(bubbles_.empty());
  scrollToBottomSoon();
}

void ChatView::insertRows(int first, int last) {
  for (int row = first; row <= last; ++row) {
    MessageWidget* w = makeBubble(row);
    // +1: the placeholder label is the column's first item.
    column_->insertWidget(row + 1, w);
    bubbles_.insert(bubbles_.begin() + row, w);
  }
  placeholder_->setVisible(bubbles_.empty());
  scrollToBottomSoon();
}

void ChatView::updateRows(int first, int last) {
  for (int row = first; row <= last && row < messageCount(); ++row) {
    bubbles_[static_cast<size_t>(row)]->setRow(rowAt(model_, row));
  }
}

MessageWidget* ChatView::makeBubble(int row) {
  auto* w = new MessageWidget(rowAt(model_, row), widget());
  w->setAvailableWidth(columnWidth());
  w->setActionsEnabled(!busy_);
  connect(w, &MessageWidget::editSubmitted, this, &ChatView::editSubmitted);
  connect(w, &MessageWidget::regenerateRequested, this, &ChatView::regenerateRequested);
  connect(w, &MessageWidget::branchRequested, this, &ChatView::branchRequested);
  connect(w, &MessageWidget::locateRequested, this, &ChatView::locateRequested);
  return w;
}

void ChatView::scrollToBottomSoon() {
  // After the layout has taken the new sizes.
  QTimer::singleShot(0, this, [this] {
    verticalScrollBar()->setValue(bubbles_.empty() ? 0 : verticalScrollBar()->maximum());
  });
}

}  // namespace rc::ui
