#include "store/sqlite-util.h"

#include <string>

namespace rc::store::detail {

Status sqlite_status(sqlite3* db, int rc, std::string_view what) {
  std::string msg(what);
  msg += ": ";
  msg += db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  const int primary = rc & 0xff;
  if (primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB) {
    return {StatusCode::corrupt_data, msg};
  }
  return {StatusCode::internal, msg};
}

Status exec(sqlite3* db, const char* sql) {
  char* err = nullptr;
  const int rc = sqlite3_exec(db, sql, nullptr, nullptr, &err);
  if (rc == SQLITE_OK) return {};
  std::string msg = err ? err : sqlite3_errstr(rc);
  sqlite3_free(err);
  const int primary = rc & 0xff;
  return {primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB ? StatusCode::corrupt_data
                                                                : StatusCode::internal,
          std::string("sqlite: ") + msg};
}

Stmt::~Stmt() { sqlite3_finalize(st_); }

Stmt& Stmt::operator=(Stmt&& o) noexcept {
  if (this != &o) {
    sqlite3_finalize(st_);
    db_ = o.db_;
    st_ = o.st_;
    o.st_ = nullptr;
  }
  return *this;
}

Result<Stmt> Stmt::prepare(sqlite3* db, std::string_view sql) {
  Stmt s;
  s.db_ = db;
  const int rc = sqlite3_prepare_v2(db, sql.data(), static_cast<int>(sql.size()), &s.st_, nullptr);
  if (rc != SQLITE_OK) return sqlite_status(db, rc, "prepare");
  return s;
}

Result<bool> Stmt::step() {
  const int rc = sqlite3_step(st_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return sqlite_status(db_, rc, "sqlite");
}

Status Stmt::run() {
  auto r = step();
  if (!r.ok()) return r.status();
  return {};
}

std::string Stmt::text(int c) const {
  const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(st_, c));
  if (!p) return {};
  return std::string(p, static_cast<size_t>(sqlite3_column_bytes(st_, c)));
}

Transaction::~Transaction() {
  if (active_) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
}

Status Transaction::begin() {
  // IMMEDIATE takes the write lock up front: a concurrent writer (a second
  // app instance) waits on busy_timeout here instead of failing mid-way.
  RC_STORE_TRY(exec(db_, "BEGIN IMMEDIATE"));
  active_ = true;
  return {};
}

Status Transaction::commit() {
  Status s = exec(db_, "COMMIT");
  if (s.ok()) active_ = false;
  return s;
}

}  // namespace rc::store::detail
