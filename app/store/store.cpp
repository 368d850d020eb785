// Store::open and conversations. Messages: store-messages.cpp; presets and
// settings: store-presets.cpp; export: store-export.cpp.
#include "store/store.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <string>
#include <system_error>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "radixchat/private-files.h"
#include "store/schema.h"
#include "store/sqlite-util.h"
#include "store/store-rows.h"

namespace rc::store {
namespace fs = std::filesystem;
using detail::Stmt;
using detail::Transaction;

const char* role_name(Role role) {
  switch (role) {
    case Role::system:
      return "system";
    case Role::user:
      return "user";
    case Role::assistant:
      return "assistant";
  }
  return "user";
}

namespace detail {

std::optional<Role> parse_role(std::string_view name) {
  if (name == "system") return Role::system;
  if (name == "user") return Role::user;
  if (name == "assistant") return Role::assistant;
  return std::nullopt;
}

Status not_found(std::string_view what, Id id) {
  return {StatusCode::not_found, std::string(what) + " " + std::to_string(id) + " does not exist"};
}

std::string sampling_to_json(const SamplingSettings& s) {
  nlohmann::json j = {{"temperature", s.temperature},
                      {"top_p", s.top_p},
                      {"top_k", s.top_k},
                      {"min_p", s.min_p},
                      {"repetition_penalty", s.repetition_penalty},
                      {"max_tokens", s.max_tokens},
                      {"context_length", s.context_length},
                      {"context_overflow", s.context_overflow}};
  return j.dump();
}

namespace {
template <typename T>
void read_field(const nlohmann::json& j, const char* key, T& out) {
  auto it = j.find(key);
  if (it != j.end() && it->is_number()) out = it->get<T>();
}
}  // namespace

SamplingSettings sampling_from_json(std::string_view text) {
  SamplingSettings s;
  // allow_exceptions=false: malformed text yields a discarded value, not a throw.
  const auto j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_object()) return s;
  read_field(j, "temperature", s.temperature);
  read_field(j, "top_p", s.top_p);
  read_field(j, "top_k", s.top_k);
  read_field(j, "min_p", s.min_p);
  read_field(j, "repetition_penalty", s.repetition_penalty);
  read_field(j, "max_tokens", s.max_tokens);
  read_field(j, "context_length", s.context_length);
  // Only a known policy name is taken; anything else keeps the default.
  auto overflow = j.find("context_overflow");
  if (overflow != j.end() && overflow->is_string()) {
    const std::string v = overflow->get<std::string>();
    if (v == "stop" || v == "truncate-middle" || v == "rolling-window") s.context_overflow = v;
  }
  return s;
}

Conversation read_conversation(const Stmt& st) {
  Conversation c;
  c.id = st.int64(0);
  c.title = st.text(1);
  c.created_at_ms = st.int64(2);
  c.updated_at_ms = st.int64(3);
  c.system_prompt = st.text(4);
  c.preset_id = st.opt_int64(5);
  c.current_leaf_id = st.opt_int64(6);
  c.sampling = sampling_from_json(st.text(7));
  return c;
}

std::string encode_tokens(std::span<const std::int32_t> ids) {
  std::string out(ids.size() * 4, '\0');
  for (size_t i = 0; i < ids.size(); ++i) {
    const auto v = static_cast<std::uint32_t>(ids[i]);
    for (int b = 0; b < 4; ++b) out[i * 4 + b] = static_cast<char>((v >> (8 * b)) & 0xff);
  }
  return out;
}

std::optional<std::vector<std::int32_t>> decode_tokens(const void* data, size_t bytes) {
  if (bytes % 4 != 0) return std::nullopt;
  const auto* p = static_cast<const unsigned char*>(data);
  std::vector<std::int32_t> out(bytes / 4);
  for (size_t i = 0; i < out.size(); ++i) {
    std::uint32_t v = 0;
    for (int b = 0; b < 4; ++b) v |= std::uint32_t(p[i * 4 + b]) << (8 * b);
    if (v > 0x7fffffffu) return std::nullopt;  // ids are never negative
    out[i] = static_cast<std::int32_t>(v);
  }
  return out;
}

Result<Message> read_message(const Stmt& st) {
  Message m;
  m.id = st.int64(0);
  m.conversation_id = st.int64(1);
  m.parent_id = st.opt_int64(2);
  m.role = parse_role(st.text(3)).value_or(Role::user);  // CHECK constraint keeps it valid
  m.content = st.text(4);
  m.created_at_ms = st.int64(5);
  m.model = st.text(6);
  if (!st.is_null(7)) {
    MessageMetrics x;
    x.prompt_tokens = st.int32(7);
    x.cached_tokens = st.int32(8);
    x.completion_tokens = st.int32(9);
    x.ttft_ms = st.real(10);
    x.tokens_per_s = st.real(11);
    x.finish_reason = st.text(12);
    m.metrics = std::move(x);
  }
  if (!st.is_null(13)) {
    // A blob that does not decode is reported, never guessed at: half a
    // reply's ids would put the wrong tokens in the next prompt.
    auto ids = decode_tokens(st.blob(13), st.bytes(13));
    if (!ids) {
      return Status(StatusCode::corrupt_data,
                    "message " + std::to_string(m.id) + " of conversation " +
                        std::to_string(m.conversation_id) + ": its stored token ids are damaged (" +
                        std::to_string(st.bytes(13)) + " bytes)");
    }
    m.tokens = std::move(*ids);
  }
  return m;
}

}  // namespace detail

