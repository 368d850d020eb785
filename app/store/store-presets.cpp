// System-prompt presets and app-wide settings.
#include <string>

#include "store/sqlite-util.h"
#include "store/store-rows.h"
#include "store/store.h"

namespace rc::store {
using detail::Stmt;
using detail::Transaction;

namespace {

bool is_unique_violation(const Status& s) {
  return s.message().find("UNIQUE constraint failed") != std::string::npos;
}

Status duplicate_name(std::string_view name) {
  return {StatusCode::invalid_argument,
          "a system-prompt preset named \"" + std::string(name) + "\" already exists"};
}

Preset read_preset(const Stmt& st) {
  return Preset{st.int64(0), st.text(1), st.text(2), st.int64(3)};
}

}  // namespace

Result<Id> Store::create_preset(std::string_view name, std::string_view text) {
  if (name.empty()) return Status(StatusCode::invalid_argument, "a preset needs a name");
  Transaction tx(db_);
  RC_STORE_TRY(tx.begin());
  auto st = Stmt::prepare(db_, "INSERT INTO presets (name, text, created_at) VALUES (?1, ?2, ?3)");
  if (!st.ok()) return st.status();
  st->bind(1, name);
  st->bind(2, text);
  st->bind(3, now_ms());
  Status s = st->run();
  if (!s.ok()) return is_unique_violation(s) ? duplicate_name(name) : s;
  const Id id = sqlite3_last_insert_rowid(db_);
  RC_STORE_TRY(tx.commit());
  return id;
}

Status Store::update_preset(Id id, std::string_view name, std::string_view text) {
  if (name.empty()) return {StatusCode::invalid_argument, "a preset needs a name"};
  Transaction tx(db_);
  RC_STORE_TRY(tx.begin());
  auto st = Stmt::prepare(db_, "UPDATE presets SET name = ?2, text = ?3 WHERE id = ?1");
  if (!st.ok()) return st.status();
  st->bind(1, id);
  st->bind(2, name);
  st->bind(3, text);
  Status s = st->run();
  if (!s.ok()) return is_unique_violation(s) ? duplicate_name(name) : s;
  if (sqlite3_changes(db_) == 0) return detail::not_found("preset", id);
  return tx.commit();
}

Status Store::delete_preset(Id id) {
  Transaction tx(db_);
  RC_STORE_TRY(tx.begin());
  // conversations.preset_id is cleared by ON DELETE SET NULL.
  auto st = Stmt::prepare(db_, "DELETE FROM presets WHERE id = ?1");
  if (!st.ok()) return st.status();
  st->bind(1, id);
  RC_STORE_TRY(st->run());
  if (sqlite3_changes(db_) == 0) return detail::not_found("preset", id);
  return tx.commit();
}

Result<Preset> Store::get_preset(Id id) {
  auto st = Stmt::prepare(db_, "SELECT id, name, text, created_at FROM presets WHERE id = ?1");
  if (!st.ok()) return st.status();
  st->bind(1, id);
  auto row = st->step();
  if (!row.ok()) return row.status();
  if (!row.value()) return detail::not_found("preset", id);
  return read_preset(st.value());
}

Result<std::vector<Preset>> Store::list_presets() {
  auto st = Stmt::prepare(db_, "SELECT id, name, text, created_at FROM presets ORDER BY name, id");
  if (!st.ok()) return st.status();
  std::vector<Preset> out;
  for (;;) {
    auto row = st->step();
    if (!row.ok()) return row.status();
    if (!row.value()) break;
    out.push_back(read_preset(st.value()));
  }
  return out;
}

Result<std::optional<std::string>> Store::get_setting(std::string_view key) {
  auto st = Stmt::prepare(db_, "SELECT value FROM settings WHERE key = ?1");
  if (!st.ok()) return st.status();
  st->bind(1, key);
  auto row = st->step();
  if (!row.ok()) return row.status();
  if (!row.value()) return std::optional<std::string>();
  return std::optional<std::string>(st->text(0));
}

Status Store::set_setting(std::string_view key, std::string_view value) {
  Transaction tx(db_);
  RC_STORE_TRY(tx.begin());
  auto st = Stmt::prepare(db_,
                          "INSERT INTO settings (key, value) VALUES (?1, ?2)"
                          " ON CONFLICT(key) DO UPDATE SET value = excluded.value");
  if (!st.ok()) return st.status();
  st->bind(1, key);
  st->bind(2, value);
  RC_STORE_TRY(st->run());
  return tx.commit();
}

Status Store::erase_setting(std::string_view key) {
  Transaction tx(db_);
  RC_STORE_TRY(tx.begin());
  auto st = Stmt::prepare(db_, "DELETE FROM settings WHERE key = ?1");
  if (!st.ok()) return st.status();
  st->bind(1, key);
  RC_STORE_TRY(st->run());
  return tx.commit();
}

}  // namespace rc::store
