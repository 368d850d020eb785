// Store::open on files it did not just create: old schema versions are
// migrated with their data, newer versions, foreign, corrupt and truncated
// files are refused and left byte-for-byte unchanged.
#include <sqlite3.h>
#include <unistd.h>

#include <random>
#include <set>

#include "store-test-util.h"
#include "store/schema.h"
#include "store/store.h"

namespace rc::store {
namespace {
using testing::RawDb;
using testing::read_bytes;
using testing::TempDir;
using testing::write_bytes;

void expect_refused(const std::filesystem::path& path, StatusCode code,
                    const std::string& must_contain) {
  const std::string before = read_bytes(path);
  const auto listing = [&] {
    std::set<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(path.parent_path()))
      names.insert(e.path().filename().string());
    return names;
  };
  const auto files_before = listing();
  auto s = Store::open(path);
  ASSERT_FALSE(s.ok()) << "opened a file that must be refused";
  EXPECT_EQ(s.status().code(), code) << s.status().message();
  EXPECT_NE(s.status().message().find(path.string()), std::string::npos)
      << "message must name the file: " << s.status().message();
  EXPECT_NE(s.status().message().find(must_contain), std::string::npos) << s.status().message();
  EXPECT_EQ(read_bytes(path), before) << "a refused file was modified";
  EXPECT_EQ(listing(), files_before) << "refusing left files behind";
  // A second attempt says the same thing: nothing was "repaired" in between.
  auto again = Store::open(path);
  EXPECT_EQ(again.status().message(), s.status().message());
}

TEST(StoreOpen, CreatesSchemaInWalMode) {
  TempDir dir;
  const auto path = dir / "new.db";
  {
    auto s = Store::open(path);
    ASSERT_OK(s);
    EXPECT_EQ(s.value()->path(), path);
  }
  RawDb raw(path);
  EXPECT_EQ(raw.text("PRAGMA user_version"), std::to_string(Store::kSchemaVersion));
  EXPECT_EQ(raw.text("PRAGMA journal_mode"), "wal");
  EXPECT_EQ(raw.text("PRAGMA integrity_check"), "ok");
}

TEST(StoreOpen, MissingFolderIsNotFound) {
  TempDir dir;
  auto s = Store::open(dir / "no" / "such" / "chat.db");
  EXPECT_EQ(s.status().code(), StatusCode::not_found);
  EXPECT_FALSE(std::filesystem::exists(dir / "no"));
}

TEST(StoreOpen, WriteProtectedFileIsReportedClearly) {
  TempDir dir;
  const auto path = dir / "ro.db";
  ASSERT_OK(Store::open(path));
  std::filesystem::permissions(path, std::filesystem::perms::owner_read |
                                         std::filesystem::perms::group_read |
                                         std::filesystem::perms::others_read);
  if (access(path.c_str(), W_OK) == 0) GTEST_SKIP() << "running as root: permissions not enforced";
  auto s = Store::open(path);
  EXPECT_EQ(s.status().code(), StatusCode::invalid_argument);
  EXPECT_NE(s.status().message().find("read-only"), std::string::npos) << s.status().message();
}

TEST(StoreOpen, EmptyFileBecomesDatabase) {
  TempDir dir;
  write_bytes(dir / "empty.db", "");
  EXPECT_OK(Store::open(dir / "empty.db"));
}

// A v1 database as the first release wrote it, with data, then opened by this
// build: migrated to the latest version in place, nothing lost.
TEST(StoreOpen, MigratesV1DatabaseKeepingData) {
  TempDir dir;
  const auto path = dir / "v1.db";
  {
    RawDb raw(path);
    raw.exec("PRAGMA journal_mode = WAL");
    raw.exec(std::string(detail::migration_sql(1)));
    raw.exec(
        "INSERT INTO presets (name, text, created_at) VALUES ('Coder', 'You code.', 1000);"
        "INSERT INTO conversations (title, created_at, updated_at, system_prompt, preset_id, "
        "  sampling) VALUES ('old chat', 1000, 3000, 'You code.', 1, '{\"top_k\": 5}');"
        "INSERT INTO messages (conversation_id, parent_id, role, content, created_at) "
        "  VALUES (1, NULL, 'user', 'question', 2000);"
        "INSERT INTO messages (conversation_id, parent_id, role, content, created_at, model, "
        "  prompt_tokens, cached_tokens, completion_tokens, ttft_ms, tokens_per_s) "
        "  VALUES (1, 1, 'assistant', 'answer', 3000, 'm', 10, 4, 2, 5.5, 20.0);"
        "UPDATE conversations SET current_leaf_id = 2 WHERE id = 1;"
        "INSERT INTO settings (key, value) VALUES ('theme', 'dark');"
        "PRAGMA user_version = 1;");
    EXPECT_EQ(raw.text("SELECT count(*) FROM pragma_table_info('messages') "
                       "WHERE name = 'finish_reason'"),
              "0");
  }
  {
    auto opened = Store::open(path);
    ASSERT_OK(opened);
    Store& s = *opened.value();
    auto conv = s.get_conversation(1);
    ASSERT_OK(conv);
    EXPECT_EQ(conv->title, "old chat");
    EXPECT_EQ(conv->preset_id, 1);
    EXPECT_EQ(conv->sampling.top_k, 5);
    EXPECT_EQ(conv->sampling.temperature, SamplingSettings{}.temperature);
    auto thread = s.current_thread(1);
    ASSERT_OK(thread);
    ASSERT_EQ(thread->size(), 2u);
    EXPECT_EQ((*thread)[1].content, "answer");
    ASSERT_TRUE((*thread)[1].metrics);
    EXPECT_EQ((*thread)[1].metrics->cached_tokens, 4);
    EXPECT_EQ((*thread)[1].metrics->finish_reason, "");  // the column did not exist in v1
    EXPECT_EQ(s.get_setting("theme").value(), "dark");
    EXPECT_EQ(s.get_preset(1)->name, "Coder");
    // The v2 column is writable.
    ASSERT_OK(s.update_message(2, "answer", MessageMetrics{.finish_reason = "length"}));
    EXPECT_EQ(s.get_message(2)->metrics->finish_reason, "length");
    // New rows do not reuse ids.
    auto next = s.append_message({.conversation_id = 1, .parent_id = 2, .content = "more"});
    ASSERT_OK(next);
    EXPECT_EQ(next.value(), 3);
  }
  RawDb raw(path);
  EXPECT_EQ(raw.text("PRAGMA user_version"), std::to_string(Store::kSchemaVersion));
  EXPECT_EQ(raw.text("SELECT count(*) FROM sqlite_schema WHERE name = 'messages_by_parent'"), "1");
  EXPECT_EQ(raw.text("PRAGMA integrity_check"), "ok");
}

TEST(StoreOpen, NewerSchemaIsRefusedAndUntouched) {
  TempDir dir;
  const auto path = dir / "future.db";
  {
    RawDb raw(path);
    raw.exec(std::string(detail::migration_sql(1)));
    raw.exec("INSERT INTO settings VALUES ('k', 'v'); PRAGMA user_version = 7;");
  }
  expect_refused(
      path, StatusCode::unsupported,
      "v7 is newer than this RadixChat (v" + std::to_string(Store::kSchemaVersion) + ")");
}

TEST(StoreOpen, NewerSchemaInWalModeIsRefusedAndUntouched) {
  // A WAL-mode file: closing our connection must not checkpoint into it.
  TempDir dir;
  const auto path = dir / "future-wal.db";
  {
    // Leave the last commits in the -wal file, as a crashed newer build would.
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, nullptr);
    ASSERT_EQ(sqlite3_exec(db,
                           "PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0;"
                           "CREATE TABLE t (x); INSERT INTO t VALUES (1);"
                           "PRAGMA user_version = 9;",
                           nullptr, nullptr, nullptr),
              SQLITE_OK);
    sqlite3_close(db);
  }
  const std::string wal = path.string() + "-wal";
  ASSERT_GT(std::filesystem::file_size(wal), 0u);
  const std::string wal_before = read_bytes(wal);
  expect_refused(path, StatusCode::unsupported, "newer than this RadixChat");
  EXPECT_EQ(read_bytes(wal), wal_before) << "the WAL was checkpointed or changed";
}

