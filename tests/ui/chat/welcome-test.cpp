// First run: the welcome conversation appears once, only in an empty
// history, and asks the controller to open it.
#include <gtest/gtest.h>

#include <filesystem>

#include "store/store.h"
#include "welcome.h"

namespace rc::gui {

namespace {

std::unique_ptr<rc::store::Store> fresh_store(const char* name) {
  const auto path = std::filesystem::temp_directory_path() / name;
  std::filesystem::remove(path);
  auto s = rc::store::Store::open(path);
  EXPECT_TRUE(s.ok()) << s.status().to_string();
  return std::move(s.value());
}

}  // namespace

TEST(Welcome, AddedOnceIntoAnEmptyHistory) {
  auto store = fresh_store("rc-welcome-empty.db");
  ASSERT_TRUE(add_welcome_once(*store).ok());
  auto list = store->list_conversations();
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->size(), 1u);
  auto thread = store->current_thread(list->front().id);
  ASSERT_TRUE(thread.ok());
  ASSERT_EQ(thread->size(), 2u);
  EXPECT_NE(thread->back().content.find("KV cache"), std::string::npos);
  auto open = store->get_setting(kOpenAtStartKey);
  ASSERT_TRUE(open.ok() && open.value());
  EXPECT_EQ(*open.value(), std::to_string(list->front().id));

  // A second start (even after the user deleted it) adds nothing.
  ASSERT_TRUE(store->delete_conversation(list->front().id).ok());
  ASSERT_TRUE(add_welcome_once(*store).ok());
  EXPECT_TRUE(store->list_conversations()->empty());
}

TEST(Welcome, ExistingHistoryIsLeftAlone) {
  auto store = fresh_store("rc-welcome-existing.db");
  rc::store::NewConversation c;
  c.title = "mine";
  ASSERT_TRUE(store->create_conversation(c).ok());
  ASSERT_TRUE(add_welcome_once(*store).ok());
  auto list = store->list_conversations();
  ASSERT_EQ(list->size(), 1u);
  EXPECT_EQ(list->front().title, "mine");
  EXPECT_FALSE(store->get_setting(kOpenAtStartKey)->has_value());
}

}  // namespace rc::gui
