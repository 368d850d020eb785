// Where a file dialog of the app starts: the user's folder for that kind of
// file (Pictures, Documents) when it exists, else the home folder, never
// the process's working directory. Any thread.
#pragma once

#include <QStandardPaths>
#include <QString>

namespace rc::ui {

QString startFolder(QStandardPaths::StandardLocation where);

}  // namespace rc::ui
