#include "chat/message-widget.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QStyle>
#include <QTextCursor>
#include <QTextDocument>
#include <QToolButton>
#include <QVBoxLayout>

#include "chat/copy-feedback.h"
#include "chat/markdown-view.h"
#include "chat/reasoning-text.h"

namespace rc::ui {

namespace {

constexpr int kBubblePadding = 14;  // left + right inner margin, each

QToolButton* actionButton(const QString& text, const QString& tip, QWidget* parent) {
  auto* b = new QToolButton(parent);
  b->setText(text);
  b->setToolTip(tip);
  b->setAutoRaise(true);
  b->setCursor(Qt::PointingHandCursor);
  b->setObjectName(QStringLiteral("messageAction"));
  return b;
}

QString footerText(const ChatMessageRow& r) {
  if (r.role != ChatRole::Assistant) return {};
  if (r.streaming) return QObject::tr("generating…");
  QString text;
  if (r.metrics) {
    text = formatMetrics(*r.metrics);
    if (r.metrics->finishReason == QLatin1String("cancelled")) text += QObject::tr("  ·  stopped");
    if (r.metrics->finishReason == QLatin1String("length"))
      text += QObject::tr("  ·  length limit");
    if (r.metrics->finishReason == QLatin1String("error")) text = QObject::tr("the reply failed");
    if (r.metrics->droppedMessages > 0 && r.metrics->prefixChanged) {
      text += QLatin1Char('\n') +
              (r.metrics->droppedMessages == 1
                   ? QObject::tr("The earliest message no longer fits the context; the cached "
                                 "prefix changed.")
                   : QObject::tr("The earliest %1 messages no longer fit the context; the cached "
                                 "prefix changed.")
                         .arg(r.metrics->droppedMessages));
    } else if (r.metrics->droppedMessages > 0) {
      text += QLatin1Char('\n') +
              (r.metrics->droppedMessages == 1
                   ? QObject::tr("The earliest message is outside the context (the cached "
                                 "history still matches).")
                   : QObject::tr("The earliest %1 messages are outside the context (the cached "
                                 "history still matches).")
                         .arg(r.metrics->droppedMessages));
    }
  }
  if (!r.error.isEmpty()) text = QObject::tr("⚠ %1").arg(r.error);
  return text;
}

}  // namespace

MessageWidget::MessageWidget(const ChatMessageRow& row, QWidget* parent)
    : QWidget(parent), row_(row) {
  const bool user = row.role == ChatRole::User;
  auto* outer = new QHBoxLayout(this);
  outer->setContentsMargins(0, 4, 0, 4);
  bubble_ = new QFrame(this);
  bubble_->setObjectName(user                           ? QStringLiteral("userBubble")
                         : row.role == ChatRole::System ? QStringLiteral("systemBubble")
                                                        : QStringLiteral("assistantBubble"));
  bubble_->setSizePolicy(QSizePolicy::Maximum, QSizePolicy::Preferred);
  if (user) outer->addStretch(1);
  outer->addWidget(bubble_);
  if (!user) outer->addStretch(1);

  auto* v = new QVBoxLayout(bubble_);
  v->setContentsMargins(kBubblePadding, 8, kBubblePadding, 6);
  v->setSpacing(4);

  // Header: who wrote it, the branch picker, then the actions on the right.
  auto* header = new QHBoxLayout();
  header->setSpacing(2);
  roleLabel_ = new QLabel(bubble_);
  roleLabel_->setObjectName(QStringLiteral("roleLabel"));
  header->addWidget(roleLabel_);
  header->addSpacing(6);
  prevBranch_ = actionButton(QStringLiteral("‹"), tr("Previous branch"), bubble_);
  branchLabel_ = new QLabel(bubble_);
  branchLabel_->setObjectName(QStringLiteral("branchLabel"));
  nextBranch_ = actionButton(QStringLiteral("›"), tr("Next branch"), bubble_);
  header->addWidget(prevBranch_);
  header->addWidget(branchLabel_);
  header->addWidget(nextBranch_);
  header->addStretch(1);
  copyButton_ = actionButton(tr("Copy"), tr("Copy this message as Markdown"), bubble_);
  editButton_ =
      actionButton(tr("Edit"), tr("Edit and send as a new branch; both are kept"), bubble_);
  regenButton_ = actionButton(tr("Regenerate"), tr("Write another reply (a new branch)"), bubble_);
  locateButton_ =
      actionButton(tr("Cache"), tr("Show this message's prompt in the cache panel"), bubble_);
  header->addWidget(copyButton_);
  header->addWidget(editButton_);
  header->addWidget(regenButton_);
  header->addWidget(locateButton_);
  v->addLayout(header);

  // The body and the in-place editor take turns (hidden widgets take no
  // room, so the bubble follows the body's own height as it streams).
  body_ = new MarkdownView(bubble_);
  v->addWidget(body_);
  thinkToggle_ = actionButton(tr("Reasoning"), tr("Show or hide how the model reasoned"), bubble_);
  thinkToggle_->setObjectName(QStringLiteral("reasoningToggle"));
  thinkToggle_->setCheckable(true);
  thinkToggle_->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
  thinkToggle_->setArrowType(Qt::RightArrow);
  thinkToggle_->hide();
  v->addWidget(thinkToggle_);
  thinkBody_ = new MarkdownView(bubble_);
  thinkBody_->setObjectName(QStringLiteral("reasoningBody"));
  thinkBody_->hide();
  v->addWidget(thinkBody_);
  editor_ = new QWidget(bubble_);
  editor_->hide();
  auto* ev = new QVBoxLayout(editor_);
  ev->setContentsMargins(0, 0, 0, 0);
  editText_ = new QPlainTextEdit(editor_);
  editText_->setObjectName(QStringLiteral("editText"));
  auto* eb = new QHBoxLayout();
  eb->addStretch(1);
  auto* cancel = new QPushButton(tr("Cancel"), editor_);
  auto* save = new QPushButton(tr("Send as new branch"), editor_);
  save->setDefault(true);
  eb->addWidget(cancel);
  eb->addWidget(save);
  ev->addWidget(editText_);
  ev->addLayout(eb);
  v->addWidget(editor_);

  footer_ = new QLabel(bubble_);
  footer_->setObjectName(QStringLiteral("metricsLabel"));
  footer_->setWordWrap(true);
  v->addWidget(footer_);

  renderTimer_.setSingleShot(true);
  connect(&renderTimer_, &QTimer::timeout, this, &MessageWidget::renderNow);
  connect(thinkToggle_, &QToolButton::toggled, this, [this](bool on) {
    thinkToggle_->setArrowType(on ? Qt::DownArrow : Qt::RightArrow);
    renderNow();
  });
  connect(copyButton_, &QToolButton::clicked, this,
          [this] { copyWithConfirmation(copyButton_, row_.text); });
  connect(editButton_, &QToolButton::clicked, this, &MessageWidget::startEdit);
  connect(regenButton_, &QToolButton::clicked, this, [this] { emit regenerateRequested(row_.id); });
  connect(locateButton_, &QToolButton::clicked, this, [this] { emit locateRequested(row_.id); });
  connect(prevBranch_, &QToolButton::clicked, this, [this] { emit branchRequested(row_.id, -1); });
  connect(nextBranch_, &QToolButton::clicked, this, [this] { emit branchRequested(row_.id, +1); });
  connect(cancel, &QPushButton::clicked, this, [this] { showEditor(false); });
  connect(save, &QPushButton::clicked, this, [this] {
    const QString text = editText_->toPlainText().trimmed();
    showEditor(false);
    if (!text.isEmpty() && text != row_.text) emit editSubmitted(row_.id, text);
  });

  renderNow();
  updateChrome();
}

void MessageWidget::setRow(const ChatMessageRow& row) {
  const bool textChanged = row.text != row_.text;
  row_ = row;
  if (textChanged) {
    if (row_.streaming) {
      if (!renderTimer_.isActive()) renderTimer_.start(50);
    } else {
      renderTimer_.stop();
      renderNow();
    }
  } else if (!row_.streaming && renderTimer_.isActive()) {
    renderTimer_.stop();
    renderNow();
  }
  updateChrome();
}

void MessageWidget::setAvailableWidth(int width) {
  if (width == available_) return;
  available_ = width;
  layoutBubble();
}

void MessageWidget::setActionsEnabled(bool enabled) {
  actionsEnabled_ = enabled;
  updateChrome();
}

bool MessageWidget::isEditing() const { return !editor_->isHidden(); }

QPoint MessageWidget::markFound(const QString& text) {
  bubble_->setProperty("found", true);
  bubble_->style()->unpolish(bubble_);  // the style sheet keys on it
  bubble_->style()->polish(bubble_);
  const QTextCursor hit = body_->document()->find(text);
  if (hit.isNull()) return bubble_->pos();
  body_->setTextCursor(hit);
  return body_->viewport()->mapTo(this, body_->cursorRect(hit).topLeft());
}

bool MessageWidget::isMarkedFound() const { return bubble_->property("found").toBool(); }

void MessageWidget::showEditor(bool on) {
  editor_->setVisible(on);
  body_->setVisible(!on);
  renderNow();
}

void MessageWidget::renderNow() {
  // A reply that has not produced text yet shows a placeholder, not nothing.
  const ReasoningText split = row_.role == ChatRole::Assistant
                                  ? splitReasoning(row_.text, row_.opensInReasoning)
                                  : ReasoningText{{}, row_.text, false, false};
  QString text = split.answer;
  if (text.isEmpty() && row_.streaming) text = QStringLiteral("…");
  body_->setMarkdownText(text);
  body_->setVisible(!isEditing() && (!text.isEmpty() || !split.hasReasoning));
  thinkToggle_->setVisible(split.hasReasoning && !isEditing());
  thinkToggle_->setText(split.thinking ? tr("Reasoning…") : tr("Reasoning"));
  const bool expanded = split.hasReasoning && thinkToggle_->isChecked() && !isEditing();
  if (expanded) thinkBody_->setMarkdownText(split.reasoning);
  thinkBody_->setVisible(expanded);
  layoutBubble();
}

void MessageWidget::updateChrome() {
  const bool user = row_.role == ChatRole::User;
  const bool assistant = row_.role == ChatRole::Assistant;
  // The model's name is in the tooltip: in a narrow chat column the header
  // must keep the role and every action button whole.
  roleLabel_->setText(user ? tr("You") : assistant ? tr("Assistant") : tr("System prompt"));
  roleLabel_->setToolTip(assistant && !row_.model.isEmpty() ? tr("Written by %1").arg(row_.model)
                                                            : QString());

  const bool branches = row_.branchCount > 1;
  prevBranch_->setVisible(branches);
  nextBranch_->setVisible(branches);
  branchLabel_->setVisible(branches);
  branchLabel_->setText(QStringLiteral("%1/%2").arg(row_.branchIndex + 1).arg(row_.branchCount));
  prevBranch_->setEnabled(actionsEnabled_ && row_.branchIndex > 0);
  nextBranch_->setEnabled(actionsEnabled_ && row_.branchIndex + 1 < row_.branchCount);

  const QString footer = footerText(row_);
  footer_->setText(footer);
  footer_->setVisible(!footer.isEmpty());
  if (footer_->property("error").toBool() != !row_.error.isEmpty()) {
    footer_->setProperty("error", !row_.error.isEmpty());
    footer_->style()->unpolish(footer_);  // the style sheet keys on it
    footer_->style()->polish(footer_);
  }
  copyButton_->setVisible(!row_.streaming);
  editButton_->setVisible(user);
  editButton_->setEnabled(actionsEnabled_);
  regenButton_->setVisible(assistant && !row_.streaming);
  regenButton_->setEnabled(actionsEnabled_);
  locateButton_->setVisible(!row_.streaming && row_.role != ChatRole::System);
}

void MessageWidget::startEdit() {
  editText_->setPlainText(row_.text);
  showEditor(true);
  editText_->setFocus();
  editText_->selectAll();
}

void MessageWidget::layoutBubble() {
  const bool user = row_.role == ChatRole::User;
  const int bubbleMax = user && !isEditing() ? available_ * 4 / 5 : available_;
  const int inner = std::max(120, bubbleMax - 2 * kBubblePadding);
  body_->setLayoutWidth(inner, user);
  if (thinkBody_->isVisible()) thinkBody_->setLayoutWidth(inner, false);
  if (isEditing()) {
    editText_->setFixedWidth(inner);
    editText_->setFixedHeight(std::clamp(body_->height() + 40, 90, 320));
  }
  bubble_->setMaximumWidth(bubbleMax);
  if (!user) bubble_->setMinimumWidth(bubbleMax);
  updateGeometry();
}

}  // namespace rc::ui
