// Library::open, add, list, get and remove. Retrieval: library-search.cpp.
#include "library/library.h"

#include <chrono>
#include <cstdio>
#include <system_error>

#include <sqlite3.h>
#include <unistd.h>
#include <xxhash.h>

#include "library/chunker.h"
#include "library/extract.h"
#include "radixchat/private-files.h"
#include "store/schema.h"
#include "store/sqlite-util.h"
#include "store/store.h"

namespace rc::library {
namespace fs = std::filesystem;
using store::detail::Stmt;
using store::detail::Transaction;

namespace {

// Append-only, as the history's migrations (app/store/schema.cpp).
// chunks_fts is an external-content FTS5 index over chunks.text, kept in
// step by the triggers; porter stemming so "caches" finds "cache".
constexpr std::string_view kMigrations[] = {
    R"sql(
CREATE TABLE documents (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  name TEXT NOT NULL UNIQUE,
  source_path TEXT NOT NULL,
  format TEXT NOT NULL,
  content_hash TEXT NOT NULL UNIQUE,
  text TEXT NOT NULL,
  token_count INTEGER NOT NULL,
  added_at INTEGER NOT NULL,
  position INTEGER NOT NULL UNIQUE
);
CREATE TABLE chunks (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  document_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
  position INTEGER NOT NULL,
  token_count INTEGER NOT NULL,
  text TEXT NOT NULL,
  UNIQUE (document_id, position)
);
CREATE VIRTUAL TABLE chunks_fts USING fts5(
  text, content='chunks', content_rowid='id', tokenize='porter unicode61 remove_diacritics 2');
CREATE TRIGGER chunks_ai AFTER INSERT ON chunks BEGIN
  INSERT INTO chunks_fts(rowid, text) VALUES (new.id, new.text);
END;
CREATE TRIGGER chunks_ad AFTER DELETE ON chunks BEGIN
  INSERT INTO chunks_fts(chunks_fts, rowid, text) VALUES ('delete', old.id, old.text);
END;
)sql",
    // v2: documents kept warm (DocumentInfo::pinned).
    R"sql(
ALTER TABLE documents ADD COLUMN pinned INTEGER NOT NULL DEFAULT 0;
)sql",
};
static_assert(std::size(kMigrations) == Library::kSchemaVersion, "one migration per version");

std::string content_hash(std::string_view text) {
  const XXH128_hash_t h = XXH3_128bits(text.data(), text.size());
  char hex[33];
  std::snprintf(hex, sizeof hex, "%016llx%016llx", static_cast<unsigned long long>(h.high64),
                static_cast<unsigned long long>(h.low64));
  return hex;
}

std::int64_t now_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

constexpr const char* kInfoColumns =
    "d.id, d.name, d.source_path, d.format, d.content_hash, d.token_count, "
    "(SELECT count(*) FROM chunks c WHERE c.document_id = d.id), d.added_at, d.position, d.pinned";

DocumentInfo read_info(const Stmt& st) {
  DocumentInfo d;
  d.id = st.int64(0);
  d.name = st.text(1);
  d.source_path = st.text(2);
  d.format = st.text(3);
  d.content_hash = st.text(4);
  d.token_count = st.int32(5);
  d.chunk_count = st.int32(6);
  d.added_at_ms = st.int64(7);
  d.position = st.int64(8);
  d.pinned = st.int64(9) != 0;
  return d;
}

Status not_in_library(std::string_view name) {
  return {StatusCode::not_found,
          "no document named '" + std::string(name) + "' in the library (see docs list)"};
}

}  // namespace

std::string_view Library::migration_sql(int version) {
  return version >= 1 && version <= kSchemaVersion ? kMigrations[version - 1] : std::string_view();
}

Library::Library(sqlite3* db, fs::path path) : db_(db), path_(std::move(path)) {}

Library::~Library() { sqlite3_close_v2(db_); }

