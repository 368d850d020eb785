// Token-exact history across an app restart: a temperature-1
// chat is saved, the app "restarts" (a new engine with no memory of the
// replies, the store reopened, a new controller), and the next turn still
// computes only the new user turn, because the replies' generated ids come
// back from the store. The oracle is the prompt the first engine renders
// (it remembers every reply's ids): the second engine's cache is filled
// with exactly that history, and re-encoding the saved texts is checked to
// give other ids, so a history rebuilt from text alone would miss.
#include <gtest/gtest.h>
#include <QSignalSpy>
#include <QTemporaryDir>

#include "chat-controller.h"
#include "chat-test-util.h"
#include "chat/engine-host.h"
#include "radixchat/engine.h"
#include "require-test-model.h"

using namespace rc::gui;
using rc::test::waitUntil;
using rc::ui::EngineHost;

namespace {

// One run of the app: an engine, the store and the controller on it.
struct App {
  std::unique_ptr<EngineHost> host;
  std::unique_ptr<rc::store::StoreThread> store;
  std::unique_ptr<ChatController> controller;

  explicit App(const QString& dbPath) {
    host = std::make_unique<EngineHost>();
    host->load({});
    EXPECT_TRUE(waitUntil([&] { return host->hasModel() && !host->isLoading(); }, 120000));
    auto opened = rc::store::StoreThread::open(dbPath.toStdString());
    EXPECT_TRUE(opened.ok()) << opened.status().to_string();
    if (!opened.ok()) return;
    store = std::move(opened.value());
    controller = std::make_unique<ChatController>(store.get(), host.get());
    QSignalSpy started(controller.get(), &ChatController::conversationChanged);
    controller->start();
    EXPECT_TRUE(waitUntil([&] { return started.count() > 0; }, 10000));
  }
  ~App() {  // the controller saves and drains before the store goes
    controller.reset();
    store.reset();
    host.reset();
  }

  std::optional<rc::ui::ReplyMetrics> send(const QString& text) {
    QSignalSpy stored(controller.get(), &ChatController::replyStored);
    controller->send(text);
    EXPECT_TRUE(waitUntil([&] { return stored.count() > 0; })) << text.toStdString();
    return controller->lastMetrics();
  }

  std::vector<rc::store::Message> thread(qint64 conv) {
    return store->submit([conv](rc::store::Store& s) { return s.current_thread(conv).value(); })
        .get();
  }
};

// The thread as a client would send it back: text only, no ids.
std::vector<rc::ChatMessage> asText(const std::vector<rc::store::Message>& thread,
                                    const QString& next) {
  std::vector<rc::ChatMessage> out;
  for (const rc::store::Message& m : thread) out.push_back({role_name(m.role), m.content});
  out.push_back({"user", next.toStdString()});
  return out;
}

TEST(ChatRestart, ReopenedTemperatureOneChatComputesOnlyTheNewTurn) {
  RC_REQUIRE_TEST_MODEL();
  QTemporaryDir dir;
  ASSERT_TRUE(dir.isValid());
  const QString db = dir.filePath("chat.db");
  const QString users[] = {"Tell me about the cache.", "Why a tree?",     "And the pages?",
                           "What is evicted first?",   "One more thing?", "And the root?"};
  const QString next = "So what does a restart keep?";
  qint64 conv = 0;
  std::vector<int32_t> exact;  // the next prompt with every reply as generated
  {
    App first(db);
    ChatSampling s = first.controller->sampling();
    s.temperature = 1.0;
    s.topK = 0;
    s.topP = 1.0;
    s.minP = 0;
    s.maxTokens = 48;
    // Turns until the thread, sent back as text, renders to other ids than
    // it was generated as (otherwise a text-only history would hit too).
    // The judge is an engine that never saw the replies, as after the
    // restart below: a reply re-encoded on its own can differ from its ids
    // while the same text in the template's context does not. Replies are
    // sampled with fresh seeds, so a chat of six turns has none about one
    // time in three: then a new chat, up to eight of them.
    auto fresh = rc::Engine::create({});
    ASSERT_TRUE(fresh.ok()) << fresh.status().to_string();
    bool differs = false;
    for (int chat = 0; chat < 8 && !differs; ++chat) {
      if (chat > 0) first.controller->newConversation();
      first.controller->setSampling(s);  // a new chat starts from the defaults
      for (int turn = 0; turn < 6 && !differs; ++turn) {
        ASSERT_TRUE(first.send(users[turn]).has_value());
        conv = first.controller->currentConversation();
        for (const rc::store::Message& m : first.thread(conv)) {
          if (m.role == rc::store::Role::assistant) {
            ASSERT_FALSE(m.tokens.empty()) << "reply " << m.id << " was saved without its ids";
          }
        }
        const auto asSent = asText(first.thread(conv), next);
        auto remembered = first.host->engine()->render_chat(asSent);
        auto fromText = fresh.value()->render_chat(asSent);
        ASSERT_TRUE(remembered.ok() && fromText.ok());
        differs = *remembered != *fromText;
      }
    }
    ASSERT_TRUE(differs)
        << "no reply of 8 chats re-encoded differently: the test exercises nothing";
    // The engine that generated the replies remembers their ids.
    auto rendered = first.host->engine()->render_chat(asText(first.thread(conv), next));
    ASSERT_TRUE(rendered.ok()) << rendered.status().to_string();
    exact = std::move(rendered.value());
  }

  App second(db);
  rc::Engine* engine = second.host->engine();
  ASSERT_TRUE(engine);
  const auto tail = engine->tokenize(
      "<|end|>\n<|user|>\n" + next.toStdString() + "<|end|>\n<|assistant|>\n", false);
  ASSERT_TRUE(tail.ok());
  ASSERT_GT(exact.size(), tail->size());
  ASSERT_TRUE(std::equal(tail->begin(), tail->end(), exact.end() - tail->size()));
  // A new engine knows nothing of the replies: from their text alone it
  // renders another prompt, which would miss the cache below.
  auto fromText = engine->render_chat(asText(second.thread(conv), next));
  ASSERT_TRUE(fromText.ok());
  EXPECT_NE(*fromText, exact);
  // The cache holds the history as it was generated (what the first run's
  // cache held before the restart).
  const std::vector<int32_t> history(exact.begin(), exact.end() - tail->size());
  ASSERT_TRUE(engine->last_logits(history).ok());

  QSignalSpy changed(second.controller.get(), &ChatController::conversationChanged);
  second.controller->selectConversation(conv);
  ASSERT_TRUE(waitUntil([&] { return changed.count() > 0; }, 10000));
  EXPECT_EQ(second.controller->sampling().temperature, 1.0);
  const auto m = second.send(next);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->promptTokens, static_cast<int>(exact.size()));
  EXPECT_EQ(m->cachedTokens, static_cast<int>(history.size()));
  EXPECT_EQ(m->computedTokens(), static_cast<int>(tail->size()));
}

}  // namespace
