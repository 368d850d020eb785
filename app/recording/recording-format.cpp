#include "recording/recording-format.h"

#include <cstring>
#include <filesystem>

#include <unistd.h>

#include "radixchat/private-files.h"
#include "store/sqlite-util.h"

namespace rc::recording {

using store::detail::exec;
using store::detail::Stmt;

namespace {

// Little-endian regardless of the host, so a recording moves between machines.
void put_u32(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
void put_u64(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

struct Reader {
  const unsigned char* p;
  size_t left;
  bool ok = true;
  uint64_t get(int n) {
    if (left < static_cast<size_t>(n)) {
      ok = false;
      left = 0;
      return 0;
    }
    uint64_t v = 0;
    for (int i = 0; i < n; ++i) v |= uint64_t(p[i]) << (8 * i);
    p += n;
    left -= n;
    return v;
  }
  uint32_t u32() { return static_cast<uint32_t>(get(4)); }
  uint64_t u64() { return get(8); }
  // A count of 4-byte items that must fit in what is left.
  bool ids(std::vector<int32_t>& out) {
    const uint32_t n = u32();
    if (!ok || n > left / 4) return ok = false;
    out.resize(n);
    for (uint32_t i = 0; i < n; ++i) out[i] = static_cast<int32_t>(u32());
    return ok;
  }
};

const char* kSchema = R"sql(
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE event_kinds(kind INTEGER PRIMARY KEY, name TEXT NOT NULL);
CREATE TABLE events(seq INTEGER PRIMARY KEY, t_ms REAL NOT NULL, kind INTEGER NOT NULL,
  node INTEGER, parent INTEGER, other INTEGER, token_count INTEGER NOT NULL,
  page_count INTEGER NOT NULL, tick INTEGER NOT NULL, tokens BLOB, pages BLOB);
CREATE TABLE snapshots(id INTEGER PRIMARY KEY, next_seq INTEGER NOT NULL, t_ms REAL NOT NULL,
  source TEXT NOT NULL, tick INTEGER NOT NULL, nodes INTEGER NOT NULL, stats TEXT,
  data BLOB NOT NULL);
CREATE INDEX snapshots_by_seq ON snapshots(next_seq);
CREATE TABLE requests(id INTEGER PRIMARY KEY, arrival_ms REAL NOT NULL, arrival_seq INTEGER,
  match_seq INTEGER, prompt_tokens INTEGER, prompt BLOB, matched_tokens INTEGER,
  matched_node INTEGER, ttft_ms REAL, total_ms REAL, output_tokens INTEGER, output BLOB,
  finish TEXT, finish_ms REAL);
CREATE TABLE gaps(after_seq INTEGER, resume_seq INTEGER, t_ms REAL, reason TEXT);
CREATE VIEW events_named AS SELECT e.seq, e.t_ms, k.name AS kind, e.node, e.parent, e.other,
  e.token_count, e.page_count, e.tick FROM events e JOIN event_kinds k ON k.kind = e.kind;
)sql";

}  // namespace

std::string encode_ids(const std::vector<int32_t>& ids) {
  std::string out;
  out.reserve(ids.size() * 4);
  for (int32_t v : ids) put_u32(out, static_cast<uint32_t>(v));
  return out;
}

std::vector<int32_t> decode_ids(const void* data, size_t bytes) {
  std::vector<int32_t> out(bytes / 4);
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < out.size(); ++i) {
    out[i] = static_cast<int32_t>(uint32_t(p[4 * i]) | uint32_t(p[4 * i + 1]) << 8 |
                                  uint32_t(p[4 * i + 2]) << 16 | uint32_t(p[4 * i + 3]) << 24);
  }
  return out;
}

std::string encode_snapshot_nodes(const std::vector<CacheNodeInfo>& nodes) {
  std::string out;
  put_u32(out, static_cast<uint32_t>(nodes.size()));
  for (const CacheNodeInfo& n : nodes) {
    put_u32(out, n.id);
    put_u32(out, n.parent);
    put_u32(out, n.lock_ref);
    put_u32(out, n.pin_ref);
    put_u64(out, n.last_access);
    put_u64(out, n.hits);
    put_u32(out, static_cast<uint32_t>(n.tokens.size()));
    out += encode_ids(n.tokens);
    put_u32(out, static_cast<uint32_t>(n.pages.size()));
    out += encode_ids(n.pages);
  }
  return out;
}

Result<std::vector<CacheNodeInfo>> decode_snapshot_nodes(const void* data, size_t bytes) {
  Reader r{static_cast<const unsigned char*>(data), bytes};
  const uint32_t n = r.u32();
  // Each node takes at least 40 bytes: refuse a count the blob cannot hold.
  if (!r.ok || n > r.left / 40) return Status(StatusCode::corrupt_data, "snapshot blob truncated");
  std::vector<CacheNodeInfo> nodes(n);
  for (CacheNodeInfo& node : nodes) {
    node.id = r.u32();
    node.parent = r.u32();
    node.lock_ref = r.u32();
    node.pin_ref = r.u32();
    node.last_access = r.u64();
    node.hits = r.u64();
    if (!r.ids(node.tokens) || !r.ids(node.pages))
      return Status(StatusCode::corrupt_data, "snapshot blob truncated");
  }
  if (r.left != 0) return Status(StatusCode::corrupt_data, "snapshot blob has trailing bytes");
  return nodes;
}

Result<sqlite3*> open_recording_db(const std::string& path, bool create) {
  if (create) {
    // Created 0600 here, before SQLite opens it: a recording holds every
    // prompt, and SQLite gives the -wal and -shm files the same mode.
    auto fd = open_private_file(path, CreateMode::exclusive);
    if (!fd.ok() && fd.status().code() == StatusCode::invalid_argument)
      return Status(StatusCode::invalid_argument,
                    "the recording " + path + " already exists; choose a new file name");
    if (!fd.ok()) return fd.status();
    ::close(*fd);
  }
  if (!create && !std::filesystem::exists(path))
    return Status(StatusCode::not_found, "no recording at " + path);
  sqlite3* db = nullptr;
  const int flags = SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0);
  int rc = sqlite3_open_v2(path.c_str(), &db, flags, nullptr);
  if (rc != SQLITE_OK && !create) {
    // A recording on read-only media: reading is all we need.
    sqlite3_close(db);
    db = nullptr;
    rc = sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  }
  if (rc != SQLITE_OK) {
    Status s = store::detail::sqlite_status(db, rc, "cannot open " + path);
    sqlite3_close(db);
    return s;
  }
  sqlite3_busy_timeout(db, 5000);
  sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr);
  if (create) {
    // NORMAL in WAL mode: a killed process keeps every committed
    // transaction; only a power cut may lose the last ones.
    Status s = exec(db, "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL");
    if (!s.ok()) {
      sqlite3_close(db);
      return s;
    }
  }
  return db;
}

