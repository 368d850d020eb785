#include "chat/conversation-list-model.h"

#include <QDateTime>

namespace rc::ui {

ConversationListModel::ConversationListModel(QObject* parent) : QAbstractListModel(parent) {}

int ConversationListModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

QVariant ConversationListModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() < 0 || index.row() >= rowCount()) return {};
  const ConversationRow& r = rows_[static_cast<size_t>(index.row())];
  switch (role) {
    case Qt::DisplayRole:
    case Qt::EditRole:
      return r.title.isEmpty() ? tr("Untitled") : r.title;
    case Qt::ToolTipRole:
      return tr("%1\nLast message %2")
          .arg(r.title, QDateTime::fromMSecsSinceEpoch(r.updatedAtMs).toString(Qt::TextDate));
    case IdRole:
      return r.id;
    case UpdatedRole:
      return r.updatedAtMs;
    default:
      return {};
  }
}

void ConversationListModel::setConversations(std::vector<ConversationRow> rows) {
  beginResetModel();
  rows_ = std::move(rows);
  endResetModel();
}

int ConversationListModel::rowOf(qint64 id) const {
  for (size_t i = 0; i < rows_.size(); ++i) {
    if (rows_[i].id == id) return static_cast<int>(i);
  }
  return -1;
}

}  // namespace rc::ui
