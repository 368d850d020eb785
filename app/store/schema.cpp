#include "store/schema.h"

#include <string>

#include "store/sqlite-util.h"
#include "store/store.h"

namespace rc::store::detail {
namespace {

// Migrations are append-only: once a version ships, its SQL never changes
// (databases in the field were built from it). Add a new entry instead.
constexpr std::string_view kMigrations[] = {
    // v1: initial schema. Timestamps are Unix ms (UTC). AUTOINCREMENT so ids
    // of deleted rows are never reused: the UI may still hold one.
    R"sql(
CREATE TABLE presets (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  name TEXT NOT NULL UNIQUE,
  text TEXT NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE TABLE conversations (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  title TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  system_prompt TEXT NOT NULL DEFAULT '',
  preset_id INTEGER REFERENCES presets(id) ON DELETE SET NULL,
  current_leaf_id INTEGER REFERENCES messages(id) ON DELETE SET NULL,
  sampling TEXT NOT NULL DEFAULT '{}'
);
CREATE TABLE messages (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  conversation_id INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
  parent_id INTEGER REFERENCES messages(id) ON DELETE CASCADE,
  role TEXT NOT NULL CHECK (role IN ('system', 'user', 'assistant')),
  content TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  model TEXT NOT NULL DEFAULT '',
  prompt_tokens INTEGER,
  cached_tokens INTEGER,
  completion_tokens INTEGER,
  ttft_ms REAL,
  tokens_per_s REAL
);
CREATE TABLE settings (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL
) WITHOUT ROWID;
CREATE INDEX conversations_by_updated ON conversations(updated_at DESC, id DESC);
CREATE INDEX messages_by_conversation ON messages(conversation_id, parent_id, created_at, id);
)sql",
    // v2: why a reply ended (stop, length, cancelled), and indices on the
    // child side of the parent_id and current_leaf_id foreign keys: without
    // them each cascaded message delete scans both tables.
    R"sql(
ALTER TABLE messages ADD COLUMN finish_reason TEXT;
CREATE INDEX messages_by_parent ON messages(parent_id, created_at, id);
CREATE INDEX conversations_by_leaf ON conversations(current_leaf_id);
)sql",
    // v3: the token ids an assistant reply was generated as (docs/architecture.md section 10), so
    // a reopened conversation's next prompt holds exactly the ids the cache
    // held instead of the re-encoded text. Little-endian int32 each; NULL:
    // not known (older rows, remote replies).
    R"sql(
ALTER TABLE messages ADD COLUMN tokens BLOB;
)sql",
    // v4: the documents each conversation answers from (docs/architecture.md
    // section 21), by their name in the document library (library.db beside
    // this file), in the order they were attached.
    R"sql(
CREATE TABLE conversation_documents (
  conversation_id INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
  document TEXT NOT NULL,
  attached_at INTEGER NOT NULL,
  PRIMARY KEY (conversation_id, document)
) WITHOUT ROWID;
CREATE INDEX conversation_documents_by_document ON conversation_documents(document);
)sql",
    // v5: a full-text index over message text for the sidebar's search
    // (docs/architecture.md section 16). Trigram tokens: any substring of
    // three or more characters matches, case-insensitively, as LIKE did.
    // External content (the text stays in messages once), kept in step by
    // triggers; 'rebuild' indexes the messages already there.
    R"sql(
CREATE VIRTUAL TABLE messages_fts USING fts5(
  content, content = 'messages', content_rowid = 'id', tokenize = 'trigram');
CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
  INSERT INTO messages_fts(rowid, content) VALUES (new.id, new.content);
END;
CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN
  INSERT INTO messages_fts(messages_fts, rowid, content) VALUES ('delete', old.id, old.content);
END;
CREATE TRIGGER messages_fts_update AFTER UPDATE OF content ON messages BEGIN
  INSERT INTO messages_fts(messages_fts, rowid, content) VALUES ('delete', old.id, old.content);
  INSERT INTO messages_fts(rowid, content) VALUES (new.id, new.content);
