// GetModelDialog: Model > "Get a model…". Lists the curated catalog
// (model-catalog.h) with quant, download size and memory needed, downloads
// the chosen file into the models folder with ModelDownload (progress,
// pause/resume, SHA-256 check) and, when the file is installed, emits
// modelReady(path) so the window loads it. Closing the dialog does not stop
// a download: the window keeps the dialog and a finished download still
// opens the model. GUI thread.
#pragma once

#include <QDialog>
#include <QElapsedTimer>

#include "model-catalog.h"
#include "model-download.h"

class QLabel;
class QProgressBar;
class QPushButton;
class QTreeWidget;

namespace rc::gui {

class GetModelDialog : public QDialog {
  Q_OBJECT
 public:
  // endpoint empty: the Hub (or $HF_ENDPOINT).
  GetModelDialog(Catalog catalog, QString modelsDir, QString endpoint = QString(),
                 QWidget* parent = nullptr);

  ModelDownload* download() const { return download_; }
  QString modelsDir() const { return modelsDir_; }
  // Where a catalog entry is installed.
  QString destinationFor(const CatalogModel& m) const;
  // Selects the row of a catalog id; false if there is none.
  bool selectModel(const QString& id);
  // The Download / Use button of the selected row.
  void startSelected();
  QString statusText() const;

 signals:
  void modelReady(const QString& path);

 private:
  void buildUi();
  void fillRows();
  const CatalogModel* selected() const;
  void updateButtons();
  void updateDetails();
  void onProgress(qint64 received, qint64 total);
  void onState(ModelDownload::State s);
  void onFailed(const QString& message);
  void onFinished(const QString& path);
  void setStatus(const QString& text, bool error);

  Catalog catalog_;
  QString modelsDir_;
  QString endpoint_;
  ModelDownload* download_;
  QString activeId_;  // the catalog id being downloaded
  QElapsedTimer speedClock_;
  qint64 speedBase_ = 0;
  double physicalGb_ = 0;

  QTreeWidget* table_ = nullptr;
  QLabel* details_ = nullptr;
  QLabel* status_ = nullptr;
  QProgressBar* progress_ = nullptr;
  QPushButton* go_ = nullptr;
  QPushButton* pause_ = nullptr;
  QPushButton* cancel_ = nullptr;
};

}  // namespace rc::gui