namespace {

// "SQLite format 3\0": the first 16 bytes of every SQLite database file.
constexpr char kSqliteMagic[16] = {'S', 'Q', 'L', 'i', 't', 'e', ' ', 'f',
                                   'o', 'r', 'm', 'a', 't', ' ', '3', '\0'};

// Checks the file's header before SQLite touches it. SQLite would itself
// report NOTADB, but only after we had asked it to open the file read-write;
// reading the bytes ourselves keeps a foreign file provably untouched.
Status check_header(const fs::path& path, bool& exists) {
  std::error_code ec;
  const auto st = fs::status(path, ec);
  exists = fs::exists(st);
  if (!exists) {
    const fs::path parent = path.has_parent_path() ? path.parent_path() : fs::path(".");
    if (!fs::is_directory(parent, ec)) {
      return {StatusCode::not_found, "folder " + parent.string() + " for the database " +
                                         path.string() + " does not exist"};
    }
    return {};
  }
  if (!fs::is_regular_file(st)) {
    return {StatusCode::invalid_argument, path.string() + " is not a regular file"};
  }
  const auto size = fs::file_size(path, ec);
  if (ec) return {StatusCode::internal, "cannot read " + path.string() + ": " + ec.message()};
  if (size == 0) return {};  // SQLite treats an empty file as a new database
  std::ifstream in(path, std::ios::binary);
  char head[16] = {};
  in.read(head, sizeof head);
  if (!in) {
    if (size < sizeof head) {
      return {StatusCode::corrupt_data, path.string() + " is not a SQLite database (" +
                                            std::to_string(size) +
                                            " bytes); it was left untouched"};
    }
    return {StatusCode::internal, "cannot read " + path.string()};
  }
  if (std::memcmp(head, kSqliteMagic, sizeof head) != 0) {
    return {StatusCode::corrupt_data,
            path.string() + " is not a SQLite database (unknown header); it was left untouched"};
  }
  return {};
}

// Reading a WAL-mode file makes SQLite create "-wal" and "-shm" next to it.
// When we refuse the file, the ones we created (still empty of data) are
// removed so that a refused database's folder looks exactly as we found it.
struct Sidecars {
  bool wal = false;
  bool shm = false;
};

Sidecars sidecars_of(const fs::path& path) {
  std::error_code ec;
  return {fs::exists(path.string() + "-wal", ec), fs::exists(path.string() + "-shm", ec)};
}

void remove_new_sidecars(const fs::path& path, const Sidecars& before) {
  std::error_code ec;
  const fs::path wal = path.string() + "-wal";
  // A non-empty WAL holds someone's data: never delete that.
  if (!before.wal && fs::exists(wal, ec) && fs::file_size(wal, ec) == 0) {
    fs::remove(wal, ec);
  }
  if (!before.shm && !fs::exists(wal, ec)) fs::remove(path.string() + "-shm", ec);
}

}  // namespace

Store::Store(sqlite3* db, fs::path path) : db_(db), path_(std::move(path)) {}

Store::~Store() { sqlite3_close_v2(db_); }

std::int64_t Store::now_ms() {
  using namespace std::chrono;
  const std::int64_t wall =
      duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
  last_ms_ = std::max(wall, last_ms_ + 1);
  return last_ms_;
}

