// DevDriver: the hidden developer flags of `radixchat` (tests, screenshots
// for the docs). Once the window is ready it types each --send message into
// the message box and presses Enter, the next one after the previous reply
// is stored; after the last reply it saves --screenshot (QWidget::grab of the
// window) and, with --quit-after-reply, exits (without --send: as soon as
// the window is ready): 0 ok, 1 a reply failed or the
// screenshot could not be written, 2 the model did not load. With
// openGetModel it opens Model > Get a model… once the window is ready (and
// starts downloading catalog entry `id` when given); the screenshot is then
// of that dialog, taken a few seconds later. With regenerateLast the last
// reply is regenerated once (Chat > Regenerate last reply) and the
// screenshot waits for that reply. With runLesson it starts a
// cache-panel demo in lesson mode once the window is ready and takes the
// screenshot when the chosen step is on screen (docs/user-guide.md, lessons).
// GUI thread.
#pragma once

#include <QObject>
#include <QStringList>

namespace rc::gui {

class MainWindow;

class DevDriver : public QObject {
  Q_OBJECT
 public:
  DevDriver(MainWindow* window, QStringList messages, QString screenshot, bool quitAfterReply);
  void openGetModel(const QString& id);
  // "NAME[@K]": the demo whose name starts with NAME; shoot after step K
  // (1-based; default the last) is shown and has settled.
  void runLesson(const QString& spec);
  void regenerateLast() { regenerate_ = true; }

 private:
  void sendNext();
  void afterReply();
  void finish();
  bool startLesson();
  void watchLesson();

  MainWindow* window_;
  QStringList messages_;
  QString screenshot_;
  bool quit_;
  bool getModel_ = false;
  QString getModelId_;
  QString lesson_;      // demo name prefix; empty: no lesson
  int lessonStep_ = 0;  // 1-based step to shoot after; 0: the last
  qint64 lessonShownAt_ = -1;
  bool regenerate_ = false;  // after the sends, regenerate the last reply once
  int next_ = 0;
  int exitCode_ = 0;
};

}  // namespace rc::gui
