// First run: the welcome conversation appears once, only in an empty
// history, and asks the controller to open it; on the bundled model, the
// first message sent in it is prefilled in one chunk, so the tree's first
// node holds the whole welcome (never cut mid-sentence at a chunk's end).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <thread>

#include "radixchat/engine.h"
#include "skip-or-fail.h"
#include "store/store.h"
#include "test-paths.h"
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

// A first question of a few lines fits beside the welcome in one chunk.
TEST(Welcome, FirstMessageLeavesTheWelcomeInOneNode) {
  if (!std::filesystem::exists(rc::test::test_model_path()))
    RC_SKIP_OR_FAIL("no model at " << rc::test::test_model_path());
  auto store = fresh_store("rc-welcome-node.db");
  ASSERT_TRUE(add_welcome_once(*store).ok());
  auto list = store->list_conversations();
  ASSERT_TRUE(list.ok() && list->size() == 1u);
  auto thread = store->current_thread(list->front().id);
  ASSERT_TRUE(thread.ok());
  ASSERT_EQ(thread->size(), 2u);
  const std::string answer = thread->back().content;
  rc::EngineConfig cfg;
  cfg.model_path = rc::test::test_model_path();
  cfg.n_threads = 2;
  cfg.kv_pool_tokens = 4096;
  auto engine = rc::Engine::create(cfg);
  ASSERT_TRUE(engine.ok()) << engine.status().to_string();
  std::vector<rc::ChatMessage> messages = {
      {"user", thread->front().content},
      {"assistant", answer},
      {"user",
       "Thanks! Could you tell me a little more about how eviction decides which leaves of the "
       "tree go first, and why the nodes in use stay?"}};
  auto prompt = (*engine)->render_chat(messages);
  ASSERT_TRUE(prompt.ok()) << prompt.status().to_string();
  const int chunk = rc::EngineConfig{}.prefill_chunk;
  EXPECT_LE(int(prompt->size()), chunk)
      << "the welcome and a short question take more than one prefill chunk";

  std::atomic<bool> done{false};
  rc::GenerateRequest req;
  req.messages = messages;
  req.max_tokens = 4;
  auto id = (*engine)->submit(std::move(req), [&](const rc::StreamEvent& e) {
    if (e.finished) done = true;
    return true;
  });
  ASSERT_TRUE(id.ok()) << id.status().to_string();
  for (int i = 0; i < 3000 && !done; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_TRUE(done);
  // The root's child on the prompt's path holds the welcome answer whole.
  const rc::CacheSnapshot tree = (*engine)->cache_snapshot();
  const rc::CacheNodeInfo* first = nullptr;
  for (const rc::CacheNodeInfo& n : tree.nodes)
    if (n.id != rc::kRootNode && n.parent == rc::kRootNode && !n.tokens.empty() &&
        n.tokens.front() == prompt->front())
      first = &n;
  ASSERT_NE(first, nullptr);
  const std::string text = (*engine)->detokenize(first->tokens);
  const std::string last_sentence = answer.substr(answer.rfind(". ") + 2);
  EXPECT_NE(text.find(last_sentence), std::string::npos)
      << "the first node ends inside the welcome: ..." << text.substr(text.size() - 80);
}

}  // namespace rc::gui
