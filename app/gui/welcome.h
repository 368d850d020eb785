// The introduction a new user finds on first run: what the app is, what
// the cache panel shows and that the bundled model is a tiny demo (with the
// way to a real one), on the empty chat's page. It is no conversation:
// nothing of it is stored as a message or sent to the model, and the first
// message typed under it starts an ordinary new chat titled after itself.
#pragma once

#include <QString>

#include "store/store.h"

namespace rc::gui {

// The introduction, in Markdown.
QString welcomeText();

// True on the first run only (setting "app.welcomed" absent) and only with
// an empty history; the setting is written at once, so the introduction
// shows on one launch. Runs on the store thread.
Result<bool> take_first_run(rc::store::Store& store);

}  // namespace rc::gui
