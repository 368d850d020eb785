// DocumentChips: the documents attached to the conversation on screen, one
// chip each above the composer (docs/architecture.md section 21): the file's
// name, its state ("computing…" while it is added and its prefix warmed,
// then "ready") and a button that detaches it. Hidden while there are none.
// GUI thread.
#pragma once

#include <QString>
#include <QWidget>
#include <vector>

class QHBoxLayout;

namespace rc::ui {

struct DocumentChip {
  QString name;
  QString state;  // shown after the name; empty: none
  QString tooltip;
};

class DocumentChips : public QWidget {
  Q_OBJECT
 public:
  explicit DocumentChips(QWidget* parent = nullptr);
  void setChips(const std::vector<DocumentChip>& chips);
  const std::vector<DocumentChip>& chips() const { return chips_; }

 signals:
  void removeRequested(const QString& name);

 private:
  QHBoxLayout* row_ = nullptr;
  std::vector<DocumentChip> chips_;
};

}  // namespace rc::ui