Result<std::unique_ptr<Store>> Store::open(const fs::path& path) {
  bool exists = false;
  RC_STORE_TRY(check_header(path, exists));

  const Sidecars sidecars_before = sidecars_of(path);
  // A new database is created here, 0600, before SQLite sees it (SQLite
  // treats an empty file as a new database and gives its -wal and -shm the
  // database file's mode), so no file of the history is ever readable by
  // other users, whatever the umask.
  if (!exists) {
    auto fd = open_private_file(path, CreateMode::exclusive);
    if (!fd.ok() && fd.status().code() != StatusCode::invalid_argument) return fd.status();
    if (fd.ok()) ::close(*fd);
  }
  sqlite3* raw = nullptr;
  const int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_EXRESCODE;
  const int orc = sqlite3_open_v2(path.c_str(), &raw, flags, nullptr);
  // Owned from here on: the unique_ptr closes the connection on every return.
  std::unique_ptr<Store> store(new Store(raw, path));
  if (orc != SQLITE_OK) {
    Status s = detail::sqlite_status(raw, orc, "cannot open " + path.string());
    return Status(s.code(), s.message());
  }
  sqlite3* db = raw;
  // Until validated, closing must not checkpoint a leftover WAL into the
  // main file: a refused database stays byte-for-byte as it was.
  sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, nullptr);
  sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr);
  sqlite3_busy_timeout(db, 5000);

  Status valid = detail::validate(db, path);
  if (!valid.ok()) {
    store.reset();  // close before cleaning up after it
    remove_new_sidecars(path, sidecars_before);
    return valid;
  }

  // Validated: from here on we may write. SQLite silently falls back to
  // read-only for a write-protected file; say so instead of failing later
  // with "attempt to write a readonly database".
  if (sqlite3_db_readonly(db, "main") == 1) {
    return Status(StatusCode::invalid_argument,
                  "the database " + path.string() + " is read-only; RadixChat needs to write it");
  }
  {
    auto st = Stmt::prepare(db, "PRAGMA journal_mode = WAL");
    if (!st.ok()) return st.status();
    auto row = st->step();
    if (!row.ok()) return row.status();
    if (!row.value() || st->text(0) != "wal") {
      return Status(StatusCode::internal, "cannot enable WAL journaling on " + path.string());
    }
  }
  // FULL: fsync on every commit, so a reply that was reported saved survives
  // a power cut too; chats write a few rows a second at most.
  RC_STORE_TRY(detail::exec(db, "PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON"));
  sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 0, nullptr);

  Status m = detail::migrate(db);
  if (!m.ok()) return Status(m.code(), path.string() + ": " + m.message());
  return store;
}

// ---- conversations ----

Result<Id> Store::create_conversation(const NewConversation& c) {
  Transaction tx(db_);
  RC_STORE_TRY(tx.begin());
  auto st = Stmt::prepare(db_,
                          "INSERT INTO conversations (title, created_at, updated_at, "
                          "system_prompt, preset_id, sampling) VALUES (?1, ?2, ?2, ?3, ?4, ?5)");
  if (!st.ok()) return st.status();
  st->bind(1, std::string_view(c.title));
  st->bind(2, now_ms());
  st->bind(3, std::string_view(c.system_prompt));
  st->bind(4, c.preset_id);
  st->bind(5, std::string_view(detail::sampling_to_json(c.sampling)));
  Status s = st->run();
  if (!s.ok()) {
    // The only foreign key here is preset_id.
    if (c.preset_id && s.message().find("FOREIGN KEY") != std::string::npos) {
      return detail::not_found("preset", *c.preset_id);
    }
    return s;
  }
  const Id id = sqlite3_last_insert_rowid(db_);
  RC_STORE_TRY(tx.commit());
  return id;
}

Result<Conversation> Store::get_conversation(Id id) {
  auto st = Stmt::prepare(db_, std::string("SELECT ") + detail::kConversationCols +
                                   " FROM conversations c WHERE c.id = ?1");
  if (!st.ok()) return st.status();
  st->bind(1, id);
  auto row = st->step();
  if (!row.ok()) return row.status();
  if (!row.value()) return detail::not_found("conversation", id);
  return detail::read_conversation(st.value());
}

namespace {
Result<std::vector<Conversation>> collect_conversations(Stmt& st) {
  std::vector<Conversation> out;
  for (;;) {
    auto row = st.step();
    if (!row.ok()) return row.status();
    if (!row.value()) break;
    out.push_back(detail::read_conversation(st));
  }
  return out;
}

// LIKE pattern matching `text` literally anywhere (escape char '\').
std::string like_pattern(std::string_view text) {
  std::string p = "%";
  for (char ch : text) {
    if (ch == '%' || ch == '_' || ch == '\\') p += '\\';
    p += ch;
  }
  p += '%';
  return p;
}
}  // namespace

Result<std::vector<Conversation>> Store::list_conversations(int limit) {
  auto st = Stmt::prepare(db_, std::string("SELECT ") + detail::kConversationCols +
                                   " FROM conversations c ORDER BY c.updated_at DESC, c.id DESC"
                                   " LIMIT ?1");
  if (!st.ok()) return st.status();
  st->bind(1, limit);
  return collect_conversations(st.value());
}

