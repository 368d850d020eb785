#include "dev-driver.h"

#include <QAction>
#include <QCoreApplication>
#include <QDateTime>
#include <QKeyEvent>
#include <QTimer>
#include <cstdio>

#include "chat/composer.h"
#include "get-model-dialog.h"
#include "main-window.h"
#include "panel/cache-panel-state.h"
#include "panel/cache-panel.h"

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

void DevDriver::runLesson(const QString& spec) {
  const int at = spec.lastIndexOf(QLatin1Char('@'));
  lesson_ = at < 0 ? spec : spec.left(at);
  lessonStep_ = at < 0 ? 0 : spec.mid(at + 1).toInt();
}

bool DevDriver::startLesson() {
  rc::ui::CachePanel* panel = window_->cachePanel();
  if (!panel || !panel->hasGl()) {
    complain(QStringLiteral("the cache panel is not available here"));
    return false;
  }
  rc::ui::CachePanelState* st = panel->state();
  const auto& all = rc::ui::panel::demo_scenarios();
  for (size_t i = 0; i < all.size(); ++i) {
    if (QString::fromStdString(all[i].name).startsWith(lesson_, Qt::CaseInsensitive)) {
      st->lesson.demo.lead_seconds = 0.5;
      st->lesson.demo.seconds_per_step = 6;  // the shot is taken before the next step
      st->lesson.policy = 0;                 // radix
      return st->start_lesson(i, 0);
    }
  }
  complain(QStringLiteral("no demo named ") + lesson_);
  return false;
}

// Polls the panel until the chosen step is on screen, lets its animation
// settle, then shoots.
void DevDriver::watchLesson() {
  rc::ui::CachePanelState* st = window_->cachePanel()->state();
  const auto& results = st->lesson.demo.results();
  const size_t k = lessonStep_ > 0 ? size_t(lessonStep_ - 1) : results.size() - 1;
  const bool failed = !st->lesson_active() && !st->lesson.error.empty();
  if (failed) {
    complain(QString::fromStdString(st->lesson.error));
    exitCode_ = 1;
    finish();
    return;
  }
  const bool shown = st->lesson_shown() && k < results.size() && results[k].finished &&
                     st->lesson.demo.step() == k && st->source.pending.empty();
  const qint64 now = QDateTime::currentMSecsSinceEpoch();
  if (shown && lessonShownAt_ < 0) lessonShownAt_ = now;
  if (lessonShownAt_ >= 0 && now - lessonShownAt_ > 1200) {
    finish();
    return;
  }
  QTimer::singleShot(50, this, &DevDriver::watchLesson);
}

void DevDriver::sendNext() {
  if (!lesson_.isEmpty() && next_ == 0) {
    ++next_;
    if (!startLesson()) {
      exitCode_ = 1;
      finish();
      return;
    }
    watchLesson();
    return;
  }
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
  if (regenerate_) {
    regenerate_ = false;
    // Through the menu action, as Ctrl+R does.
    for (QAction* a : window_->findChildren<QAction*>()) {
      if (a->text() != QLatin1String("&Regenerate last reply")) continue;
      QTimer::singleShot(100, a, &QAction::trigger);
      return;
    }
    complain(QStringLiteral("no Regenerate action"));
    exitCode_ = 1;
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
