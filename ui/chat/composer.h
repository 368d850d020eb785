// Composer: the message box under the chat. Enter sends, Shift+Enter inserts
// a new line (the habit of chat apps); the box grows with its text up to a
// few lines. The Send button turns into Stop while a reply streams. GUI thread.
#pragma once

#include <QPlainTextEdit>
#include <QWidget>

class QLabel;
class QPushButton;

namespace rc::ui {

// The text box alone, so the key handling can be tested on its own.
class ComposerEdit : public QPlainTextEdit {
  Q_OBJECT
 public:
  explicit ComposerEdit(QWidget* parent = nullptr);
  QSize sizeHint() const override;
  // QAbstractScrollArea's minimum (~70 px) would keep a one-line box tall.
  QSize minimumSizeHint() const override;

 signals:
  void submitted();

 protected:
  void keyPressEvent(QKeyEvent* event) override;
};

class Composer : public QWidget {
  Q_OBJECT
 public:
  explicit Composer(QWidget* parent = nullptr);

  // Generating: the button stops instead of sending. Ready: a model is
  // loaded; without one the box still takes text but does not send.
  void setGenerating(bool generating);
  void setReady(bool ready, const QString& whyNot = {});
  QString text() const;
  void setText(const QString& text);
  ComposerEdit* edit() const { return edit_; }
  void focusInput();

 signals:
  void sendRequested(const QString& text);
  void stopRequested();

 private:
  void trySend();
  void updateButton();

  ComposerEdit* edit_ = nullptr;
  QPushButton* button_ = nullptr;
  QLabel* hint_ = nullptr;
  bool generating_ = false;
  bool ready_ = false;
  QString whyNot_;
};

}  // namespace rc::ui
