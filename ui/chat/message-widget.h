// MessageWidget: one message of the thread as a bubble: role label, branch
// picker ("< 2/3 >") when the message has siblings, the Markdown body, the
// reply's figures, and its actions (copy; edit for user messages, which
// branches; regenerate for replies; show its prompt in the cache panel).
// A reasoning model's <think> block is shown collapsed under the reply
// (a "Reasoning" toggle expands it), never as raw tags. Editing happens in
// place. GUI thread. It only emits requests; the chat
// controller decides what they do.
#pragma once

#include <QFrame>
#include <QTimer>

#include "chat/chat-types.h"

class QLabel;
class QPlainTextEdit;
class QPushButton;
class QToolButton;

namespace rc::ui {

class MarkdownView;

class MessageWidget : public QWidget {
  Q_OBJECT
 public:
  explicit MessageWidget(const ChatMessageRow& row, QWidget* parent = nullptr);

  qint64 messageId() const { return row_.id; }
  // New contents for the same message. While streaming, the Markdown is
  // re-rendered at most every 50 ms (long replies re-parse on each render).
  void setRow(const ChatMessageRow& row);
  // Width of the chat column; bubbles of user messages take at most 80%.
  void setAvailableWidth(int width);
  void setActionsEnabled(bool enabled);  // off while a reply streams
  QString markdown() const { return row_.text; }
  bool isEditing() const;
  // Marks this message as the one a search found: the bubble is outlined
  // and the first occurrence of `text` in the body selected. Returns where
  // that text is, in this widget's coordinates (its top when not found).
  QPoint markFound(const QString& text);
  bool isMarkedFound() const;

 signals:
  void editSubmitted(qint64 id, const QString& text);
  void regenerateRequested(qint64 id);
  void branchRequested(qint64 id, int delta);
  void locateRequested(qint64 id);

 private:
  void renderNow();
  void updateChrome();
  void startEdit();
  void showEditor(bool on);
  void layoutBubble();

  ChatMessageRow row_;
  int available_ = 700;
  bool actionsEnabled_ = true;
  QTimer renderTimer_;
  QFrame* bubble_ = nullptr;
  QLabel* roleLabel_ = nullptr;
  QToolButton* prevBranch_ = nullptr;
  QLabel* branchLabel_ = nullptr;
  QToolButton* nextBranch_ = nullptr;
  MarkdownView* body_ = nullptr;
  QToolButton* thinkToggle_ = nullptr;  // "Reasoning" (collapsed by default)
  MarkdownView* thinkBody_ = nullptr;   // the <think> block's text, when expanded
  QWidget* editor_ = nullptr;
  QPlainTextEdit* editText_ = nullptr;
  QLabel* footer_ = nullptr;
  QToolButton* copyButton_ = nullptr;
  QToolButton* editButton_ = nullptr;
  QToolButton* regenButton_ = nullptr;
  QToolButton* locateButton_ = nullptr;
};

}  // namespace rc::ui
