// Owner-only files under the default umask (022): the shared helper
// (radixchat/private-files.h), the chat database with its -wal and -shm,
// the default data folder, and the start-up tightening of older, wider
// files with its one notice line.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>

#include "radixchat/private-files.h"
#include "store-test-util.h"
#include "store/store.h"

namespace rc::store {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;
using testing::write_bytes;

// The umask a new user has, for the length of a test.
class Umask022 {
 public:
  Umask022() : old_(::umask(022)) {}
  ~Umask022() { ::umask(old_); }

 private:
  mode_t old_;
};

unsigned mode_of(const fs::path& p) {
  struct stat st;
  if (::lstat(p.c_str(), &st) != 0) return 07777;  // missing: never equal to a mode checked
  return st.st_mode & 0777;
}

TEST(PrivateFiles, FoldersAreCreated0700WithTheirParents) {
  Umask022 umask;
  TempDir dir;
  const fs::path deep = dir / "a" / "b" / "c";
  ASSERT_OK(make_private_dir(deep));
  for (const fs::path& p : {dir / "a", dir / "a" / "b", deep}) EXPECT_EQ(mode_of(p), 0700u) << p;
  // An existing folder is the user's: its mode stays.
  ASSERT_EQ(::chmod(dir.path().c_str(), 0755), 0);
  ASSERT_OK(make_private_dir(dir.path()));
  EXPECT_EQ(mode_of(dir.path()), 0755u);
  write_bytes(dir / "file", "x");
  EXPECT_EQ(make_private_dir(dir / "file").code(), StatusCode::invalid_argument);
}

TEST(PrivateFiles, FilesAreCreated0600AndWiderOnesNarrowedWhenWritten) {
  Umask022 umask;
  TempDir dir;
  ASSERT_OK(write_private_file(dir / "new.svg", "<svg/>"));
  EXPECT_EQ(mode_of(dir / "new.svg"), 0600u);
  EXPECT_EQ(testing::read_bytes(dir / "new.svg"), "<svg/>");

  write_bytes(dir / "old.svg", "previous contents, longer");
  ASSERT_EQ(::chmod((dir / "old.svg").c_str(), 0644), 0);
  ASSERT_OK(write_private_file(dir / "old.svg", "new"));
  EXPECT_EQ(mode_of(dir / "old.svg"), 0600u);
  EXPECT_EQ(testing::read_bytes(dir / "old.svg"), "new");

  auto fd = open_private_file(dir / "new.svg", CreateMode::exclusive);
  ASSERT_FALSE(fd.ok());
  EXPECT_EQ(fd.status().code(), StatusCode::invalid_argument);
  auto kept = open_private_file(dir / "part", CreateMode::keep);
  ASSERT_OK(kept);
  ::close(kept.value());
  EXPECT_EQ(mode_of(dir / "part"), 0600u);
  EXPECT_EQ(write_private_file(dir / "no" / "x", "").code(), StatusCode::not_found);
}

TEST(PrivateFiles, TighteningReportsWhatItChangedOnce) {
  Umask022 umask;
  TempDir dir;
  write_bytes(dir / "wide", "x");
  write_bytes(dir / "narrow", "x");
  ASSERT_EQ(::chmod((dir / "wide").c_str(), 0664), 0);
  ASSERT_EQ(::chmod((dir / "narrow").c_str(), 0600), 0);
  ASSERT_EQ(::symlink("/etc/hostname", (dir / "link").c_str()), 0);
  auto changed = tighten_to_owner({dir / "wide", dir / "narrow", dir / "link", dir / "missing"});
  ASSERT_OK(changed);
  ASSERT_EQ(changed->size(), 1u);
  EXPECT_EQ(changed->front(), dir / "wide");
  EXPECT_EQ(mode_of(dir / "wide"), 0600u);
  const std::string notice = tightened_notice(changed.value());
  EXPECT_NE(notice.find((dir / "wide").string()), std::string::npos) << notice;
  EXPECT_EQ(notice.find('\n'), std::string::npos) << "one line";
  EXPECT_EQ(tightened_notice({}), "");
  auto again = tighten_to_owner({dir / "wide"});
  ASSERT_OK(again);
  EXPECT_TRUE(again->empty());
}

// SQLite gives the -wal and -shm files the database file's mode; the store
// creates that file 0600 itself, so all three are owner-only from birth.
TEST(PrivateFiles, NewDatabaseWithWalAndShmIsOwnerOnly) {
  Umask022 umask;
  TempDir dir;
  const fs::path db = dir / "radixchat.db";
  auto s = Store::open(db);
  ASSERT_OK(s);
  ASSERT_OK((*s)->create_conversation({.title = "private"}));
  ASSERT_TRUE(fs::exists(db.string() + "-wal"));
  ASSERT_TRUE(fs::exists(db.string() + "-shm"));
  EXPECT_EQ(mode_of(db), 0600u);
  EXPECT_EQ(mode_of(db.string() + "-wal"), 0600u);
  EXPECT_EQ(mode_of(db.string() + "-shm"), 0600u);
}

TEST(PrivateFiles, DefaultDataFolderIsCreated0700) {
  Umask022 umask;
  TempDir dir;
  const char* old = std::getenv("XDG_DATA_HOME");
  const std::string saved = old ? old : "";
  ::setenv("XDG_DATA_HOME", (dir / "share").c_str(), 1);
  auto path = default_database_path();
  if (old)
    ::setenv("XDG_DATA_HOME", saved.c_str(), 1);
  else
    ::unsetenv("XDG_DATA_HOME");
  ASSERT_OK(path);
  EXPECT_EQ(path->parent_path(), dir / "share" / "radixchat");
  EXPECT_EQ(mode_of(dir / "share"), 0700u);
  EXPECT_EQ(mode_of(dir / "share" / "radixchat"), 0700u);
}

// A history made by an older build (0755 folder, 0644 files) is narrowed on
// start: the folder, the database, its -wal and -shm, and what lies beside.
TEST(PrivateFiles, OlderWiderHistoryIsTightenedOnStart) {
  TempDir dir;
  const fs::path data = dir / "radixchat";
  const fs::path db = data / "radixchat.db";
  {
    // The old behaviour, reproduced: plain umask 022 creation by SQLite.
    ::mode_t old = ::umask(022);
    fs::create_directories(data / "models");
    {
      testing::RawDb raw(db);
      raw.exec("PRAGMA journal_mode = WAL; CREATE TABLE t(x); INSERT INTO t VALUES(1)");
      write_bytes(data / "settings.ini", "[x]\n");
      for (const fs::path& p : {db, fs::path(db.string() + "-wal"), fs::path(db.string() + "-shm"),
                                data / "settings.ini"})
        ASSERT_EQ(mode_of(p), 0644u) << p;
      auto notice = restrict_data_folder(db);
      ASSERT_OK(notice);
      for (const fs::path& p : {db, fs::path(db.string() + "-wal"), fs::path(db.string() + "-shm"),
                                data / "settings.ini"}) {
        EXPECT_EQ(mode_of(p), 0600u) << p;
        EXPECT_NE(notice->find(p.string()), std::string::npos) << *notice;
      }
      EXPECT_EQ(mode_of(data), 0700u);
      EXPECT_EQ(mode_of(data / "models"), 0700u);
      EXPECT_EQ(notice->find('\n'), std::string::npos) << "one line";
    }
    ::umask(old);
  }
  auto second = restrict_data_folder(db);
  ASSERT_OK(second);
  EXPECT_EQ(second.value(), "") << "nothing left to report";
}

}  // namespace
}  // namespace rc::store
