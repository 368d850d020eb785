#include "model-picker.h"

#include <QFileDialog>
#include <QFileInfo>

namespace rc::gui {

namespace {

constexpr int kMaxRecent = 8;
const char* const kOpenFile = "open-file";  // item data of "Open GGUF file…"
const char* const kBundled = "bundled";
const char* const kGetModel = "get-model";  // item data of "Get a model…"

}  // namespace

ModelPicker::ModelPicker(QWidget* parent) : QComboBox(parent) {
  setObjectName(QStringLiteral("modelPicker"));
  setSizeAdjustPolicy(QComboBox::AdjustToContents);
  setMinimumContentsLength(18);
  setToolTip(tr("The model replies come from; open any GGUF file (Ctrl+O)"));
  connect(this, &QComboBox::activated, this, &ModelPicker::activatedAt);
  rebuild();
}

void ModelPicker::setRecent(const QStringList& paths) {
  recent_ = paths.mid(0, kMaxRecent);
  rebuild();
}

void ModelPicker::setLoadedModel(const QString& path, const QString& name) {
  hasLoaded_ = true;
  loadedPath_ = path;
  loadedName_ = name;
  if (!path.isEmpty()) {
    recent_.removeAll(path);
    recent_.prepend(path);
    while (recent_.size() > kMaxRecent) recent_.removeLast();
  }
  rebuild();
}

void ModelPicker::loadEnded() { rebuild(); }

void ModelPicker::rebuild() {
  rebuilding_ = true;
  clear();
  const bool bundledLoaded = hasLoaded_ && loadedPath_.isEmpty();
  addItem(bundledLoaded ? tr("%1 (bundled)").arg(loadedName_) : tr("Bundled model"),
          QString::fromLatin1(kBundled));
  setItemData(0, tr("The model that ships with RadixChat"), Qt::ToolTipRole);
  for (const QString& p : recent_) {
    const bool loaded = hasLoaded_ && p == loadedPath_;
    addItem(loaded && !loadedName_.isEmpty() ? loadedName_ : QFileInfo(p).fileName(), p);
    setItemData(count() - 1, p, Qt::ToolTipRole);
  }
  insertSeparator(count());
  addItem(tr("Open GGUF file…"), QString::fromLatin1(kOpenFile));
  addItem(tr("Get a model…"), QString::fromLatin1(kGetModel));
  setItemData(count() - 1, tr("Download a small chat model from Hugging Face"), Qt::ToolTipRole);
  int current = 0;
  for (int i = 0; i < count(); ++i) {
    if (hasLoaded_ && !loadedPath_.isEmpty() && itemData(i).toString() == loadedPath_) current = i;
  }
  setCurrentIndex(current);
  rebuilding_ = false;
}

void ModelPicker::activatedAt(int index) {
  if (rebuilding_) return;
  const QString data = itemData(index).toString();
  if (data == QLatin1String(kGetModel)) {
    rebuild();  // show the loaded model while the dialog is open
    emit getModelRequested();
    return;
  }
  if (data == QLatin1String(kOpenFile)) {
    rebuild();  // the file dialog may be cancelled: show the loaded model meanwhile
    openFile();
    return;
  }
  const QString path = data == QLatin1String(kBundled) ? QString() : data;
  if (hasLoaded_ && path == loadedPath_) return;
  emit modelRequested(path);
}

void ModelPicker::openFile() {
  const QString start = recent_.isEmpty() ? QString() : QFileInfo(recent_.first()).absolutePath();
  const QString path = QFileDialog::getOpenFileName(this, tr("Open a GGUF model"), start,
                                                    tr("GGUF models (*.gguf);;All files (*)"));
  if (!path.isEmpty()) emit modelRequested(path);
}

}  // namespace rc::gui
