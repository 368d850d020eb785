// Private to chat-controller*.cpp: the store round trip and the reading of a
// conversation on the store thread.
#pragma once

#include <QMetaObject>
#include <functional>
#include <string>

#include "chat-controller.h"
#include "store-convert.h"

namespace rc::gui {

// A conversation as read on the store thread, ready for the GUI.
struct ChatController::Loaded {
  qint64 id = 0;
  QString title;
  QString systemPrompt;
  std::optional<qint64> presetId;
  ChatSampling sampling;
  std::vector<rc::ui::ChatMessageRow> rows;
  QString error;  // non-empty: reading failed
};

// Runs `task` on the store thread and `done` with its result on the GUI
// thread. The destructor of ChatController drains the store queue, so
// `this` outlives every callback it posts.
template <typename R>
void ChatController::storeCall(std::function<R(rc::store::Store&)> task,
                               std::function<void(R)> done) {
  store_->post([this, task = std::move(task), done = std::move(done)](rc::store::Store& s) {
    R result = task(s);
    QMetaObject::invokeMethod(
        this, [done, result] { done(result); }, Qt::QueuedConnection);
  });
}

// "what failed: the store's message".
QString failure(const QString& what, const rc::Status& status);

}  // namespace rc::gui