Result<std::unique_ptr<Library>> Library::open(const fs::path& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    // Created 0600 before SQLite sees it, as the history is (store.cpp).
    auto fd = open_private_file(path, CreateMode::exclusive);
    if (!fd.ok() && fd.status().code() != StatusCode::invalid_argument) {
      return Status(fd.status().code(),
                    "cannot create the library " + path.string() + ": " + fd.status().message());
    }
    if (fd.ok()) ::close(*fd);
  } else if (!fs::is_regular_file(path, ec)) {
    return Status(StatusCode::invalid_argument, path.string() + " is not a regular file");
  }
  sqlite3* raw = nullptr;
  const int orc =
      sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READWRITE | SQLITE_OPEN_EXRESCODE, nullptr);
  std::unique_ptr<Library> lib(new Library(raw, path));
  if (orc != SQLITE_OK) {
    return store::detail::sqlite_status(raw, orc, "cannot open the library " + path.string());
  }
  sqlite3_db_config(raw, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, nullptr);
  sqlite3_db_config(raw, SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr);
  sqlite3_busy_timeout(raw, 5000);
  RC_STORE_TRY(store::detail::validate(raw, path, kSchemaVersion));
  if (sqlite3_db_readonly(raw, "main") == 1) {
    return Status(StatusCode::invalid_argument, "the library " + path.string() + " is read-only");
  }
  sqlite3_db_config(raw, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 0, nullptr);
  RC_STORE_TRY(store::detail::exec(
      raw, "PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON"));
  RC_STORE_TRY(store::detail::migrate(raw, kMigrations));
  return lib;
}

Result<Added> Library::add_file(const fs::path& file, const TokenCounter& count) {
  auto added = add_files({file}, count);
  if (!added.ok()) return added.status();
  return std::move(added->front());
}

Result<std::vector<Added>> Library::add_files(const std::vector<fs::path>& files,
                                              const TokenCounter& count) {
  std::vector<Extracted> texts;
  for (const fs::path& file : files) {
    auto extracted = extract_file(file);
    if (!extracted.ok()) return extracted.status();
    texts.push_back(std::move(extracted.value()));
  }
  Transaction tx(db_);
  RC_STORE_TRY(tx.begin());
  std::vector<Added> out;
  for (size_t i = 0; i < files.size(); ++i) {
    std::error_code ec;
    const fs::path absolute = fs::absolute(files[i], ec);
    auto added = insert(files[i].filename().string(), texts[i].text, texts[i].format,
                        (ec ? files[i] : absolute).string(), count);
    if (!added.ok()) {
      return Status(added.status().code(), files[i].string() + ": " + added.status().message());
    }
    out.push_back(std::move(added.value()));
  }
  RC_STORE_TRY(tx.commit());
  return out;
}

Result<Added> Library::add_text(std::string name, std::string text, std::string format,
                                std::string source_path, const TokenCounter& count) {
  Transaction tx(db_);
  RC_STORE_TRY(tx.begin());
  auto added = insert(name, text, format, source_path, count);
  if (!added.ok()) return added.status();
  RC_STORE_TRY(tx.commit());
  return added;
}

