// Shared helpers of the store tests: a temporary folder, raw file access and
// gtest assertions for rc::Status / rc::Result.
#pragma once

#include <sqlite3.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "radixchat/status.h"

namespace rc::store::testing {

inline const Status& status_of(const Status& s) { return s; }
template <typename T>
const Status& status_of(const Result<T>& r) {
  return r.status();
}

// No status_code_name(): that lives in rc_engine, which the store does not link.
inline std::string describe(const Status& s) {
  return "code " + std::to_string(static_cast<int>(s.code())) + ": " + s.message();
}

// The value is bound first (lifetime-extended), then its Status looked at: a
// temporary Status/Result must outlive the reference to its status.
#define RC_STORE_CHECK_OK_(check, expr)                                              \
  do {                                                                               \
    const auto& rc_v_ = (expr);                                                      \
    const ::rc::Status& rc_st_ = ::rc::store::testing::status_of(rc_v_);             \
    check(rc_st_.ok()) << #expr << " -> " << ::rc::store::testing::describe(rc_st_); \
  } while (0)
#define ASSERT_OK(expr) RC_STORE_CHECK_OK_(ASSERT_TRUE, expr)
#define EXPECT_OK(expr) RC_STORE_CHECK_OK_(EXPECT_TRUE, expr)

// A fresh folder under TMPDIR, removed with everything in it.
class TempDir {
 public:
  // Prefers /dev/shm: the store fsyncs every commit (synchronous=FULL), which
  // costs tens of ms on a busy disk; process-kill safety, which is what the
  // tests check, does not depend on fsync (the OS keeps written pages).
  TempDir() {
    std::error_code ec;
    std::filesystem::path base = std::filesystem::temp_directory_path();
    if (const char* forced = std::getenv("RC_STORE_TEST_TMPDIR"); forced && *forced) {
      base = forced;  // e.g. a real disk, to run the crash test across fsyncs
    } else if (std::filesystem::is_directory("/dev/shm", ec) && access("/dev/shm", W_OK) == 0) {
      base = "/dev/shm";
    }
    std::string tmpl = (base / "rc-store-XXXXXX").string();
    char* made = mkdtemp(tmpl.data());
    if (made) path_ = made;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

inline std::string read_bytes(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline void write_bytes(const std::filesystem::path& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// Raw sqlite3 access for building and inspecting files by hand.
class RawDb {
 public:
  explicit RawDb(const std::filesystem::path& p) {
    EXPECT_EQ(sqlite3_open(p.c_str(), &db_), SQLITE_OK);
  }
  ~RawDb() { sqlite3_close(db_); }
  void exec(const std::string& sql) {
    char* err = nullptr;
    EXPECT_EQ(sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK)
        << (err ? err : "") << " in " << sql;
    sqlite3_free(err);
  }
  std::string text(const std::string& sql) {
    sqlite3_stmt* st = nullptr;
    std::string out;
    EXPECT_EQ(sqlite3_prepare_v2(db_, sql.c_str(), -1, &st, nullptr), SQLITE_OK) << sql;
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
      out = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    return out;
  }

 private:
  sqlite3* db_ = nullptr;
};

}  // namespace rc::store::testing
