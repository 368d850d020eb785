// DocumentsDialog: the Documents pane (View > Documents…,
// docs/architecture.md section 21). The library in library order, or the
// documents matching a search (BM25 over their chunks); per document its
// token count, format, whether it is kept warm (a checkbox: pinned in the
// cache, DocumentController::setKeptWarm), state in the cache (computing,
// in memory, on disk, partly, not) and the conversations that use it.
// Add… puts files into the library; Remove takes one out of it and out of
// every conversation, and purges the KV only its prompts used. Non-modal,
// GUI thread; it reads everything through the DocumentController.
#pragma once

#include <QDialog>
#include <map>

class QLabel;
class QLineEdit;
class QPushButton;
class QTableWidget;

namespace rc::gui {

class DocumentController;

class DocumentsDialog : public QDialog {
  Q_OBJECT
 public:
  enum Column { kName, kTokens, kFormat, kKeepWarm, kState, kUsedBy, kColumns };
  DocumentsDialog(DocumentController* documents, QWidget* parent = nullptr);

  // Lists again (the search text kept).
  void refresh();
  QTableWidget* table() const { return table_; }  // for tests
  QLineEdit* search() const { return search_; }
  QLabel* status() const { return status_; }
  // The document named in `row` of the table.
  QString nameAt(int row) const;
  // Removes the selected document (the Remove button).
  void removeSelected();

 signals:
  // Asks for the file dialog that adds to the library.
  void addRequested();

 private:
  DocumentController* docs_;
  QLineEdit* search_ = nullptr;
  QTableWidget* table_ = nullptr;
  QPushButton* remove_ = nullptr;
  QLabel* status_ = nullptr;
  std::map<QString, QString> states_;  // the last documentStates, by name
};

}  // namespace rc::gui
