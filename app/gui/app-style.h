// The desktop app's look: a light theme as one style sheet, plus a base font
// size that stays readable where the platform default is small (Xvfb, bare
// window managers). Call once, after QApplication exists.
#pragma once

class QApplication;

namespace rc::gui {

void applyAppStyle(QApplication& app);

}  // namespace rc::gui
