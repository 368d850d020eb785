// The app's disk cache through the engine host, on the bundled model: a
// reload with the disk tier closes the old engine first (the folder takes
// one engine at a time) and the new one loads what the old one computed; a
// folder another engine holds opens the model without the disk tier and
// says why; Clear disk cache empties it. Also the status bar's tier words.
#include <gtest/gtest.h>

#include <QFile>
#include <QSignalSpy>
#include <QTemporaryDir>

#include "chat-controller.h"
#include "chat-test-util.h"
#include "chat/engine-host.h"
#include "radixchat/engine.h"
#include "require-test-model.h"
#include "tier-status.h"

using rc::test::waitUntil;
using rc::ui::EngineHost;
using rc::ui::ModelRequest;

namespace {

const rc::TierInfo* disk(const rc::Engine* e) {
  static rc::TierStats held;
  held = e->stats().tiers;
  for (const rc::TierInfo& t : held.tiers)
    if (t.name == "disk") return &t;
  return nullptr;
}

std::vector<int32_t> somePrompt(const rc::Engine& e) {
  std::vector<int32_t> t{1};
  for (int i = 0; i < 300; ++i) t.push_back(int32_t(3 + (i * 37) % (e.model_info().n_vocab - 3)));
  return t;
}

TEST(EngineTiers, ReloadClosesTheOldEngineFirstAndTheNewOneLoadsFromDisk) {
  RC_REQUIRE_TEST_MODEL();
  QTemporaryDir dir;
  ASSERT_TRUE(dir.isValid());
  std::vector<rc::Engine*> changed;  // outlives the host, which reports nullptr as it goes
  EngineHost host;
  QSignalSpy ready(&host, &EngineHost::modelReady);
  QSignalSpy failed(&host, &EngineHost::loadFailed);
  QObject::connect(&host, &EngineHost::engineChanged,
                   [&changed](rc::Engine* e) { changed.push_back(e); });
  ModelRequest r;
  r.kvDisk = dir.filePath("kv");
  r.kvDiskBytes = 64 << 20;
  host.load(r);
  ASSERT_TRUE(waitUntil([&] { return ready.count() == 1 || failed.count() > 0; }, 120000));
  ASSERT_EQ(failed.count(), 0) << failed.at(0).at(0).toString().toStdString();
  ASSERT_NE(disk(host.engine()), nullptr);
  EXPECT_TRUE(host.model().tierNotice.isEmpty());
  const std::vector<int32_t> prompt = somePrompt(*host.engine());
  ASSERT_TRUE(host.engine()->last_logits(prompt).ok());

  // Same settings again (a cache-settings change, Drafted decoding, a new
  // budget): the GUI lets go at once, the worker closes the old engine
  // (its blocks are written) before the new one takes the folder.
  changed.clear();
  host.load(r);
  ASSERT_GE(changed.size(), 1u);
  EXPECT_EQ(changed.front(), nullptr);
  EXPECT_EQ(host.engine(), nullptr);
  ASSERT_TRUE(waitUntil([&] { return ready.count() == 2 || failed.count() > 0; }, 120000));
  ASSERT_EQ(failed.count(), 0) << failed.at(0).at(0).toString().toStdString();
  EXPECT_TRUE(host.model().tierNotice.isEmpty()) << host.model().tierNotice.toStdString();
  ASSERT_NE(disk(host.engine()), nullptr);
  ASSERT_TRUE(host.engine()->last_logits(prompt).ok());
  EXPECT_GT(host.engine()->stats().tiers.loaded_tokens, 0u)
      << "the reopened engine computed what the old one had written";

  // Clear disk cache.
  QSignalSpy cleared(&host, &EngineHost::tierCacheCleared);
  host.clearTierCache();
  ASSERT_TRUE(waitUntil([&] { return cleared.count() > 0; }, 20000));
  EXPECT_EQ(cleared.at(0).at(0).toString(), QString());
  EXPECT_EQ(disk(host.engine())->blocks, 0);

  // A model that fails to load: the working engine is never closed for it,
  // so its tree, pins and counters stay as they were and the next request
  // is served from the pool (nothing recomputed, nothing loaded from disk).
  rc::Engine* working = host.engine();
  ASSERT_TRUE(working->warmup({{{"system", "You are a pinned system prompt preset."}}}).ok());
  ASSERT_TRUE(working->last_logits(prompt).ok());
  const size_t nodes = working->cache_snapshot().nodes.size();
  const uint64_t loaded = working->stats().tiers.loaded_tokens;
  ModelRequest bad = r;
  bad.path = dir.filePath("not-a-model.gguf");
  QFile f(bad.path);
  ASSERT_TRUE(f.open(QIODevice::WriteOnly));
  f.write("this is not a GGUF file");
  f.close();
  host.load(bad);
  EXPECT_EQ(host.engine(), nullptr);  // let go while the worker checks the file
  ASSERT_TRUE(waitUntil([&] { return failed.count() > 0; }, 60000));
  ASSERT_EQ(host.engine(), working) << "the working engine was closed for a file that cannot load";
  EXPECT_EQ(changed.back(), working);
  ASSERT_NE(disk(host.engine()), nullptr);
  EXPECT_EQ(working->cache_snapshot().nodes.size(), nodes);
  std::vector<int32_t> longer = prompt;
  longer.push_back(42);
  ASSERT_TRUE(working->last_logits(longer).ok());
  EXPECT_EQ(working->stats().tiers.loaded_tokens, loaded);
  EXPECT_FALSE(host.isLoading());
}

TEST(EngineTiers, AFolderInUseElsewhereOpensWithoutTheDiskTierAndSaysSo) {
  RC_REQUIRE_TEST_MODEL();
  QTemporaryDir dir;
  ASSERT_TRUE(dir.isValid());
  // Another window of the app holds the folder.
  rc::EngineConfig other;
  other.model_path = rc::test::test_model_path();
  other.kv_disk = dir.filePath("kv").toStdString();
  auto holder = rc::Engine::create(other);
  ASSERT_TRUE(holder.ok()) << holder.status().to_string();

  EngineHost host;
  QSignalSpy ready(&host, &EngineHost::modelReady);
  QSignalSpy failed(&host, &EngineHost::loadFailed);
  ModelRequest r;
  r.kvDisk = dir.filePath("kv");
  host.load(r);
  ASSERT_TRUE(waitUntil([&] { return ready.count() == 1 || failed.count() > 0; }, 120000));
  ASSERT_EQ(failed.count(), 0) << failed.at(0).at(0).toString().toStdString();
  const QString notice = host.model().tierNotice;
  EXPECT_TRUE(notice.contains(QStringLiteral("in use by another process"))) << notice.toStdString();
  EXPECT_EQ(disk(host.engine()), nullptr);
  EXPECT_TRUE(host.engine()->last_logits(somePrompt(*host.engine())).ok());

  // A folder that cannot be made (a file is in the way): the same.
  QFile blocker(dir.filePath("file"));
  ASSERT_TRUE(blocker.open(QIODevice::WriteOnly));
  blocker.close();
  r.kvDisk = dir.filePath("file/kv");
  host.load(r);
  ASSERT_TRUE(waitUntil([&] { return ready.count() == 2 || failed.count() > 0; }, 120000));
  ASSERT_EQ(failed.count(), 0) << failed.at(0).at(0).toString().toStdString();
  EXPECT_TRUE(host.model().tierNotice.startsWith(QStringLiteral("Disk cache off: ")))
      << host.model().tierNotice.toStdString();
  EXPECT_EQ(disk(host.engine()), nullptr);
}

// The app quits and starts again: the conversation's next turn loads its
// history from the disk cache instead of computing it, and the footer says so.
TEST(EngineTiers, AfterARestartTheNextTurnLoadsTheHistoryFromDisk) {
  RC_REQUIRE_TEST_MODEL();
  QTemporaryDir dir;
  ASSERT_TRUE(dir.isValid());
  ModelRequest r;
  r.kvDisk = dir.filePath("kv");
  qint64 conversation = 0;
  rc::ui::ReplyMetrics before;
  for (int run = 0; run < 2; ++run) {
    auto host = std::make_unique<EngineHost>();
    host->load(r);
    ASSERT_TRUE(waitUntil([&] { return host->hasModel() && !host->isLoading(); }, 120000));
    auto store = rc::store::StoreThread::open(dir.filePath("chat.db").toStdString());
    ASSERT_TRUE(store.ok()) << store.status().to_string();
    auto controller = std::make_unique<rc::gui::ChatController>(store.value().get(), host.get());
    QSignalSpy started(controller.get(), &rc::gui::ChatController::conversationChanged);
    controller->start();
    ASSERT_TRUE(waitUntil([&] { return started.count() > 0; }, 10000));
    rc::gui::ChatSampling sampling;
    sampling.temperature = 0;
    sampling.maxTokens = 16;
    controller->setSampling(sampling);
    if (run == 1) {
      QSignalSpy opened(controller.get(), &rc::gui::ChatController::conversationChanged);
      controller->selectConversation(conversation);
      ASSERT_TRUE(waitUntil(
          [&] {
            return opened.count() > 0 && controller->currentConversation() == conversation &&
                   controller->chatModel()->rows().size() >= 2;
          },
          10000));
    }
    QSignalSpy stored(controller.get(), &rc::gui::ChatController::replyStored);
    controller->send(run == 0 ? QStringLiteral("Here are my notes. ").repeated(30) +
                                    QStringLiteral("What do they say?")
                              : QStringLiteral("And then?"));
    ASSERT_TRUE(waitUntil([&] { return stored.count() > 0; }, 120000));
    ASSERT_TRUE(controller->lastMetrics().has_value());
    const rc::ui::ReplyMetrics m = *controller->lastMetrics();
    if (run == 0) {
      conversation = controller->currentConversation();
      before = m;
      EXPECT_EQ(m.loadedTokens, 0);
    } else {
      EXPECT_GE(m.loadedTokens, 64) << "the history was computed again";
      EXPECT_GE(m.cachedTokens, m.loadedTokens);
      EXPECT_GT(m.promptTokens, before.promptTokens);
      EXPECT_TRUE(rc::ui::formatMetrics(m).contains(QStringLiteral("from disk")))
          << rc::ui::formatMetrics(m).toStdString();
    }
    controller.reset();  // saves and drains before the store goes
    store.value().reset();
    host.reset();  // quit: the engine writes its queued blocks
  }
}

TEST(TierStatus, SaysWhatEachTierHoldsAndWhyOneIsDown) {
  rc::TierStats s;
  EXPECT_EQ(rc::gui::tierStatusText(s), QString());
  s.enabled = true;
  s.block_tokens = 64;
  rc::TierInfo d;
  d.name = "disk";
  d.where = "/home/u/.cache/radixchat/kv";
  d.state = "up";
  d.bytes = 1234567890;
  d.budget_bytes = int64_t(2) << 30;
  rc::TierInfo r;
  r.name = "redis";
  r.where = "redis://127.0.0.1:6390/0";
  r.state = "down";
  r.error = "connection refused";
  s.tiers = {d, r};
  s.loads = 3;
  s.recomputes = 1;
  s.loaded_tokens = 576;
  EXPECT_EQ(rc::gui::tierStatusText(s), QStringLiteral("disk 1.2 GB · Redis down"));
  const QString tip = rc::gui::tierStatusTooltip(s);
  EXPECT_TRUE(tip.contains(QStringLiteral("connection refused"))) << tip.toStdString();
  EXPECT_TRUE(tip.contains(QStringLiteral("/home/u/.cache/radixchat/kv")));
  EXPECT_TRUE(tip.contains(QStringLiteral("3 (576 tokens)"))) << tip.toStdString();
  EXPECT_EQ(rc::gui::byteText(0), QStringLiteral("0 B"));
  EXPECT_EQ(rc::gui::byteText(640000000), QStringLiteral("640 MB"));
  EXPECT_EQ(rc::gui::byteText(12345), QStringLiteral("12 kB"));
}

}  // namespace
