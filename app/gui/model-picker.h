// ModelPicker: the toolbar's model chooser: the bundled model (default), the
// GGUF files opened before, "Open GGUF file…" and "Get a model…". It only
// asks for a model (modelRequested, getModelRequested); the window loads it
// and tells the picker the outcome
// (setLoadedModel / loadEnded), so after a failed or cancelled load the
// picker shows the model still in use. GUI thread.
#pragma once

#include <QComboBox>
#include <QStringList>

namespace rc::gui {

class ModelPicker : public QComboBox {
  Q_OBJECT
 public:
  explicit ModelPicker(QWidget* parent = nullptr);

  // Files opened before, newest first (kept in the app settings).
  void setRecent(const QStringList& paths);
  QStringList recent() const { return recent_; }
  // The model now serving. path empty: the bundled one.
  void setLoadedModel(const QString& path, const QString& name);
  // A load ended without success: show the loaded model again.
  void loadEnded();
  // Shows the file dialog (also the menu's Model > Open GGUF…).
  void openFile();

 signals:
  void modelRequested(const QString& path);  // empty: the bundled model
  void getModelRequested();                  // "Get a model…" (download dialog)

 private:
  void rebuild();
  void activatedAt(int index);

  QStringList recent_;
  QString loadedPath_;
  QString loadedName_;
  bool hasLoaded_ = false;
  bool rebuilding_ = false;
};

}  // namespace rc::gui