Status create_schema(sqlite3* db) {
  RC_STORE_TRY(exec(db, "BEGIN"));
  Status s = exec(db, kSchema);
  if (s.ok()) {
    auto st = Stmt::prepare(db, "INSERT INTO event_kinds(kind, name) VALUES(?, ?)");
    if (!st.ok()) s = st.status();
    for (int k = 0; s.ok() && k <= static_cast<int>(kLastCacheEventKind); ++k) {
      st->reset();
      st->bind(1, k);
      st->bind(2, std::string_view(cache_event_kind_name(static_cast<CacheEventKind>(k))));
      s = st->run();
    }
  }
  if (s.ok()) s = exec(db, ("PRAGMA user_version = " + std::to_string(kFormatVersion)).c_str());
  if (!s.ok()) {
    (void)exec(db, "ROLLBACK");
    return s;
  }
  return exec(db, "COMMIT");
}

Status check_schema(sqlite3* db) {
  auto st = Stmt::prepare(db, "PRAGMA user_version");
  if (!st.ok())
    return Status(StatusCode::corrupt_data, "not a recording: " + st.status().message());
  auto row = st->step();
  if (!row.ok())
    return Status(StatusCode::corrupt_data, "not a recording: " + row.status().message());
  const int64_t v = row.value() ? st->int64(0) : 0;
  if (v != kFormatVersion)
    return Status(StatusCode::invalid_argument,
                  v == 0 ? std::string("not a RadixChat recording (no schema version)")
                         : "recording format " + std::to_string(v) + " (this build reads " +
                               std::to_string(kFormatVersion) + ")");
  for (const char* table : {"meta", "events", "snapshots", "requests", "gaps"}) {
    auto t = Stmt::prepare(db, std::string("SELECT count(*) FROM ") + table + " LIMIT 1");
    if (!t.ok())
      return Status(StatusCode::corrupt_data, "recording lacks table " + std::string(table));
  }
  return {};
}

}  // namespace rc::recording
