// Deletion that deletes: a conversation deleted in the app leaves the disk
// tier, across a restart. Two conversations are chatted with the disk tier
// on; the app restarts and deletes the first; the folder then holds fewer
// blocks, and a restarted app given the deleted conversation's first
// message again loads none of it from disk (beyond what the kept
// conversation shares with it), while the kept conversation still loads.
#include <gtest/gtest.h>

#include <QSignalSpy>
#include <QTemporaryDir>
#include <filesystem>

#include "chat-controller.h"
#include "chat-test-util.h"
#include "chat/engine-host.h"
#include "radixchat/engine.h"
#include "require-test-model.h"

using namespace rc::gui;
using rc::test::waitUntil;
using rc::ui::EngineHost;

namespace {

constexpr int kBlockTokens = 64;  // EngineConfig::kv_block_tokens

// One run of the app with the disk tier in `kv`.
struct App {
  std::unique_ptr<EngineHost> host;
  std::unique_ptr<rc::store::StoreThread> store;
  std::unique_ptr<ChatController> controller;

  App(const QString& dbPath, const QString& kv) {
    host = std::make_unique<EngineHost>();
    rc::ui::ModelRequest r;
    r.kvDisk = kv;
    r.kvDiskBytes = 256 << 20;
    host->load(r);
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
  ~App() {
    controller.reset();
    store.reset();
    host.reset();  // the engine closes: every queued block is written
  }

  rc::ui::ReplyMetrics send(const QString& text) {
    QSignalSpy stored(controller.get(), &ChatController::replyStored);
    controller->send(text);
    EXPECT_TRUE(waitUntil([&] { return stored.count() > 0; })) << text.toStdString();
    return controller->lastMetrics().value_or(rc::ui::ReplyMetrics{});
  }
};

int blockFiles(const QString& kv) {
  int n = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(kv.toStdString()))
    n += e.path().extension() == ".rckv";
  return n;
}

size_t sharedPrefix(const std::vector<int32_t>& a, const std::vector<int32_t>& b) {
  size_t n = 0;
  while (n < a.size() && n < b.size() && a[n] == b[n]) ++n;
  return n;
}

TEST(ChatPurge, ADeletedConversationLeavesTheDiskTier) {
  RC_REQUIRE_TEST_MODEL();
  QTemporaryDir dir;
  ASSERT_TRUE(dir.isValid());
  // The sealing key beside the test's files, not in the user's home.
  qputenv("XDG_DATA_HOME", dir.filePath("data").toUtf8());
  const QString db = dir.filePath("chat.db");
  const QString kv = dir.filePath("kv");
  const QString secret =
      "Remember this for me: the secret password is SWORDFISH, the vault opens at dawn, the "
      "courier wears a red scarf, the meeting point is the old lighthouse by the harbour, and "
      "the fallback plan is the train station at noon. Now tell me about caches and trees.";
  const QString other =
      "What is a radix tree, and why does a cache want one? Explain how a request finds the "
      "longest prefix it shares with earlier requests, what happens to the pages of a leaf that "
      "nobody has used for a while, how a split keeps both halves, and why a pinned system "
      "prompt stays when everything else is evicted. Use small examples with numbers.";
  qint64 deleted = 0, kept = 0;
  {
    App a(db, kv);
    a.send(secret);
    a.send("And what about the pages?");
    deleted = a.controller->currentConversation();
    a.controller->newConversation();
    a.send(other);
    kept = a.controller->currentConversation();
  }
  const int before = blockFiles(kv);
  ASSERT_GT(before, 0);
  {
    App b(db, kv);
    QSignalSpy forgotten(b.host.get(), &EngineHost::forgotten);
    b.controller->deleteConversation(deleted);
    ASSERT_TRUE(waitUntil([&] { return forgotten.count() > 0; }, 60000));
    EXPECT_EQ(forgotten.at(0).at(2).toString(), QString());
    EXPECT_GT(forgotten.at(0).at(1).toLongLong(), 0) << "no block was erased";
  }
  const int after = blockFiles(kv);
  EXPECT_LT(after, before);
  EXPECT_GT(after, 0) << "the kept conversation's blocks went too";

  App c(db, kv);
  rc::Engine* engine = c.host->engine();
  ASSERT_NE(engine, nullptr);
  // What the deleted and the kept conversation's first prompts share (the
  // template's opening) may stay on disk; nothing after it may.
  const auto secretPrompt = engine->render_chat({{"user", secret.toStdString()}}).value();
  const auto otherPrompt = engine->render_chat({{"user", other.toStdString()}}).value();
  ASSERT_GT(secretPrompt.size(), size_t(kBlockTokens));
  ASSERT_GT(otherPrompt.size(), size_t(kBlockTokens));
  const int sharedBlocks = int(sharedPrefix(secretPrompt, otherPrompt)) / kBlockTokens;
  const rc::ui::ReplyMetrics again = c.send(secret);
  EXPECT_LE(again.loadedTokens, sharedBlocks * kBlockTokens);
  EXPECT_LT(again.loadedTokens, kBlockTokens * (int(secretPrompt.size()) / kBlockTokens));
  // The kept conversation still comes back from disk.
  QSignalSpy switched(c.controller.get(), &ChatController::conversationChanged);
  c.controller->selectConversation(kept);
  ASSERT_TRUE(waitUntil([&] { return switched.count() > 0; }, 10000));
  const rc::ui::ReplyMetrics follow = c.send("Say more about the root.");
  EXPECT_GT(follow.loadedTokens, 0);
}

}  // namespace
