#include "documents-dialog.h"

#include <QDialogButtonBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QPushButton>
#include <QSignalBlocker>
#include <QTableWidget>
#include <QVBoxLayout>

#include "document-controller.h"

namespace rc::gui {

DocumentsDialog::DocumentsDialog(DocumentController* documents, QWidget* parent)
    : QDialog(parent), docs_(documents) {
  setObjectName(QStringLiteral("documentsDialog"));
  setWindowTitle(tr("Documents"));
  resize(760, 420);
  auto* v = new QVBoxLayout(this);
  auto* where = new QLabel(
      tr("The library: %1").arg(QString::fromStdString(documents->libraryPath().string())), this);
  where->setTextInteractionFlags(Qt::TextSelectableByMouse);
  v->addWidget(where);
  search_ = new QLineEdit(this);
  search_->setObjectName(QStringLiteral("documentSearch"));
  search_->setPlaceholderText(tr("Search the documents' text"));
  search_->setClearButtonEnabled(true);
  v->addWidget(search_);
  table_ = new QTableWidget(0, kColumns, this);
  table_->setObjectName(QStringLiteral("documentTable"));
  table_->setHorizontalHeaderLabels(
      {tr("Name"), tr("Tokens"), tr("Format"), tr("Keep warm"), tr("State"), tr("Used by")});
  table_->horizontalHeaderItem(kKeepWarm)->setToolTip(
      tr("Kept warm: computed when the app starts and pinned in the cache, so "
         "the first question about it answers at once"));
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::SingleSelection);
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->verticalHeader()->hide();
  table_->horizontalHeader()->setStretchLastSection(true);
  table_->horizontalHeader()->setSectionResizeMode(kName, QHeaderView::Stretch);
  v->addWidget(table_, 1);
  status_ = new QLabel(this);
  status_->setObjectName(QStringLiteral("documentStatus"));
  status_->setWordWrap(true);
  v->addWidget(status_);
  auto* buttons = new QHBoxLayout();
  auto* add = new QPushButton(tr("Add…"), this);
  add->setObjectName(QStringLiteral("documentAdd"));
  remove_ = new QPushButton(tr("Remove"), this);
  remove_->setObjectName(QStringLiteral("documentRemove"));
  remove_->setToolTip(
      tr("Take it out of the library and of every conversation, and erase its cached KV"));
  remove_->setEnabled(false);
  auto* close = new QDialogButtonBox(QDialogButtonBox::Close, this);
  buttons->addWidget(add);
  buttons->addWidget(remove_);
  buttons->addStretch(1);
  buttons->addWidget(close);
  v->addLayout(buttons);

  connect(close, &QDialogButtonBox::rejected, this, &QDialog::close);
  connect(add, &QPushButton::clicked, this, &DocumentsDialog::addRequested);
  connect(remove_, &QPushButton::clicked, this, &DocumentsDialog::removeSelected);
  connect(search_, &QLineEdit::textChanged, this, &DocumentsDialog::refresh);
  connect(table_, &QTableWidget::itemChanged, this, [this](QTableWidgetItem* item) {
    if (item->column() != kKeepWarm) return;
    const QString name = nameAt(item->row());
    const bool keep = item->checkState() == Qt::Checked;
    status_->setText(keep ? tr("Keeping %1 warm…").arg(name)
                          : tr("No longer keeping %1 warm…").arg(name));
    docs_->setKeptWarm(name, keep);
  });
  connect(table_, &QTableWidget::itemSelectionChanged, this,
          [this] { remove_->setEnabled(!table_->selectedItems().isEmpty()); });
  connect(docs_, &DocumentController::libraryChanged, this, &DocumentsDialog::refresh);
  connect(docs_, &DocumentController::libraryListed, this,
          [this](const std::vector<DocumentController::Row>& rows) {
            const QLocale c(QLocale::English);
            const QSignalBlocker quiet(table_);  // itemChanged is the user's toggle only
            table_->setRowCount(static_cast<int>(rows.size()));
            for (int i = 0; i < static_cast<int>(rows.size()); ++i) {
              const DocumentController::Row& r = rows[size_t(i)];
              auto set = [&](int col, const QString& text) {
                auto* item = new QTableWidgetItem(text);
                if (col == kTokens) item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
                table_->setItem(i, col, item);
              };
              set(kName, QString::fromStdString(r.info.name));
              table_->item(i, kName)->setToolTip(QString::fromStdString(r.info.source_path));
              set(kTokens, c.toString(r.info.token_count));
              set(kFormat, QString::fromStdString(r.info.format));
              auto* keep = new QTableWidgetItem();
              keep->setFlags(Qt::ItemIsUserCheckable | Qt::ItemIsEnabled | Qt::ItemIsSelectable);
              keep->setCheckState(r.info.pinned ? Qt::Checked : Qt::Unchecked);
              keep->setToolTip(tr("Keep it warm: pinned in the cache, computed at start"));
              table_->setItem(i, kKeepWarm, keep);
              auto known = states_.find(QString::fromStdString(r.info.name));
              set(kState, known != states_.end() ? known->second : QStringLiteral("…"));
              set(kUsedBy, r.conversations.isEmpty() ? tr("no conversation")
                                                     : r.conversations.join(QStringLiteral(", ")));
            }
            remove_->setEnabled(!table_->selectedItems().isEmpty());
          });
  connect(docs_, &DocumentController::documentStates, this,
          [this](const std::map<QString, QString>& states) {
            // The rows and the states come from two threads, in either order.
            states_ = states;
            for (int i = 0; i < table_->rowCount(); ++i) {
              auto it = states.find(nameAt(i));
              if (it != states.end() && table_->item(i, kState))
                table_->item(i, kState)->setText(it->second);
            }
          });
  connect(docs_, &DocumentController::keptWarmChanged, this,
          [this](const QString& name, bool keep, const QString& error) {
            status_->setText(!error.isEmpty() ? tr("%1: %2").arg(name, error)
                             : keep ? tr("%1 is kept warm: its KV is pinned in the cache and "
                                         "computed again when the app starts.")
                                          .arg(name)
                                    : tr("%1 is no longer kept warm.").arg(name));
          });
  connect(docs_, &DocumentController::removed, this,
          [this](const QString& name, qint64 tree, qint64 tier, const QString& error) {
            status_->setText(
                error.isEmpty()
                    ? tr("Removed %1: %2 cached tokens dropped from memory, %3 blocks from the "
                         "disk cache.")
                          .arg(name)
                          .arg(tree)
                          .arg(tier)
                    : tr("Removed %1; its cached KV was not erased: %2").arg(name, error));
          });
  refresh();
}

void DocumentsDialog::refresh() { docs_->listLibrary(search_->text()); }

QString DocumentsDialog::nameAt(int row) const {
  const QTableWidgetItem* item = table_->item(row, kName);
  return item ? item->text() : QString();
}

void DocumentsDialog::removeSelected() {
  const QList<QTableWidgetItem*> items = table_->selectedItems();
  if (items.isEmpty()) return;
  const QString name = nameAt(items.first()->row());
  status_->setText(tr("Removing %1…").arg(name));
  docs_->removeFromLibrary(name);
}

}  // namespace rc::gui
