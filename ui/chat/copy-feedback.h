// Copying with a visible confirmation: every Copy button of the chat (a
// message's, a code block's) puts the text on the clipboard and reads
// "Copied" for a moment, so the user sees that the click did something.
// GUI thread.
#pragma once

#include <QString>

class QAbstractButton;

namespace rc::ui {

inline constexpr int kCopiedConfirmMs = 1500;

// Puts `text` on the clipboard and shows "Copied" on `button` for
// kCopiedConfirmMs, then the button's own text again (a second click in
// that time restarts the moment).
void copyWithConfirmation(QAbstractButton* button, const QString& text);

}  // namespace rc::ui
