// ChatView: the thread of a ChatModel as a scrolling column of message
// bubbles. It mirrors the model (reset -> rebuild, rows inserted -> new
// bubbles, data changed -> that bubble updates) and follows the bottom while
// a reply streams unless the user scrolled up. GUI thread; does not own the
// model. Requests from bubbles are re-emitted for the controller.
#pragma once

#include <QElapsedTimer>
#include <QPointer>
#include <QScrollArea>
#include <vector>

class QLabel;
class QVBoxLayout;

namespace rc::ui {

class ChatModel;
class MessageWidget;

class ChatView : public QScrollArea {
  Q_OBJECT
 public:
  explicit ChatView(QWidget* parent = nullptr);

  void setModel(ChatModel* model);
  // Disables branch switching, edit and regenerate while a reply streams.
  void setBusy(bool busy);
  // What the empty chat shows: plain text, centred, or Markdown (an
  // introduction), as a left-aligned page.
  void setPlaceholderText(const QString& text, Qt::TextFormat format = Qt::PlainText);
  int messageCount() const { return static_cast<int>(bubbles_.size()); }
  MessageWidget* messageWidget(int row) const;  // for tests
  // Scrolls to the message of `id` and marks it as found (outlined, the
  // first occurrence of `text` in it selected) until the thread changes.
  // Ignored when that message is not on screen.
  void showMessage(qint64 id, const QString& text);

 signals:
  void editSubmitted(qint64 id, const QString& text);
  void regenerateRequested(qint64 id);
  void branchRequested(qint64 id, int delta);
  void locateRequested(qint64 id);

 protected:
  void resizeEvent(QResizeEvent* event) override;

 private:
  void rebuild();
  void insertRows(int first, int last);
  void updateRows(int first, int last);
  MessageWidget* makeBubble(int row);
  int columnWidth() const;
  void scrollToBottomSoon();
  void scrollToFound();

  ChatModel* model_ = nullptr;
  QWidget* content_ = nullptr;
  QVBoxLayout* column_ = nullptr;
  QLabel* placeholder_ = nullptr;
  std::vector<MessageWidget*> bubbles_;
  bool busy_ = false;
  bool followBottom_ = true;
  QPointer<MessageWidget> found_;  // showMessage's, until the thread changes
  QPoint foundAt_;                 // where its text is, in its coordinates
  QElapsedTimer foundClock_;       // since showMessage
};

}  // namespace rc::ui
