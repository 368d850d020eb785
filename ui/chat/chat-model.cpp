#include "chat/chat-model.h"

namespace rc::ui {

ChatModel::ChatModel(QObject* parent) : QAbstractListModel(parent) {}

int ChatModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

QVariant ChatModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() < 0 || index.row() >= rowCount()) return {};
  const ChatMessageRow& r = rows_[static_cast<size_t>(index.row())];
  switch (role) {
    case Qt::DisplayRole:
    case TextRole:
      return r.text;
    case IdRole:
      return r.id;
    case RoleRole:
      return static_cast<int>(r.role);
    case ModelNameRole:
      return r.model;
    case BranchIndexRole:
      return r.branchIndex;
    case BranchCountRole:
      return r.branchCount;
    case StreamingRole:
      return r.streaming;
    case MetricsTextRole:
      return r.metrics ? formatMetrics(*r.metrics) : QString();
    case ErrorRole:
      return r.error;
    default:
      return {};
  }
}

QHash<int, QByteArray> ChatModel::roleNames() const {
  return {{IdRole, "messageId"},
          {RoleRole, "role"},
          {TextRole, "text"},
          {ModelNameRole, "modelName"},
          {BranchIndexRole, "branchIndex"},
          {BranchCountRole, "branchCount"},
          {StreamingRole, "streaming"},
          {MetricsTextRole, "metricsText"},
          {ErrorRole, "error"}};
}

void ChatModel::setThread(qint64 conversationId, std::vector<ChatMessageRow> rows) {
  beginResetModel();
  conversationId_ = conversationId;
  rows_ = std::move(rows);
  endResetModel();
}

void ChatModel::clear() { setThread(0, {}); }

const ChatMessageRow* ChatModel::message(qint64 id) const {
  const int row = rowOf(id);
  return row < 0 ? nullptr : &rows_[static_cast<size_t>(row)];
}

int ChatModel::rowOf(qint64 id) const {
  // Scan from the end: streaming happens in the last row.
  for (int i = static_cast<int>(rows_.size()) - 1; i >= 0; --i) {
    if (rows_[static_cast<size_t>(i)].id == id) return i;
  }
  return -1;
}

void ChatModel::appendText(qint64 id, const QString& text) {
  const int row = rowOf(id);
  if (row < 0 || text.isEmpty()) return;
  rows_[static_cast<size_t>(row)].text += text;
  changed(row, {TextRole, Qt::DisplayRole});
}

void ChatModel::finishMessage(qint64 id, const std::optional<ReplyMetrics>& metrics,
                              const QString& error) {
  const int row = rowOf(id);
  if (row < 0) return;
  ChatMessageRow& r = rows_[static_cast<size_t>(row)];
  r.streaming = false;
  r.metrics = metrics;
  r.error = error;
  changed(row, {StreamingRole, MetricsTextRole, ErrorRole});
}

void ChatModel::changed(int row, const QList<int>& roles) {
  const QModelIndex i = index(row);
  emit dataChanged(i, i, roles);
}

}  // namespace rc::ui
