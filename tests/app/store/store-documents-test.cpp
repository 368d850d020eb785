// The documents a conversation answers from (schema v4, docs/architecture.md
// section 21): attach, detach, list in attach order, the conversations that
// use a document, forgetting one everywhere, deletion cascading, and a v3
// database migrated with every row intact.
#include "old-database.h"
#include "store-test-util.h"
#include "store/store.h"

namespace rc::store {
namespace {
using testing::RawDb;
using testing::TempDir;
using testing::write_database_at_version;

TEST(StoreDocuments, AttachListDetachAndForget) {
  TempDir dir;
  auto opened = Store::open(dir / "h.db");
  ASSERT_OK(opened);
  Store& s = *opened.value();
  const Id a = s.create_conversation({.title = "a"}).value();
  const Id b = s.create_conversation({.title = "b"}).value();
  ASSERT_OK(s.attach_document(a, "paper.pdf"));
  ASSERT_OK(s.attach_document(a, "notes.md"));
  ASSERT_OK(s.attach_document(a, "paper.pdf"));  // again: nothing changes
  ASSERT_OK(s.attach_document(b, "notes.md"));
  EXPECT_EQ(s.conversation_documents(a).value(),
            (std::vector<std::string>{"paper.pdf", "notes.md"}));
  auto users = s.conversations_with_document("notes.md");
  ASSERT_OK(users);
  ASSERT_EQ(users->size(), 2u);
  EXPECT_EQ(s.attach_document(999, "x").code(), StatusCode::not_found);
  ASSERT_OK(s.detach_document(a, "paper.pdf"));
  EXPECT_EQ(s.detach_document(a, "paper.pdf").code(), StatusCode::not_found);
  EXPECT_EQ(s.conversation_documents(a).value(), std::vector<std::string>{"notes.md"});
  ASSERT_OK(s.forget_document("notes.md"));
  EXPECT_TRUE(s.conversation_documents(a)->empty());
  EXPECT_TRUE(s.conversations_with_document("notes.md")->empty());
  // Deleting a conversation takes its attachments with it.
  ASSERT_OK(s.attach_document(b, "kept.txt"));
  ASSERT_OK(s.delete_conversation(b));
  EXPECT_TRUE(s.conversations_with_document("kept.txt")->empty());
}

// A v3 database opens at this build's version with its conversations and
// replies intact.
TEST(StoreDocuments, MigratesV3DatabaseKeepingData) {
  TempDir dir;
  const auto path = dir / "v3.db";
  write_database_at_version(
      path, 3,
      "INSERT INTO conversations (title, created_at, updated_at) VALUES ('old', 1000, 2000);"
      "INSERT INTO messages (conversation_id, parent_id, role, content, created_at) "
      "  VALUES (1, NULL, 'user', 'question', 2000);"
      "UPDATE conversations SET current_leaf_id = 1 WHERE id = 1;");
  {
    auto opened = Store::open(path);
    ASSERT_OK(opened);
    Store& s = *opened.value();
    auto thread = s.current_thread(1);
    ASSERT_OK(thread);
    ASSERT_EQ(thread->size(), 1u);
    EXPECT_EQ((*thread)[0].content, "question");
    ASSERT_OK(s.attach_document(1, "doc.txt"));
    EXPECT_EQ(s.conversation_documents(1).value(), std::vector<std::string>{"doc.txt"});
  }
  RawDb raw(path);
  EXPECT_EQ(raw.text("PRAGMA user_version"), std::to_string(Store::kSchemaVersion));
  EXPECT_EQ(raw.text("PRAGMA integrity_check"), "ok");
}

}  // namespace
}  // namespace rc::store
