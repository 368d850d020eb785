// Internal: thin RAII over the sqlite3 C API (statements, transactions) with
// errors mapped to rc::Status. Not part of the store's public API.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <sqlite3.h>

#include "radixchat/status.h"

// Propagates a failed Status (or the Status of a failed Result) to the caller.
#define RC_STORE_TRY(expr)                     \
  do {                                         \
    ::rc::Status rc_store_s_ = (expr);         \
    if (!rc_store_s_.ok()) return rc_store_s_; \
  } while (0)

namespace rc::store::detail {

// SQLite's error as a Status: corrupt_data for SQLITE_CORRUPT/NOTADB, else
// internal. `what` says which operation failed.
Status sqlite_status(sqlite3* db, int rc, std::string_view what);

// Runs SQL without results (may contain several statements).
Status exec(sqlite3* db, const char* sql);

// A prepared statement. Bind indices are 1-based, column indices 0-based, as
// in SQLite. Move-only.
class Stmt {
 public:
  Stmt() = default;
  ~Stmt();
  Stmt(Stmt&& o) noexcept : db_(o.db_), st_(o.st_) { o.st_ = nullptr; }
  Stmt& operator=(Stmt&& o) noexcept;
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;

  static Result<Stmt> prepare(sqlite3* db, std::string_view sql);

  void bind(int i, std::int64_t v) { sqlite3_bind_int64(st_, i, v); }
  void bind(int i, int v) { sqlite3_bind_int64(st_, i, v); }
  void bind(int i, double v) { sqlite3_bind_double(st_, i, v); }
  void bind(int i, std::string_view v) {
    sqlite3_bind_text(st_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
  }
  void bind(int i, const std::optional<std::int64_t>& v) {
    if (v)
      bind(i, *v);
    else
      sqlite3_bind_null(st_, i);
  }
  void bind_null(int i) { sqlite3_bind_null(st_, i); }
  // Copies `n` bytes (SQLITE_TRANSIENT); an empty blob is stored as a
  // zero-length blob, not NULL.
  void bind_blob(int i, const void* data, size_t n) {
    sqlite3_bind_blob64(st_, i, n ? data : "", n, SQLITE_TRANSIENT);
  }
  // Back to the state after prepare() (bindings kept) for the next row.
  void reset() { sqlite3_reset(st_); }

  // true: a row is available; false: done. Errors -> Status via step_status().
  Result<bool> step();
  // Runs a statement that returns no rows.
  Status run();

  bool is_null(int c) const { return sqlite3_column_type(st_, c) == SQLITE_NULL; }
  std::int64_t int64(int c) const { return sqlite3_column_int64(st_, c); }
  int int32(int c) const { return sqlite3_column_int(st_, c); }
  double real(int c) const { return sqlite3_column_double(st_, c); }
  std::string text(int c) const;
  // The column's bytes (valid until the next step/reset) and their count.
  const void* blob(int c) const { return sqlite3_column_blob(st_, c); }
  size_t bytes(int c) const { return static_cast<size_t>(sqlite3_column_bytes(st_, c)); }
  std::optional<std::int64_t> opt_int64(int c) const {
    if (is_null(c)) return std::nullopt;
    return int64(c);
  }

 private:
  sqlite3* db_ = nullptr;
  sqlite3_stmt* st_ = nullptr;
};

// BEGIN IMMEDIATE on begin(); ROLLBACK in the destructor unless committed, so
// every early return from a write method leaves the database unchanged.
class Transaction {
 public:
  explicit Transaction(sqlite3* db) : db_(db) {}
  ~Transaction();
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  Status begin();
  Status commit();

 private:
  sqlite3* db_;
  bool active_ = false;
};

}  // namespace rc::store::detail
