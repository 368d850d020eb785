// First run: the introduction shows once, only with an empty history, and
// is text for the page, never a stored conversation.
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

TEST(Welcome, FirstRunOnceAndNothingStored) {
  auto store = fresh_store("rc-welcome-empty.db");
  auto first = take_first_run(*store);
  ASSERT_TRUE(first.ok()) << first.status().to_string();
  EXPECT_TRUE(first.value());
  EXPECT_TRUE(store->list_conversations()->empty()) << "the introduction became a conversation";
  auto again = take_first_run(*store);
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(again.value());
}

TEST(Welcome, ExistingHistoryIsLeftAlone) {
  auto store = fresh_store("rc-welcome-existing.db");
  rc::store::NewConversation c;
  c.title = "mine";
  ASSERT_TRUE(store->create_conversation(c).ok());
  auto first = take_first_run(*store);
  ASSERT_TRUE(first.ok());
  EXPECT_FALSE(first.value());
  auto list = store->list_conversations();
  ASSERT_EQ(list->size(), 1u);
  EXPECT_EQ(list->front().title, "mine");
}

TEST(Welcome, TheIntroductionExplainsTheCache) {
  const QString text = welcomeText();
  EXPECT_TRUE(text.contains("KV cache"));
  EXPECT_TRUE(text.contains("F9"));
  // And that the bundled model is a demo, with the way to a real one.
  EXPECT_TRUE(text.contains("tiny demo"));
  EXPECT_TRUE(text.contains("Model > Get a model"));
}

}  // namespace rc::gui
