// Store: the documents each conversation answers from (docs/architecture.md
// section 21). The texts live in the document library; a conversation keeps
// only their names.
#include <string>

#include "store/sqlite-util.h"
#include "store/store-rows.h"
#include "store/store.h"

namespace rc::store {

using detail::Stmt;
using detail::Transaction;

Status Store::attach_document(Id conversation_id, std::string_view name) {
  Transaction tx(db_);
  RC_STORE_TRY(tx.begin());
  auto exists = Stmt::prepare(db_, "SELECT 1 FROM conversations WHERE id = ?1");
  if (!exists.ok()) return exists.status();
  exists->bind(1, conversation_id);
  auto row = exists->step();
  if (!row.ok()) return row.status();
  if (!row.value()) return detail::not_found("conversation", conversation_id);
  auto st = Stmt::prepare(db_,
                          "INSERT OR IGNORE INTO conversation_documents"
                          " (conversation_id, document, attached_at) VALUES (?1, ?2, ?3)");
  if (!st.ok()) return st.status();
  st->bind(1, conversation_id);
  st->bind(2, name);
  st->bind(3, now_ms());
  RC_STORE_TRY(st->run());
  return tx.commit();
}

Status Store::detach_document(Id conversation_id, std::string_view name) {
  Transaction tx(db_);
  RC_STORE_TRY(tx.begin());
  auto st = Stmt::prepare(
      db_, "DELETE FROM conversation_documents WHERE conversation_id = ?1 AND document = ?2");
  if (!st.ok()) return st.status();
  st->bind(1, conversation_id);
  st->bind(2, name);
  RC_STORE_TRY(st->run());
  if (sqlite3_changes(db_) == 0) {
    return {StatusCode::not_found, "document '" + std::string(name) +
                                       "' is not attached to conversation " +
                                       std::to_string(conversation_id)};
  }
  return tx.commit();
}

Result<std::vector<std::string>> Store::conversation_documents(Id conversation_id) {
  auto st = Stmt::prepare(db_,
                          "SELECT document FROM conversation_documents WHERE conversation_id = ?1"
                          " ORDER BY attached_at, document");
  if (!st.ok()) return st.status();
  st->bind(1, conversation_id);
  std::vector<std::string> out;
  for (;;) {
    auto row = st->step();
    if (!row.ok()) return row.status();
    if (!row.value()) return out;
    out.push_back(st->text(0));
  }
}

Result<std::vector<Conversation>> Store::conversations_with_document(std::string_view name) {
  auto st = Stmt::prepare(db_, std::string("SELECT ") + detail::kConversationCols +
                                   " FROM conversations c JOIN conversation_documents d"
                                   " ON d.conversation_id = c.id WHERE d.document = ?1"
                                   " ORDER BY c.updated_at DESC, c.id DESC");
  if (!st.ok()) return st.status();
  st->bind(1, name);
  std::vector<Conversation> out;
  for (;;) {
    auto row = st->step();
    if (!row.ok()) return row.status();
    if (!row.value()) return out;
    out.push_back(detail::read_conversation(st.value()));
  }
}

Status Store::forget_document(std::string_view name) {
  Transaction tx(db_);
  RC_STORE_TRY(tx.begin());
  auto st = Stmt::prepare(db_, "DELETE FROM conversation_documents WHERE document = ?1");
  if (!st.ok()) return st.status();
  st->bind(1, name);
  RC_STORE_TRY(st->run());
  return tx.commit();
}

}  // namespace rc::store