namespace {
// Message ids whose text contains ?1 (the query), as an SQL subquery: the
// FTS5 trigram index for three characters or more, else a LIKE scan (?2,
// the escaped pattern) that the index cannot serve.
std::string matching_messages_sql(std::string_view query) {
  size_t chars = 0;
  for (unsigned char ch : query) chars += (ch & 0xC0) != 0x80;  // UTF-8 lead bytes
  if (chars >= 3) return "SELECT rowid FROM messages_fts WHERE messages_fts MATCH ?1";
  return "SELECT id FROM messages WHERE content LIKE ?2 ESCAPE '\\'";
}

// The query as one FTS5 phrase: its characters literally, quotes doubled.
std::string fts_phrase(std::string_view query) {
  std::string p = "\"";
  for (char ch : query) {
    if (ch == '"') p += '"';
    p += ch;
  }
  return p + '"';
}
}  // namespace

Result<std::vector<Conversation>> Store::search_conversations(std::string_view query, int limit) {
  if (query.empty()) return list_conversations(limit);
  auto st = Stmt::prepare(
      db_, std::string("SELECT ") + detail::kConversationCols +
               " FROM conversations c WHERE c.title LIKE ?2 ESCAPE '\\' OR c.id IN ("
               "SELECT m.conversation_id FROM messages m WHERE m.id IN (" +
               matching_messages_sql(query) + ")) ORDER BY c.updated_at DESC, c.id DESC LIMIT ?3");
  if (!st.ok()) return st.status();
  st->bind(1, std::string_view(fts_phrase(query)));
  st->bind(2, std::string_view(like_pattern(query)));
  st->bind(3, limit);
  return collect_conversations(st.value());
}

Result<std::optional<Id>> Store::first_matching_message(Id conversation_id,
                                                        std::string_view query) {
  if (query.empty()) return std::optional<Id>();
  auto st = Stmt::prepare(
      db_, "SELECT m.id FROM messages m WHERE m.conversation_id = ?3 AND m.id IN (" +
               matching_messages_sql(query) + ") ORDER BY m.created_at, m.id LIMIT 1");
  if (!st.ok()) return st.status();
  st->bind(1, std::string_view(fts_phrase(query)));
  st->bind(2, std::string_view(like_pattern(query)));
  st->bind(3, conversation_id);
  auto row = st->step();
  if (!row.ok()) return row.status();
  if (!row.value()) return std::optional<Id>();
  return std::optional<Id>(st->int64(0));
}

namespace {
// One-row UPDATE of a conversation in its own transaction; not_found when the
// id matched nothing.
Status update_conversation(sqlite3* db, Id id, const char* sql,
                           const std::function<void(Stmt&)>& bind) {
  Transaction tx(db);
  RC_STORE_TRY(tx.begin());
  auto st = Stmt::prepare(db, sql);
  if (!st.ok()) return st.status();
  st->bind(1, id);
  bind(st.value());
  RC_STORE_TRY(st->run());
  if (sqlite3_changes(db) == 0) return detail::not_found("conversation", id);
  return tx.commit();
}
}  // namespace

Status Store::rename_conversation(Id id, std::string_view title) {
  return update_conversation(db_, id, "UPDATE conversations SET title = ?2 WHERE id = ?1",
                             [&](Stmt& st) { st.bind(2, title); });
}

Status Store::set_system_prompt(Id id, std::string_view system_prompt,
                                std::optional<Id> preset_id) {
  Status s = update_conversation(
      db_, id, "UPDATE conversations SET system_prompt = ?2, preset_id = ?3 WHERE id = ?1",
      [&](Stmt& st) {
        st.bind(2, system_prompt);
        st.bind(3, preset_id);
      });
  if (!s.ok() && preset_id && s.message().find("FOREIGN KEY") != std::string::npos) {
    return detail::not_found("preset", *preset_id);
  }
  return s;
}

Status Store::set_sampling(Id id, const SamplingSettings& sampling) {
  const std::string json = detail::sampling_to_json(sampling);
  return update_conversation(db_, id, "UPDATE conversations SET sampling = ?2 WHERE id = ?1",
                             [&](Stmt& st) { st.bind(2, std::string_view(json)); });
}

Status Store::delete_conversation(Id id) {
  // Messages go with it through ON DELETE CASCADE.
  return update_conversation(db_, id, "DELETE FROM conversations WHERE id = ?1", [](Stmt&) {});
}

}  // namespace rc::store