TEST(StoreOpen, ForeignSqliteDatabaseIsRefused) {
  TempDir dir;
  const auto path = dir / "other-app.db";
  {
    RawDb raw(path);
    raw.exec("CREATE TABLE bookmarks (url TEXT); INSERT INTO bookmarks VALUES ('x');");
  }
  expect_refused(path, StatusCode::corrupt_data, "another application");
}

TEST(StoreOpen, RandomBytesAreRefused) {
  TempDir dir;
  std::mt19937 rng(42);
  std::string junk(64 * 1024, '\0');
  for (char& c : junk) c = static_cast<char>(rng());
  write_bytes(dir / "junk.db", junk);
  expect_refused(dir / "junk.db", StatusCode::corrupt_data, "not a SQLite database");
  write_bytes(dir / "short.db", "hello");
  expect_refused(dir / "short.db", StatusCode::corrupt_data, "not a SQLite database");
}

// Builds a multi-page RadixChat database and returns its bytes.
std::string make_full_database(const std::filesystem::path& path) {
  {
    auto s = Store::open(path);
    EXPECT_OK(s);
    if (!s.ok()) return {};
    auto conv = s.value()->create_conversation({.title = "big"});
    std::optional<Id> parent;
    for (int i = 0; i < 300; ++i) {
      auto id = s.value()->append_message({.conversation_id = conv.value(),
                                           .parent_id = parent,
                                           .content = std::string(200, 'a' + i % 26)});
      parent = id.value();
    }
  }  // closing checkpoints the WAL into the main file
  return read_bytes(path);
}

