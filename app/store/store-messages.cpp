// Messages and branches: append, update, paths, siblings, current leaf.
#include <string>

#include "store/sqlite-util.h"
#include "store/store-rows.h"
#include "store/store.h"

namespace rc::store {
using detail::Stmt;
using detail::Transaction;

namespace {

Result<std::vector<Message>> collect_messages(Stmt& st) {
  std::vector<Message> out;
  for (;;) {
    auto row = st.step();
    if (!row.ok()) return row.status();
    if (!row.value()) break;
    auto m = detail::read_message(st);
    if (!m.ok()) return m.status();
    out.push_back(std::move(m.value()));
  }
  return out;
}

// conversation_id of a message, or not_found.
Result<Id> conversation_of(sqlite3* db, Id message_id) {
  auto st = Stmt::prepare(db, "SELECT conversation_id FROM messages WHERE id = ?1");
  if (!st.ok()) return st.status();
  st->bind(1, message_id);
  auto row = st->step();
  if (!row.ok()) return row.status();
  if (!row.value()) return detail::not_found("message", message_id);
  return st->int64(0);
}

Status conversation_exists(sqlite3* db, Id id) {
  auto st = Stmt::prepare(db, "SELECT 1 FROM conversations WHERE id = ?1");
  if (!st.ok()) return st.status();
  st->bind(1, id);
  auto row = st->step();
  if (!row.ok()) return row.status();
  if (!row.value()) return detail::not_found("conversation", id);
  return {};
}

void bind_metrics(Stmt& st, int first, const std::optional<MessageMetrics>& m) {
  if (m) {
    st.bind(first, m->prompt_tokens);
    st.bind(first + 1, m->cached_tokens);
    st.bind(first + 2, m->completion_tokens);
    st.bind(first + 3, m->ttft_ms);
    st.bind(first + 4, m->tokens_per_s);
    st.bind(first + 5, std::string_view(m->finish_reason));
  } else {
    for (int i = 0; i < 6; ++i) st.bind_null(first + i);
  }
}

}  // namespace

Result<Id> Store::append_message(const NewMessage& m) {
  Transaction tx(db_);
  RC_STORE_TRY(tx.begin());
  // Checked inside the transaction so that the parent cannot vanish between
  // the check and the insert.
  RC_STORE_TRY(conversation_exists(db_, m.conversation_id));
  if (m.parent_id) {
    auto owner = conversation_of(db_, *m.parent_id);
    if (!owner.ok()) return owner.status();
    if (owner.value() != m.conversation_id) {
      return Status(StatusCode::invalid_argument, "parent message " + std::to_string(*m.parent_id) +
                                                      " belongs to conversation " +
                                                      std::to_string(owner.value()) + ", not " +
                                                      std::to_string(m.conversation_id));
    }
  }
  const std::int64_t now = now_ms();
  auto st = Stmt::prepare(db_,
                          "INSERT INTO messages (conversation_id, parent_id, role, content, "
                          "created_at, model, prompt_tokens, cached_tokens, completion_tokens, "
                          "ttft_ms, tokens_per_s, finish_reason) "
                          "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)");
  if (!st.ok()) return st.status();
  st->bind(1, m.conversation_id);
  st->bind(2, m.parent_id);
  st->bind(3, std::string_view(role_name(m.role)));
  st->bind(4, std::string_view(m.content));
  st->bind(5, now);
  st->bind(6, std::string_view(m.model));
  bind_metrics(st.value(), 7, m.metrics);
  RC_STORE_TRY(st->run());
  const Id id = sqlite3_last_insert_rowid(db_);

  auto up = Stmt::prepare(
      db_, "UPDATE conversations SET current_leaf_id = ?2, updated_at = ?3 WHERE id = ?1");
  if (!up.ok()) return up.status();
  up->bind(1, m.conversation_id);
  up->bind(2, id);
  up->bind(3, now);
  RC_STORE_TRY(up->run());
  RC_STORE_TRY(tx.commit());
  return id;
}

Status Store::update_message(Id id, std::string_view content,
                             const std::optional<MessageMetrics>& metrics,
                             std::span<const std::int32_t> tokens) {
  for (std::int32_t t : tokens) {
    if (t < 0) {
      return {StatusCode::invalid_argument,
              "message " + std::to_string(id) + ": token id " + std::to_string(t) + " is negative"};
    }
  }
  Transaction tx(db_);
  RC_STORE_TRY(tx.begin());
  auto q = Stmt::prepare(db_, "SELECT role, conversation_id FROM messages WHERE id = ?1");
  if (!q.ok()) return q.status();
  q->bind(1, id);
  auto row = q->step();
  if (!row.ok()) return row.status();
  if (!row.value()) return detail::not_found("message", id);
  if (q->text(0) != "assistant") {
    return {StatusCode::invalid_argument,
            "message " + std::to_string(id) + " is a " + q->text(0) +
                " message; only assistant replies are updated (edits make a new branch)"};
  }
  const Id conversation = q->int64(1);
  auto st = Stmt::prepare(db_,
                          "UPDATE messages SET content = ?2, prompt_tokens = ?3, "
                          "cached_tokens = ?4, completion_tokens = ?5, ttft_ms = ?6, "
                          "tokens_per_s = ?7, finish_reason = ?8, tokens = ?9 WHERE id = ?1");
  if (!st.ok()) return st.status();
  st->bind(1, id);
  st->bind(2, content);
  bind_metrics(st.value(), 3, metrics);
  if (tokens.empty()) {
    st->bind_null(9);
  } else {
    const std::string blob = detail::encode_tokens(tokens);
    st->bind_blob(9, blob.data(), blob.size());
  }
  RC_STORE_TRY(st->run());
  auto up = Stmt::prepare(db_, "UPDATE conversations SET updated_at = ?2 WHERE id = ?1");
  if (!up.ok()) return up.status();
  up->bind(1, conversation);
  up->bind(2, now_ms());
  RC_STORE_TRY(up->run());
  return tx.commit();
}

Result<Message> Store::get_message(Id id) {
  auto st = Stmt::prepare(
      db_, std::string("SELECT ") + detail::kMessageCols + " FROM messages m WHERE m.id = ?1");
  if (!st.ok()) return st.status();
  st->bind(1, id);
  auto row = st->step();
  if (!row.ok()) return row.status();
  if (!row.value()) return detail::not_found("message", id);
  return detail::read_message(st.value());
}

Result<std::vector<Message>> Store::path_to(Id id) {
  // Walk parent links upwards, then read root first. Parents always predate
  // their children (set once, at insert), so the walk cannot cycle.
  auto st = Stmt::prepare(
      db_, std::string("WITH RECURSIVE up(id, depth) AS ("
                       " SELECT id, 0 FROM messages WHERE id = ?1"
                       " UNION ALL"
                       " SELECT p.parent_id, up.depth + 1 FROM messages p JOIN up ON p.id = up.id"
                       " WHERE p.parent_id IS NOT NULL) SELECT ") +
               detail::kMessageCols +
               " FROM up JOIN messages m ON m.id = up.id"
               " ORDER BY up.depth DESC");
  if (!st.ok()) return st.status();
  st->bind(1, id);
  auto out = collect_messages(st.value());
  if (out.ok() && out->empty()) return detail::not_found("message", id);
  return out;
}

Result<std::vector<Message>> Store::children(Id conversation_id, std::optional<Id> parent) {
  RC_STORE_TRY(conversation_exists(db_, conversation_id));
  std::string sql = std::string("SELECT ") + detail::kMessageCols + " FROM messages m WHERE ";
  sql += parent ? "m.parent_id = ?2 AND m.conversation_id = ?1"
                : "m.conversation_id = ?1 AND m.parent_id IS NULL";
  sql += " ORDER BY m.created_at, m.id";
  auto st = Stmt::prepare(db_, sql);
  if (!st.ok()) return st.status();
  st->bind(1, conversation_id);
  if (parent) st->bind(2, *parent);
  return collect_messages(st.value());
}

Result<Id> Store::newest_leaf(Id id) {
  auto st = Stmt::prepare(db_,
                          "WITH RECURSIVE sub(id) AS ("
                          " SELECT id FROM messages WHERE id = ?1"
                          " UNION ALL"
                          " SELECT c.id FROM messages c JOIN sub ON c.parent_id = sub.id)"
                          " SELECT m.id FROM sub JOIN messages m ON m.id = sub.id"
                          " WHERE NOT EXISTS (SELECT 1 FROM messages k WHERE k.parent_id = m.id)"
                          " ORDER BY m.created_at DESC, m.id DESC LIMIT 1");
  if (!st.ok()) return st.status();
  st->bind(1, id);
  auto row = st->step();
  if (!row.ok()) return row.status();
  if (!row.value()) return detail::not_found("message", id);
  return st->int64(0);
}

Result<std::optional<Id>> Store::current_leaf(Id conversation_id) {
  auto st = Stmt::prepare(db_, "SELECT current_leaf_id FROM conversations WHERE id = ?1");
  if (!st.ok()) return st.status();
  st->bind(1, conversation_id);
  auto row = st->step();
  if (!row.ok()) return row.status();
  if (!row.value()) return detail::not_found("conversation", conversation_id);
  return st->opt_int64(0);
}

Status Store::set_current_leaf(Id conversation_id, std::optional<Id> leaf) {
  Transaction tx(db_);
  RC_STORE_TRY(tx.begin());
  RC_STORE_TRY(conversation_exists(db_, conversation_id));
  if (leaf) {
    auto owner = conversation_of(db_, *leaf);
    if (!owner.ok()) return owner.status();
    if (owner.value() != conversation_id) {
      return {StatusCode::invalid_argument,
              "message " + std::to_string(*leaf) + " belongs to conversation " +
                  std::to_string(owner.value()) + ", not " + std::to_string(conversation_id)};
    }
  }
  auto st = Stmt::prepare(db_, "UPDATE conversations SET current_leaf_id = ?2 WHERE id = ?1");
  if (!st.ok()) return st.status();
  st->bind(1, conversation_id);
  st->bind(2, leaf);
  RC_STORE_TRY(st->run());
  return tx.commit();
}

Result<std::vector<Message>> Store::current_thread(Id conversation_id) {
  auto leaf = current_leaf(conversation_id);
  if (!leaf.ok()) return leaf.status();
  if (!leaf.value()) return std::vector<Message>{};
  return path_to(*leaf.value());
}

}  // namespace rc::store
