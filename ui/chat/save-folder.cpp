#include "chat/save-folder.h"

#include <QDir>

namespace rc::ui {

QString startFolder(QStandardPaths::StandardLocation where) {
  // writableLocation names the folder even where it was never made, and a
  // dialog given a missing folder falls back to the working directory.
  const QString dir = QStandardPaths::writableLocation(where);
  return !dir.isEmpty() && QDir(dir).exists() ? dir : QDir::homePath();
}

}  // namespace rc::ui