TEST(StoreOpen, TruncatedDatabaseIsRefusedAndUntouched) {
  TempDir dir;
  const auto path = dir / "trunc.db";
  const std::string full = make_full_database(path);
  ASSERT_GT(full.size(), 16u * 4096);
  write_bytes(path, full.substr(0, full.size() / 2));
  expect_refused(path, StatusCode::corrupt_data, path.string());
}

TEST(StoreOpen, CorruptPagesAreRefusedAndUntouched) {
  TempDir dir;
  const auto path = dir / "damaged.db";
  std::string bytes = make_full_database(path);
  ASSERT_GT(bytes.size(), 16u * 4096);
  // Overwrite a few pages in the middle with garbage; keep the header valid.
  std::mt19937 rng(7);
  for (size_t i = 4 * 4096; i < 8 * 4096; ++i) bytes[i] = static_cast<char>(rng());
  write_bytes(path, bytes);
  expect_refused(path, StatusCode::corrupt_data, "damaged");
}

TEST(StoreOpen, MalformedSamplingJsonReadsAsDefaults) {
  // A hand-edited or future-format column must not make a chat unreadable.
  TempDir dir;
  const auto path = dir / "sampling.db";
  {
    auto s = Store::open(path);
    ASSERT_OK(s);
    ASSERT_OK(s.value()->create_conversation({.title = "a"}));
    ASSERT_OK(s.value()->create_conversation({.title = "b"}));
  }
  {
    RawDb raw(path);
    raw.exec("UPDATE conversations SET sampling = '{\"top_k\": ' WHERE id = 1");
    raw.exec(
        "UPDATE conversations SET sampling = '{\"top_k\": \"x\", \"top_p\": 0.5}' "
        "WHERE id = 2");
  }
  auto s = Store::open(path);
  ASSERT_OK(s);
  EXPECT_EQ(s.value()->get_conversation(1)->sampling, SamplingSettings{});
  auto b = s.value()->get_conversation(2);
  ASSERT_OK(b);
  EXPECT_EQ(b->sampling.top_k, SamplingSettings{}.top_k);
  EXPECT_EQ(b->sampling.top_p, 0.5);
}

}  // namespace
}  // namespace rc::store
