// DevDriver: the hidden developer flags of `radixchat` (tests, screenshots
// for the docs). Once the window is ready it types each --send message into
// the message box and presses Enter, the next one after the previous reply
// is stored; after the last reply it saves --screenshot (QWidget::grab of the
// window) and, with --quit-after-reply, exits (without --send: as soon as
// the window is ready): 0 ok, 1 a reply failed or the
// screenshot could not be written, 2 the model did not load. With
// openGetModel it opens Model > Get a model… once the window is ready (and
// starts downloading catalog entry `id` when given); the screenshot is then
// of that dialog, taken a few seconds later. GUI thread.
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

 private:
  void sendNext();
  void afterReply();
  void finish();

  MainWindow* window_;
  QStringList messages_;
  QString screenshot_;
  bool quit_;
  bool getModel_ = false;
  QString getModelId_;
  int next_ = 0;
  int exitCode_ = 0;
};

}  // namespace rc::gui
