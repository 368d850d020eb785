// Message search through the FTS5 index (messages_fts): the triggers keep it
// in step with appends, updates and deletes, the first matching message of a
// conversation is found on any branch, and a v3 database (before the index)
// is migrated with its existing messages indexed.
#include "store/store.h"

#include "old-database.h"
#include "store-test-util.h"

namespace rc::store {
namespace {
using testing::RawDb;
using testing::TempDir;
using testing::write_database_at_version;

std::vector<Id> ids(Store& s, std::string_view q) {
  std::vector<Id> out;
  auto r = s.search_conversations(q);
  EXPECT_OK(r);
  if (r.ok())
    for (const auto& c : r.value()) out.push_back(c.id);
  return out;
}

// The index agrees with the messages table (FTS5's own check).
void expect_index_consistent(const std::filesystem::path& path) {
  RawDb raw(path);
  raw.exec("INSERT INTO messages_fts(messages_fts, rank) VALUES ('integrity-check', 1)");
}

TEST(StoreSearch, IndexFollowsAppendsUpdatesAndDeletes) {
  TempDir dir;
  auto opened = Store::open(dir / "chat.db");
  ASSERT_OK(opened);
  Store& s = *opened.value();
  const Id a = s.create_conversation({.title = "first"}).value();
  const Id b = s.create_conversation({.title = "second"}).value();
  const Id q =
      s.append_message({.conversation_id = a, .content = "tell me about Zeppelins"}).value();
  const Id r = s.append_message(
                    {.conversation_id = a, .parent_id = q, .role = Role::assistant, .content = ""})
                   .value();
  s.append_message({.conversation_id = b, .content = "ünïcode ÄRGER here"}).value();

  EXPECT_EQ(ids(s, "zeppelin"), (std::vector<Id>{a}));
  EXPECT_EQ(ids(s, "ärger"), (std::vector<Id>{b}));  // case folded beyond ASCII
  EXPECT_EQ(ids(s, "hydrogen"), (std::vector<Id>{}));
  // A streamed reply is saved by update_message: the index follows.
  ASSERT_OK(s.update_message(r, "Airships filled with hydrogen.", std::nullopt));
  EXPECT_EQ(ids(s, "hydrogen"), (std::vector<Id>{a}));
  EXPECT_EQ(s.first_matching_message(a, "HYDROGEN").value(), r);
  ASSERT_OK(s.update_message(r, "Airships filled with helium.", std::nullopt));
  EXPECT_EQ(ids(s, "hydrogen"), (std::vector<Id>{}));
  // Short queries (under a trigram) still find substrings.
  EXPECT_EQ(ids(s, "he"), (std::vector<Id>{a, b}));  // "helium" (updated last), "here"
  EXPECT_EQ(ids(s, "hx"), (std::vector<Id>{}));
  // Quotes and FTS5 operators are plain text.
  EXPECT_EQ(ids(s, "\"Zeppelins\""), (std::vector<Id>{}));
  EXPECT_EQ(ids(s, "me AND about"), (std::vector<Id>{}));
  EXPECT_EQ(ids(s, "me about"), (std::vector<Id>{a}));
  // Deleting a conversation takes its messages out of the index.
  ASSERT_OK(s.delete_conversation(a));
  EXPECT_EQ(ids(s, "zeppelin"), (std::vector<Id>{}));
  expect_index_consistent(dir / "chat.db");
}

TEST(StoreSearch, FirstMatchingMessageOnAnyBranch) {
  TempDir dir;
  auto opened = Store::open(dir / "chat.db");
  ASSERT_OK(opened);
  Store& s = *opened.value();
  const Id c = s.create_conversation({.title = "a walrus chat"}).value();
  const Id u = s.append_message({.conversation_id = c, .content = "hello"}).value();
  const Id side = s.append_message({.conversation_id = c,
                                    .parent_id = u,
                                    .role = Role::assistant,
                                    .content = "the walrus is on this branch"})
                      .value();
  s.append_message({.conversation_id = c,
                    .parent_id = u,
                    .role = Role::assistant,
                    .content = "the walrus again, later"})
      .value();
  EXPECT_EQ(s.first_matching_message(c, "walrus").value(), side);  // the earliest
  EXPECT_EQ(s.first_matching_message(c, "hello").value(), u);
  // The title matched, no message did.
  EXPECT_EQ(ids(s, "chat"), (std::vector<Id>{c}));
  EXPECT_EQ(s.first_matching_message(c, "chat").value(), std::nullopt);
  EXPECT_EQ(s.first_matching_message(c, "").value(), std::nullopt);
}

TEST(StoreSearch, V3DatabaseIsMigratedWithItsMessagesIndexed) {
  TempDir dir;
  const auto path = dir / "v3.db";
  write_database_at_version(
      path, 3,
      "INSERT INTO conversations (title, created_at, updated_at) VALUES ('old', 1, 3);"
      "INSERT INTO conversations (title, created_at, updated_at) VALUES ('other', 1, 2);"
      "INSERT INTO messages (conversation_id, parent_id, role, content, created_at) "
      "  VALUES (1, NULL, 'user', 'where do narwhals live?', 2);"
      "INSERT INTO messages (conversation_id, parent_id, role, content, created_at) "
      "  VALUES (1, 1, 'assistant', 'In the Arctic.', 3);"
      "INSERT INTO messages (conversation_id, parent_id, role, content, created_at) "
      "  VALUES (2, NULL, 'user', 'unrelated', 2);");
  EXPECT_EQ(RawDb(path).text("SELECT count(*) FROM sqlite_schema WHERE name = 'messages_fts'"),
            "0");
  {
    auto opened = Store::open(path);
    ASSERT_OK(opened);
    Store& s = *opened.value();
    EXPECT_EQ(ids(s, "narwhal"), (std::vector<Id>{1}));  // backfilled
    EXPECT_EQ(s.first_matching_message(1, "arctic").value(), 2);
    // New messages are indexed by the triggers.
    s.append_message({.conversation_id = 2, .parent_id = 3, .content = "more narwhals"}).value();
    EXPECT_EQ(ids(s, "narwhal"), (std::vector<Id>{2, 1}));
  }
  RawDb raw(path);
  EXPECT_EQ(raw.text("PRAGMA user_version"), std::to_string(Store::kSchemaVersion));
  EXPECT_EQ(raw.text("SELECT count(*) FROM messages_fts WHERE messages_fts MATCH 'narwhal'"), "2");
  expect_index_consistent(path);
}

}  // namespace
}  // namespace rc::store