Result<Added> Library::insert(const std::string& name, const std::string& text,
                              const std::string& format, const std::string& source_path,
                              const TokenCounter& count) {
  const std::string hash = content_hash(text);
  {
    auto st = Stmt::prepare(
        db_, std::string("SELECT ") + kInfoColumns + " FROM documents d WHERE d.content_hash = ?1");
    if (!st.ok()) return st.status();
    st->bind(1, hash);
    auto row = st->step();
    if (!row.ok()) return row.status();
    if (row.value()) return Added{read_info(st.value()), true};
  }
  if (id_of(name).ok()) {
    return Status(StatusCode::invalid_argument,
                  "a different document named '" + name +
                      "' is already in the library; remove it first (docs rm)");
  }
  const std::vector<ChunkSpan> spans = split_chunks(text, count);
  auto ins = Stmt::prepare(db_,
                           "INSERT INTO documents (name, source_path, format, content_hash, text, "
                           "token_count, added_at, position) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, "
                           "(SELECT coalesce(max(position), 0) + 1 FROM documents))");
  if (!ins.ok()) return ins.status();
  ins->bind(1, name);
  ins->bind(2, source_path);
  ins->bind(3, format);
  ins->bind(4, hash);
  ins->bind(5, text);
  ins->bind(6, count(text));
  ins->bind(7, now_ms());
  RC_STORE_TRY(ins->run());
  const std::int64_t id = sqlite3_last_insert_rowid(db_);
  auto chunk = Stmt::prepare(db_,
                             "INSERT INTO chunks (document_id, position, token_count, text) "
                             "VALUES (?1, ?2, ?3, ?4)");
  if (!chunk.ok()) return chunk.status();
  for (size_t i = 0; i < spans.size(); ++i) {
    chunk->reset();
    chunk->bind(1, id);
    chunk->bind(2, static_cast<std::int64_t>(i));
    chunk->bind(3, spans[i].tokens);
    chunk->bind(4, std::string_view(text).substr(spans[i].begin, spans[i].end - spans[i].begin));
    RC_STORE_TRY(chunk->run());
  }
  auto info = get(name);
  if (!info.ok()) return info.status();
  return Added{std::move(info->info), false};
}

Result<std::vector<DocumentInfo>> Library::list() const {
  auto st = Stmt::prepare(
      db_, std::string("SELECT ") + kInfoColumns + " FROM documents d ORDER BY d.position");
  if (!st.ok()) return st.status();
  std::vector<DocumentInfo> out;
  for (;;) {
    auto row = st->step();
    if (!row.ok()) return row.status();
    if (!row.value()) break;
    out.push_back(read_info(st.value()));
  }
  return out;
}

Result<std::int64_t> Library::id_of(std::string_view name) const {
  auto st = Stmt::prepare(db_, "SELECT id FROM documents WHERE name = ?1");
  if (!st.ok()) return st.status();
  st->bind(1, name);
  auto row = st->step();
  if (!row.ok()) return row.status();
  if (!row.value()) return not_in_library(name);
  return st->int64(0);
}

Result<Document> Library::get(std::string_view name) const {
  auto st = Stmt::prepare(
      db_, std::string("SELECT ") + kInfoColumns + ", d.text FROM documents d WHERE d.name = ?1");
  if (!st.ok()) return st.status();
  st->bind(1, name);
  auto row = st->step();
  if (!row.ok()) return row.status();
  if (!row.value()) return not_in_library(name);
  return Document{read_info(st.value()), st->text(10)};
}

Status Library::set_pinned(std::string_view name, bool pinned) {
  auto id = id_of(name);
  if (!id.ok()) return id.status();
  auto st = Stmt::prepare(db_, "UPDATE documents SET pinned = ?1 WHERE id = ?2");
  if (!st.ok()) return st.status();
  st->bind(1, std::int64_t(pinned ? 1 : 0));
  st->bind(2, id.value());
  return st->run();
}

Status Library::remove(std::string_view name,
                       const std::function<Status(const DocumentInfo&)>& before_remove) {
  Transaction tx(db_);
  RC_STORE_TRY(tx.begin());
  auto doc = get(name);
  if (!doc.ok()) return doc.status();
  if (before_remove) RC_STORE_TRY(before_remove(doc->info));
  // Chunks first, explicitly: their delete trigger keeps the FTS index in
  // step (the cascade alone would too, but only with foreign keys on).
  auto chunks = Stmt::prepare(db_, "DELETE FROM chunks WHERE document_id = ?1");
  if (!chunks.ok()) return chunks.status();
  chunks->bind(1, doc->info.id);
  RC_STORE_TRY(chunks->run());
  auto st = Stmt::prepare(db_, "DELETE FROM documents WHERE id = ?1");
  if (!st.ok()) return st.status();
  st->bind(1, doc->info.id);
  RC_STORE_TRY(st->run());
  return tx.commit();
}

Result<fs::path> default_library_path() {
  auto history = store::default_database_path();
  if (!history.ok()) return history.status();
  return history->parent_path() / "library.db";
}

}  // namespace rc::library
