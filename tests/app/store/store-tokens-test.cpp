// The generated token ids saved with an assistant reply (schema v3,
// docs/architecture.md section 10): round trip through every read path,
// the blob's byte layout, a v2 database migrated with its data, and
// damaged blobs reported as corrupt_data (never a crash, never guessed ids).
#include <climits>

#include "store-test-util.h"
#include "store/schema.h"
#include "store/store.h"

namespace rc::store {
namespace {
using testing::RawDb;
using testing::TempDir;

struct Chat {
  Id conv = 0, user = 0, reply = 0;
};

Chat make_chat(Store& s) {
  Chat c;
  c.conv = s.create_conversation({.title = "t"}).value();
  c.user =
      s.append_message({.conversation_id = c.conv, .role = Role::user, .content = "hi"}).value();
  c.reply =
      s.append_message(
           {.conversation_id = c.conv, .parent_id = c.user, .role = Role::assistant, .model = "m"})
          .value();
  return c;
}

TEST(StoreTokens, RoundTripThroughEveryReadPath) {
  TempDir dir;
  auto opened = Store::open(dir / "chat.db");
  ASSERT_OK(opened);
  Store& s = *opened.value();
  const Chat c = make_chat(s);
  EXPECT_TRUE(s.get_message(c.reply)->tokens.empty());  // appended empty: not known

  const std::vector<std::int32_t> ids = {0, 1, 255, 256, 65536, 0x01020304, INT_MAX, 17};
  ASSERT_OK(s.update_message(c.reply, "hello", MessageMetrics{.finish_reason = "stop"}, ids));
  EXPECT_EQ(s.get_message(c.reply)->tokens, ids);
  auto thread = s.current_thread(c.conv);
  ASSERT_OK(thread);
  ASSERT_EQ(thread->size(), 2u);
  EXPECT_TRUE((*thread)[0].tokens.empty());
  EXPECT_EQ((*thread)[1].tokens, ids);
  auto kids = s.children(c.conv, c.user);
  ASSERT_OK(kids);
  ASSERT_EQ(kids->size(), 1u);
  EXPECT_EQ((*kids)[0].tokens, ids);

  // Little-endian int32 whatever the host: 0x01020304 is the bytes 04 03 02 01.
  {
    RawDb raw(dir / "chat.db");
    EXPECT_EQ(raw.text("SELECT length(tokens) FROM messages WHERE id = " + std::to_string(c.reply)),
              std::to_string(ids.size() * 4));
    EXPECT_EQ(raw.text("SELECT hex(substr(tokens, 21, 4)) FROM messages WHERE id = " +
                       std::to_string(c.reply)),
              "04030201");
  }

  // A negative id is refused and changes nothing.
  const std::vector<std::int32_t> bad = {5, -1};
  EXPECT_EQ(s.update_message(c.reply, "other", std::nullopt, bad).code(),
            StatusCode::invalid_argument);
  EXPECT_EQ(s.get_message(c.reply)->content, "hello");
  EXPECT_EQ(s.get_message(c.reply)->tokens, ids);

  // Without ids the reply reads back as "not known" (NULL, not a stale blob).
  ASSERT_OK(s.update_message(c.reply, "hello again", std::nullopt));
  EXPECT_TRUE(s.get_message(c.reply)->tokens.empty());
  RawDb raw(dir / "chat.db");
  EXPECT_EQ(raw.text("SELECT tokens IS NULL FROM messages WHERE id = " + std::to_string(c.reply)),
            "1");
}

// A v2 database (as the previous release wrote it) opens as v3 with every
// row intact, its replies without ids, and ids can be saved from then on.
TEST(StoreTokens, MigratesV2DatabaseKeepingData) {
  TempDir dir;
  const auto path = dir / "v2.db";
  {
    RawDb raw(path);
    raw.exec("PRAGMA journal_mode = WAL");
    raw.exec(std::string(detail::migration_sql(1)));
    raw.exec(std::string(detail::migration_sql(2)));
    raw.exec(
        "INSERT INTO conversations (title, created_at, updated_at) VALUES ('old', 1000, 3000);"
        "INSERT INTO messages (conversation_id, parent_id, role, content, created_at) "
        "  VALUES (1, NULL, 'user', 'question', 2000);"
        "INSERT INTO messages (conversation_id, parent_id, role, content, created_at, model, "
        "  prompt_tokens, cached_tokens, completion_tokens, ttft_ms, tokens_per_s, "
        "  finish_reason) VALUES (1, 1, 'assistant', 'answer', 3000, 'm', 10, 4, 2, 5.5, 20.0, "
        "  'length');"
        "UPDATE conversations SET current_leaf_id = 2 WHERE id = 1;"
        "PRAGMA user_version = 2;");
    EXPECT_EQ(raw.text("SELECT count(*) FROM pragma_table_info('messages') WHERE name = 'tokens'"),
              "0");
  }
  {
    auto opened = Store::open(path);
    ASSERT_OK(opened);
    Store& s = *opened.value();
    auto thread = s.current_thread(1);
    ASSERT_OK(thread);
    ASSERT_EQ(thread->size(), 2u);
    EXPECT_EQ((*thread)[1].content, "answer");
    ASSERT_TRUE((*thread)[1].metrics);
    EXPECT_EQ((*thread)[1].metrics->finish_reason, "length");
    EXPECT_TRUE((*thread)[1].tokens.empty());
    const std::vector<std::int32_t> ids = {3, 1, 4, 1, 5};
    ASSERT_OK(s.update_message(2, "answer", (*thread)[1].metrics, ids));
    EXPECT_EQ(s.get_message(2)->tokens, ids);
  }
  RawDb raw(path);
  EXPECT_EQ(raw.text("PRAGMA user_version"), std::to_string(Store::kSchemaVersion));
  EXPECT_EQ(raw.text("PRAGMA integrity_check"), "ok");
}

// Damaged blobs (a size that is not whole ids, a negative id) make reads of
// that message fail with corrupt_data naming it; other conversations stay
// readable, and saving the reply again repairs it.
TEST(StoreTokens, DamagedBlobIsAnErrorNamingTheMessage) {
  TempDir dir;
  auto opened = Store::open(dir / "chat.db");
  ASSERT_OK(opened);
  Store& s = *opened.value();
  const Chat c = make_chat(s);
  const Chat other = make_chat(s);
  const std::vector<std::int32_t> ids = {7, 8, 9};
  ASSERT_OK(s.update_message(c.reply, "abc", std::nullopt, ids));
  ASSERT_OK(s.update_message(other.reply, "xyz", std::nullopt, ids));

  for (const char* blob : {"X'01020304AA'", "X'FFFFFFFF'", "X'00'"}) {
    SCOPED_TRACE(blob);
    {
      RawDb raw(dir / "chat.db");
      raw.exec(std::string("UPDATE messages SET tokens = ") + blob +
               " WHERE id = " + std::to_string(c.reply));
    }
    auto m = s.get_message(c.reply);
    ASSERT_FALSE(m.ok());
    EXPECT_EQ(m.status().code(), StatusCode::corrupt_data);
    EXPECT_NE(m.status().message().find("message " + std::to_string(c.reply)), std::string::npos)
        << m.status().message();
    EXPECT_EQ(s.current_thread(c.conv).status().code(), StatusCode::corrupt_data);
    EXPECT_EQ(s.children(c.conv, c.user).status().code(), StatusCode::corrupt_data);
    // The user message and the other conversation are untouched.
    EXPECT_OK(s.get_message(c.user));
    auto ok = s.current_thread(other.conv);
    ASSERT_OK(ok);
    EXPECT_EQ((*ok)[1].tokens, ids);
  }
  ASSERT_OK(s.update_message(c.reply, "abc", std::nullopt, ids));
  EXPECT_EQ(s.get_message(c.reply)->tokens, ids);
}

}  // namespace
}  // namespace rc::store
