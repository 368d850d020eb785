// ConversationListModel: the sidebar's list (most recent first), as the
// controller last read it from the store. GUI thread only.
#pragma once

#include <QAbstractListModel>
#include <vector>

#include "chat/chat-types.h"

namespace rc::ui {

class ConversationListModel : public QAbstractListModel {
  Q_OBJECT
 public:
  enum Roles { IdRole = Qt::UserRole + 1, UpdatedRole };

  explicit ConversationListModel(QObject* parent = nullptr);

  int rowCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;

  void setConversations(std::vector<ConversationRow> rows);
  const std::vector<ConversationRow>& conversations() const { return rows_; }
  int rowOf(qint64 id) const;  // -1 when not listed

 private:
  std::vector<ConversationRow> rows_;
};

}  // namespace rc::ui
