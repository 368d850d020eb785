// The welcome conversation a new user finds on first run: a short exchange
// that explains what the cache panel shows, so the first minutes teach what
// the app is about.
#pragma once

#include "store/store.h"

namespace rc::gui {

// Settings key naming a conversation that ChatController::start() opens
// instead of a blank chat (read once, then erased).
inline constexpr const char* kOpenAtStartKey = "chat.open_at_start";

// On first run only (setting "app.welcomed" absent) and only into an empty
// history: adds the welcome conversation and asks start() to open it.
// Runs on the store thread. Errors are returned, nothing is half-written
// beyond what the store's own transactions guarantee.
Status add_welcome_once(rc::store::Store& store);

}  // namespace rc::gui
