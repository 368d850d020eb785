#include "chat/composer.h"

#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QPushButton>
#include <QStyle>
#include <QVBoxLayout>

namespace rc::ui {

ComposerEdit::ComposerEdit(QWidget* parent) : QPlainTextEdit(parent) {
  setObjectName(QStringLiteral("composerEdit"));
  setTabChangesFocus(true);
  // Short: the hint line below says how to send, and a narrow window must
  // not cut the placeholder.
  setPlaceholderText(tr("Message the model"));
  setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
  // Grow with the text, from one line to about eight.
  connect(document(), &QTextDocument::contentsChanged, this, [this] { updateGeometry(); });
}

QSize ComposerEdit::sizeHint() const {
  const int lines = std::clamp(document()->lineCount(), 1, 8);
  const int lineHeight = fontMetrics().lineSpacing();
  // Document margin, frame, and the style sheet's padding (contentsMargins).
  const QMargins cm = contentsMargins();
  const int margins =
      static_cast<int>(document()->documentMargin() * 2) + cm.top() + cm.bottom() + 6;
  return {QPlainTextEdit::sizeHint().width(), lines * lineHeight + margins};
}

QSize ComposerEdit::minimumSizeHint() const {
  return {QPlainTextEdit::minimumSizeHint().width(), sizeHint().height()};
}

void ComposerEdit::keyPressEvent(QKeyEvent* event) {
  const bool enter = event->key() == Qt::Key_Return || event->key() == Qt::Key_Enter;
  const Qt::KeyboardModifiers mods = event->modifiers() & ~Qt::KeypadModifier;
  if (enter && mods == Qt::NoModifier) {
    emit submitted();
    return;
  }
  if (enter && (mods & Qt::ShiftModifier)) {
    insertPlainText(QStringLiteral("\n"));
    ensureCursorVisible();
    return;
  }
  QPlainTextEdit::keyPressEvent(event);
}

Composer::Composer(QWidget* parent) : QWidget(parent) {
  setObjectName(QStringLiteral("composer"));
  auto* v = new QVBoxLayout(this);
  v->setContentsMargins(16, 8, 16, 10);
  v->setSpacing(4);
  auto* row = new QHBoxLayout();
  edit_ = new ComposerEdit(this);
  button_ = new QPushButton(this);
  button_->setObjectName(QStringLiteral("sendButton"));
  button_->setMinimumWidth(84);
  row->addWidget(edit_, 1);
  row->addWidget(button_, 0, Qt::AlignBottom);
  v->addLayout(row);
  hint_ = new QLabel(this);
  hint_->setObjectName(QStringLiteral("composerHint"));
  v->addWidget(hint_);
  connect(edit_, &ComposerEdit::submitted, this, &Composer::trySend);
  connect(button_, &QPushButton::clicked, this, [this] {
    if (generating_) {
      emit stopRequested();
    } else {
      trySend();
    }
  });
  updateButton();
}

void Composer::setGenerating(bool generating) {
  generating_ = generating;
  updateButton();
}

void Composer::setReady(bool ready, const QString& whyNot) {
  ready_ = ready;
  whyNot_ = whyNot;
  updateButton();
}

QString Composer::text() const { return edit_->toPlainText(); }

void Composer::setText(const QString& text) { edit_->setPlainText(text); }

void Composer::focusInput() { edit_->setFocus(); }

void Composer::trySend() {
  const QString text = edit_->toPlainText().trimmed();
  // Enter while a reply streams or before the model is ready keeps the text.
  if (text.isEmpty() || generating_ || !ready_) return;
  edit_->clear();
  emit sendRequested(text);
}

void Composer::updateButton() {
  button_->setText(generating_ ? tr("Stop") : tr("Send"));
  button_->setToolTip(generating_ ? tr("Stop the reply (Esc)") : tr("Send (Enter)"));
  button_->setProperty("stop", generating_);
  button_->setEnabled(generating_ || ready_);
  hint_->setText(generating_ ? tr("Generating — Esc stops")
                 : ready_    ? tr("Enter sends · Shift+Enter new line · Ctrl+N new chat")
                             : whyNot_);
  // Re-apply the style sheet rule that depends on the "stop" property.
  button_->style()->unpolish(button_);
  button_->style()->polish(button_);
}

}  // namespace rc::ui
