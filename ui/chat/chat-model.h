// ChatModel: the thread on screen (root .. current leaf), one row per
// message. Touched on the GUI thread only (docs/architecture.md section 16:
// the model is never touched by the worker); the controller fills it from store results and
// streams tokens into the last row.
#pragma once

#include <QAbstractListModel>
#include <vector>

#include "chat/chat-types.h"

namespace rc::ui {

class ChatModel : public QAbstractListModel {
  Q_OBJECT
 public:
  enum Roles {
    IdRole = Qt::UserRole + 1,
    RoleRole,  // ChatRole as int
    TextRole,  // Markdown source
    ModelNameRole,
    BranchIndexRole,  // 0-based
    BranchCountRole,
    StreamingRole,
    MetricsTextRole,  // formatMetrics(), empty without metrics
    ErrorRole,
  };

  explicit ChatModel(QObject* parent = nullptr);

  int rowCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QHash<int, QByteArray> roleNames() const override;

  // Replaces the whole thread (model reset).
  void setThread(qint64 conversationId, std::vector<ChatMessageRow> rows);
  void clear();
  qint64 conversationId() const { return conversationId_; }
  const std::vector<ChatMessageRow>& rows() const { return rows_; }
  const ChatMessageRow* message(qint64 id) const;
  int rowOf(qint64 id) const;  // -1 when not shown

  // Streaming: appends text to the row with `id` (no-op when not shown).
  void appendText(qint64 id, const QString& text);
  // Ends streaming of `id` with its final metrics and an error, if any.
  void finishMessage(qint64 id, const std::optional<ReplyMetrics>& metrics, const QString& error);

 private:
  void changed(int row, const QList<int>& roles);

  qint64 conversationId_ = 0;
  std::vector<ChatMessageRow> rows_;
};

}  // namespace rc::ui
