#include "dev-driver.h"

#include <QCoreApplication>
#include <QKeyEvent>
#include <QTimer>
#include <cstdio>

#include "chat/composer.h"
#include "get-model-dialog.h"
#include "main-window.h"

namespace rc::gui {

namespace {

void complain(const QString& message) {
  std::fprintf(stderr, "radixchat: %s\n", message.toLocal8Bit().constData());
}

}  // namespace

DevDriver::DevDriver(MainWindow* window, QStringList messages, QString screenshot,
                     bool quitAfterReply)
    : QObject(window),
      window_(window),
      messages_(std::move(messages)),
      screenshot_(std::move(screenshot)),
      quit_(quitAfterReply) {
  ChatController* c = window_->controller();
  connect(window_, &MainWindow::readyForInput, this, &DevDriver::sendNext);
  connect(c, &ChatController::replyFinished, this,
          [this](qint64, const ReplyMetrics&, const QString& error) {
            if (error.isEmpty()) return;
            complain(QStringLiteral("the reply failed: ") + error);
            exitCode_ = 1;
          });
  connect(c, &ChatController::replyStored, this, &DevDriver::afterReply);
  connect(window_, &MainWindow::startupLoadFailed, this, [this](const QString& why) {
    complain(QStringLiteral("the model did not load: ") + why);
    if (quit_) QCoreApplication::exit(2);
  });
}

void DevDriver::openGetModel(const QString& id) {
  getModel_ = true;
  getModelId_ = id;
}

void DevDriver::sendNext() {
  if (getModel_ && messages_.isEmpty() && next_ == 0) {
    ++next_;
    GetModelDialog* d = window_->openGetModel();
    if (d && !getModelId_.isEmpty()) {
      if (!d->selectModel(getModelId_)) complain(QStringLiteral("no catalog entry ") + getModelId_);
      d->startSelected();
    }
    // Give a download time to show progress before the picture.
    QTimer::singleShot(getModelId_.isEmpty() ? 800 : 4000, this, &DevDriver::finish);
    return;
  }
  if (messages_.isEmpty() && next_ == 0) {
    // Nothing to send: capture the window as it opened (first-run docs).
    ++next_;
    QTimer::singleShot(800, this, &DevDriver::finish);
    return;
  }
  if (next_ >= messages_.size()) return;
  // Typed and sent through the real key path: Enter in the message box.
  rc::ui::ComposerEdit* edit = window_->composer()->edit();
  edit->setPlainText(messages_[next_++]);
  QCoreApplication::postEvent(edit,
                              new QKeyEvent(QEvent::KeyPress, Qt::Key_Return, Qt::NoModifier));
}

void DevDriver::afterReply() {
  if (next_ < messages_.size()) {
    QTimer::singleShot(100, this, &DevDriver::sendNext);
    return;
  }
  // Let the last render and the layout settle before grabbing.
  QTimer::singleShot(400, this, &DevDriver::finish);
}

void DevDriver::finish() {
  QWidget* target = window_;
  if (getModel_) {
    if (auto* d = window_->findChild<GetModelDialog*>(); d && d->isVisible()) target = d;
  }
  if (!screenshot_.isEmpty() && !target->grab().save(screenshot_, "PNG")) {
    complain(QStringLiteral("cannot write ") + screenshot_);
    exitCode_ = 1;
  }
  if (quit_) QCoreApplication::exit(exitCode_);
}

}  // namespace rc::gui