END;
INSERT INTO messages_fts(messages_fts) VALUES ('rebuild');
)sql",
};
static_assert(std::size(kMigrations) == Store::kSchemaVersion, "one migration per schema version");

Result<std::int64_t> query_int(sqlite3* db, const char* sql) {
  auto st = Stmt::prepare(db, sql);
  if (!st.ok()) return st.status();
  auto row = st->step();
  if (!row.ok()) return row.status();
  if (!row.value()) return Status(StatusCode::internal, std::string("no row from ") + sql);
  return st->int64(0);
}

}  // namespace

std::string_view migration_sql(int version) {
  if (version < 1 || version > Store::kSchemaVersion) return {};
  return kMigrations[version - 1];
}

Status validate(sqlite3* db, const std::filesystem::path& path) {
  return validate(db, path, Store::kSchemaVersion);
}

Status migrate(sqlite3* db) { return migrate(db, kMigrations); }

Status validate(sqlite3* db, const std::filesystem::path& path, int latest) {
  const std::string where = path.string();
  // The first read parses the header and schema: a non-database fails here.
  auto version = query_int(db, "PRAGMA user_version");
  if (!version.ok()) {
    return {StatusCode::corrupt_data, "cannot read the database " + where + " (" +
                                          version.status().message() + "); it was left untouched"};
  }
  if (version.value() > latest) {
    return {StatusCode::unsupported,
            where + ": database schema v" + std::to_string(version.value()) +
                " is newer than this RadixChat (v" + std::to_string(latest) +
                "); refusing to open so nothing is overwritten"};
  }
  if (version.value() < 0) {
    return {StatusCode::corrupt_data, where + " has a negative schema version; left untouched"};
  }
  auto objects = query_int(db, "SELECT count(*) FROM sqlite_schema");
  if (!objects.ok()) {
    return {StatusCode::corrupt_data, "cannot read the schema of " + where + " (" +
                                          objects.status().message() + "); left untouched"};
  }
  if (version.value() == 0 && objects.value() > 0) {
    return {StatusCode::corrupt_data,
            where +
                " is a SQLite database of another application (no RadixChat schema "
                "version); refusing to open so nothing is overwritten"};
  }
  if (objects.value() == 0) return {};  // empty: nothing to check

  // quick_check: O(N) but skips the index-content cross checks of
  // integrity_check; a chat history is small enough to check on every start.
  auto st = Stmt::prepare(db, "PRAGMA quick_check(1)");
  Status failed;
  if (st.ok()) {
    auto row = st->step();
    if (!row.ok()) {
      failed = row.status();
    } else if (!row.value() || st->text(0) != "ok") {
      failed = Status(StatusCode::corrupt_data, row.value() ? st->text(0) : "no result");
    }
  } else {
    failed = st.status();
  }
  if (!failed.ok()) {
    return {StatusCode::corrupt_data, "the database " + where + " is damaged (quick_check: " +
                                          failed.message() + "); it was left untouched"};
  }
  return {};
}

Status migrate(sqlite3* db, std::span<const std::string_view> migrations) {
  for (int v = 1; v <= static_cast<int>(migrations.size()); ++v) {
    Transaction tx(db);
    RC_STORE_TRY(tx.begin());
    // Re-read inside the write lock: another instance may have migrated
    // between validate() and now.
    auto current = query_int(db, "PRAGMA user_version");
    if (!current.ok()) return current.status();
    if (current.value() >= v) continue;
    const std::string sql(migrations[v - 1]);
    Status s = exec(db, sql.c_str());
    if (!s.ok()) {
      return {s.code(), "migration to schema v" + std::to_string(v) + " failed: " + s.message()};
    }
    RC_STORE_TRY(exec(db, ("PRAGMA user_version = " + std::to_string(v)).c_str()));
    RC_STORE_TRY(tx.commit());
  }
  return {};
}

}  // namespace rc::store::detail
