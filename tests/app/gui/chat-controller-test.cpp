// The chat controller with a real engine on the bundled model (small and
// fast) and a temporary database: streaming, stop, regenerate, branches,
// edits, the radix cache hit of a second message, presets warmed into the
// cache, the conversation list, export and prefix lookups. Also the engine
// host's model loading: cancel, and a failing model keeping the old one.
#include <gtest/gtest.h>
#include <QFile>
#include <QSignalSpy>
#include <QTemporaryDir>

#include "chat-controller.h"
#include "chat-test-util.h"
#include "chat/engine-host.h"
#include "require-test-model.h"

using namespace rc::gui;
using rc::test::waitUntil;
using rc::ui::ChatRole;
using rc::ui::EngineHost;

namespace {

class ChatControllerTest : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!rc::test::have_test_model()) return;
    host_ = new EngineHost();
    bool failed = false;
    QObject::connect(host_, &EngineHost::loadFailed, [&failed](const QString& why, bool) {
      failed = true;
      ADD_FAILURE() << "model load failed: " << why.toStdString();
    });
    host_->load({});
    waitUntil([&] { return host_->hasModel() || failed; }, 120000);
    QObject::disconnect(host_, &EngineHost::loadFailed, nullptr, nullptr);
  }
  static void TearDownTestSuite() {
    delete host_;
    host_ = nullptr;
  }

  void SetUp() override {
    RC_REQUIRE_TEST_MODEL();
    ASSERT_TRUE(host_ && host_->hasModel());
    ASSERT_TRUE(dir_.isValid());
    auto store = rc::store::StoreThread::open(dir_.filePath("chat.db").toStdString());
    ASSERT_TRUE(store.ok()) << store.status().to_string();
    store_ = std::move(store.value());
    controller_ = std::make_unique<ChatController>(store_.get(), host_);
    QSignalSpy started(controller_.get(), &ChatController::conversationChanged);
    controller_->start();
    ASSERT_TRUE(waitUntil([&] { return started.count() > 0; }, 10000));
    // Greedy and short: fast and reproducible.
    ChatSampling s;
    s.temperature = 0;
    s.maxTokens = 24;
    controller_->setSampling(s);
  }

  void TearDown() override {
    controller_.reset();
    store_.reset();
  }

  // Sends and waits until the reply is saved; returns the reply's id.
  qint64 sendAndWait(const QString& text) {
    QSignalSpy stored(controller_.get(), &ChatController::replyStored);
    controller_->send(text);
    EXPECT_TRUE(waitUntil([&] { return stored.count() > 0; }))
        << "no reply to " << text.toStdString();
    return stored.isEmpty() ? 0 : stored.at(0).at(0).toLongLong();
  }

  // Runs the action and waits for the thread on screen to be reloaded.
  template <typename F>
  void reloadAfter(F action) {
    QSignalSpy changed(controller_.get(), &ChatController::conversationChanged);
    action();
    ASSERT_TRUE(waitUntil([&] { return changed.count() > 0; }, 10000));
  }

  template <typename F>
  auto onStore(F f) {
    return store_->submit(std::move(f)).get();
  }

  const std::vector<rc::ui::ChatMessageRow>& rows() { return controller_->chatModel()->rows(); }

  static EngineHost* host_;
  QTemporaryDir dir_;
  std::unique_ptr<rc::store::StoreThread> store_;
  std::unique_ptr<ChatController> controller_;
};

EngineHost* ChatControllerTest::host_ = nullptr;

TEST_F(ChatControllerTest, StreamingAppendsTokensAndSavesTheReply) {
  rc::ui::ChatModel* model = controller_->chatModel();
  std::vector<int> lengths;  // the reply's length at each update
  QObject::connect(model, &rc::ui::ChatModel::dataChanged, model, [&](const QModelIndex& i) {
    if (i.data(rc::ui::ChatModel::StreamingRole).toBool()) {
      lengths.push_back(static_cast<int>(i.data(rc::ui::ChatModel::TextRole).toString().size()));
    }
  });
  QSignalSpy generating(controller_.get(), &ChatController::generatingChanged);
  const qint64 reply = sendAndWait("Hello");
  ASSERT_GT(reply, 0);

  ASSERT_EQ(rows().size(), 2u);
  EXPECT_EQ(rows()[0].role, ChatRole::User);
  EXPECT_EQ(rows()[0].text, "Hello");
  EXPECT_EQ(rows()[1].role, ChatRole::Assistant);
  EXPECT_EQ(rows()[1].id, reply);
  EXPECT_FALSE(rows()[1].streaming);
  EXPECT_FALSE(rows()[1].text.isEmpty());
  // Several pieces arrived, each making the text longer.
  ASSERT_GE(lengths.size(), 2u);
  EXPECT_TRUE(std::is_sorted(lengths.begin(), lengths.end()));
  EXPECT_LT(lengths.front(), lengths.back());
  ASSERT_EQ(generating.count(), 2);  // on, then off
  EXPECT_FALSE(controller_->isGenerating());

  // Saved with its figures.
  rc::store::Message saved =
      onStore([reply](rc::store::Store& s) { return s.get_message(reply).value(); });
  EXPECT_EQ(QString::fromStdString(saved.content), rows()[1].text);
  ASSERT_TRUE(saved.metrics.has_value());
  EXPECT_GT(saved.metrics->prompt_tokens, 0);
  EXPECT_GT(saved.metrics->completion_tokens, 0);
  EXPECT_TRUE(saved.metrics->finish_reason == "stop" || saved.metrics->finish_reason == "length");
  EXPECT_EQ(saved.model, host_->model().name.toStdString());
  // The conversation got a title from the message and is listed.
  EXPECT_EQ(controller_->currentTitle(), "Hello");
  EXPECT_TRUE(waitUntil([&] { return controller_->conversationList()->rowCount() == 1; }, 5000));
}

TEST_F(ChatControllerTest, StopFinishesWithCancelled) {
  ChatSampling s = controller_->sampling();
  s.maxTokens = 400;
  controller_->setSampling(s);
  // Stop as soon as the reply starts: nothing can have finished yet.
  QObject::connect(controller_.get(), &ChatController::generatingChanged, controller_.get(),
                   [this](bool on) {
                     if (on) controller_->stop();
                   });
  QSignalSpy finished(controller_.get(), &ChatController::replyFinished);
  const qint64 reply = sendAndWait("Tell me a long story about trees.");
  ASSERT_EQ(finished.count(), 1);
  const auto metrics = finished.at(0).at(1).value<rc::ui::ReplyMetrics>();
  EXPECT_EQ(metrics.finishReason, "cancelled");
  EXPECT_FALSE(controller_->isGenerating());
  rc::store::Message saved =
      onStore([reply](rc::store::Store& s) { return s.get_message(reply).value(); });
  ASSERT_TRUE(saved.metrics.has_value());
  EXPECT_EQ(saved.metrics->finish_reason, "cancelled");
  // The chat goes on after a stop.
  QObject::disconnect(controller_.get(), &ChatController::generatingChanged, controller_.get(),
                      nullptr);
  EXPECT_GT(sendAndWait("Hello"), 0);
  EXPECT_EQ(rows().size(), 4u);
}

TEST_F(ChatControllerTest, RegenerateMakesASiblingReply) {
  const qint64 first = sendAndWait("Hello");
  const qint64 user = rows()[0].id;
  const qint64 second = [&] {
    QSignalSpy stored(controller_.get(), &ChatController::replyStored);
    controller_->regenerate(first);
    EXPECT_TRUE(waitUntil([&] { return stored.count() > 0; }));
    return stored.isEmpty() ? 0 : stored.at(0).at(0).toLongLong();
  }();
  ASSERT_GT(second, first);
  ASSERT_EQ(rows().size(), 2u);
  EXPECT_EQ(rows()[1].id, second);
  EXPECT_EQ(rows()[1].branchIndex, 1);
  EXPECT_EQ(rows()[1].branchCount, 2);
  const qint64 conv = controller_->currentConversation();
  auto siblings =
      onStore([conv, user](rc::store::Store& s) { return s.children(conv, user).value(); });
  ASSERT_EQ(siblings.size(), 2u);
  EXPECT_EQ(siblings[0].id, first);
  EXPECT_EQ(siblings[1].id, second);
}

TEST_F(ChatControllerTest, EditingAMessageBranchesAndNavigationSwitchesTheThread) {
  sendAndWait("Hello");
  sendAndWait("What is a radix tree?");
  ASSERT_EQ(rows().size(), 4u);
  const qint64 firstUser = rows()[0].id;
  const qint64 oldTip = rows()[3].id;

  // Editing the first question: a new root sibling with its own reply.
  QSignalSpy stored(controller_.get(), &ChatController::replyStored);
  controller_->editMessage(firstUser, "Hi there");
  ASSERT_TRUE(waitUntil([&] { return stored.count() > 0; }));
  ASSERT_EQ(rows().size(), 2u);
  const qint64 newUser = rows()[0].id;
  EXPECT_NE(newUser, firstUser);
  EXPECT_EQ(rows()[0].text, "Hi there");
  EXPECT_EQ(rows()[0].branchIndex, 1);
  EXPECT_EQ(rows()[0].branchCount, 2);
  const qint64 conv = controller_->currentConversation();
  auto roots =
      onStore([conv](rc::store::Store& s) { return s.children(conv, std::nullopt).value(); });
  EXPECT_EQ(roots.size(), 2u);  // both branches kept

  // "<": back to the first branch, at its newest tip (all four messages).
  reloadAfter([&] { controller_->switchBranch(newUser, -1); });
  ASSERT_EQ(rows().size(), 4u);
  EXPECT_EQ(rows()[0].id, firstUser);
  EXPECT_EQ(rows()[0].branchIndex, 0);
  EXPECT_EQ(rows()[3].id, oldTip);
  // ">": forward again.
  reloadAfter([&] { controller_->switchBranch(firstUser, +1); });
  ASSERT_EQ(rows().size(), 2u);
  EXPECT_EQ(rows()[0].id, newUser);
  // The store remembers the branch on screen.
  auto leaf = onStore([conv](rc::store::Store& s) { return s.current_leaf(conv).value(); });
  EXPECT_EQ(leaf, rows()[1].id);
}

TEST_F(ChatControllerTest, SecondMessageIsServedFromTheCache) {
  sendAndWait("Hello");
  const auto first = controller_->lastMetrics();
  ASSERT_TRUE(first.has_value());
  sendAndWait("What is a radix tree?");
  const auto second = controller_->lastMetrics();
  ASSERT_TRUE(second.has_value());
  // The whole first turn (prompt + reply) is a cached prefix of the second.
  EXPECT_GE(second->cachedTokens, first->promptTokens);
  EXPECT_GT(second->computedTokens(), 0);
  EXPECT_TRUE(rc::ui::formatMetrics(*second).contains("cached"));
}

TEST_F(ChatControllerTest, TemperatureOneChatComputesOnlyTheNewTurn) {
  // Token-exact history: sampled replies go back into the history as the ids they
  // were generated as, so each turn computes only the new user message and
  // the template's markers (from the per-reply metrics).
  ChatSampling s = controller_->sampling();
  s.temperature = 1.0;
  s.topK = 0;
  s.topP = 1.0;
  s.minP = 0;
  s.maxTokens = 48;
  controller_->setSampling(s);
  const QString users[] = {"Tell me about the cache.", "Why a tree?", "And the pages?",
                           "What is evicted first?", "One more thing?"};
  std::optional<rc::ui::ReplyMetrics> prev;
  for (int turn = 0; turn < 5; ++turn) {
    sendAndWait(users[turn]);
    const auto m = controller_->lastMetrics();
    ASSERT_TRUE(m.has_value());
    if (prev) {
      EXPECT_EQ(m->cachedTokens, prev->promptTokens + prev->completionTokens - 1)
          << "turn " << turn;
      // The new turn as the tokenizer counts it on its own (markers parsed),
      // plus the last reply token when that reply hit the length limit.
      auto tail = host_->engine()->tokenize(
          "<|end|>\n<|user|>\n" + users[turn].toStdString() + "<|end|>\n<|assistant|>\n", false);
      ASSERT_TRUE(tail.ok());
      const int last = prev->finishReason == QLatin1String("length") ? 1 : 0;
      EXPECT_EQ(m->computedTokens(), static_cast<int>(tail.value().size()) + last)
          << "turn " << turn;
    }
    prev = m;
  }
}

TEST_F(ChatControllerTest, PresetsAreWarmedSoAFirstMessageHits) {
  const QString prompt =
      "You are a concise assistant for questions about data structures. "
      "Answer in one or two sentences.";
  QSignalSpy presets(controller_.get(), &ChatController::presetsChanged);
  QSignalSpy warmed(host_, &EngineHost::warmedUp);
  controller_->savePreset("Concise", prompt);
  ASSERT_TRUE(waitUntil([&] { return presets.count() > 0 && warmed.count() > 0; }));
  ASSERT_EQ(controller_->presets().size(), 1u);
  const qint64 presetId = controller_->presets()[0].id;
  controller_->setDefaultPreset(presetId);
  ASSERT_TRUE(waitUntil([&] { return controller_->defaultPresetId() == presetId; }, 5000));

  controller_->newConversation();
  EXPECT_EQ(controller_->systemPrompt(), prompt);  // new chats start with the default preset
  sendAndWait("Hello");
  const auto m = controller_->lastMetrics();
  ASSERT_TRUE(m.has_value());
  EXPECT_GT(m->cachedTokens, 10);  // the system prompt came from the cache
  const qint64 conv = controller_->currentConversation();
  auto saved = onStore([conv](rc::store::Store& s) { return s.get_conversation(conv).value(); });
  EXPECT_EQ(QString::fromStdString(saved.system_prompt), prompt);
  EXPECT_EQ(saved.preset_id, std::optional<qint64>(presetId));
}

TEST_F(ChatControllerTest, ConversationsCanBeRenamedSearchedAndDeleted) {
  sendAndWait("Hello");
  const qint64 first = controller_->currentConversation();
  controller_->newConversation();
  EXPECT_EQ(controller_->currentConversation(), 0);
  EXPECT_EQ(controller_->chatModel()->rowCount(), 0);
  sendAndWait("What is a radix tree?");
  const qint64 second = controller_->currentConversation();
  ASSERT_NE(first, second);
  auto* list = controller_->conversationList();
  ASSERT_TRUE(waitUntil([&] { return list->rowCount() == 2; }, 5000));
  EXPECT_EQ(list->conversations()[0].id, second);  // most recent first

  controller_->renameConversation(first, "Greetings");
  ASSERT_TRUE(waitUntil(
      [&] {
        return list->rowOf(first) >= 0 &&
               list->conversations()[size_t(list->rowOf(first))].title == "Greetings";
      },
      5000));
  controller_->setSearchText("radix");
  ASSERT_TRUE(waitUntil([&] { return list->rowCount() == 1; }, 5000));
  EXPECT_EQ(list->conversations()[0].id, second);
  controller_->setSearchText("");
  ASSERT_TRUE(waitUntil([&] { return list->rowCount() == 2; }, 5000));

  reloadAfter([&] { controller_->selectConversation(first); });
  EXPECT_EQ(controller_->currentTitle(), "Greetings");
  EXPECT_EQ(rows().size(), 2u);
  controller_->deleteConversation(first);
  ASSERT_TRUE(waitUntil([&] { return list->rowCount() == 1; }, 5000));
  EXPECT_EQ(controller_->currentConversation(), 0);  // the open one went: a new chat
}

TEST_F(ChatControllerTest, ExportWritesMarkdownAndJson) {
  sendAndWait("Hello");
  const qint64 conv = controller_->currentConversation();
  QSignalSpy exported(controller_.get(), &ChatController::exported);
  const QString md = dir_.filePath("chat.md");
  const QString json = dir_.filePath("chat.json");
  controller_->exportConversation(conv, "markdown", md);
  controller_->exportConversation(conv, "json", json);
  ASSERT_TRUE(waitUntil([&] { return exported.count() == 2; }, 5000));
  QFile m(md), j(json);
  ASSERT_TRUE(m.open(QIODevice::ReadOnly));
  ASSERT_TRUE(j.open(QIODevice::ReadOnly));
  const QString mdText = QString::fromUtf8(m.readAll());
  EXPECT_TRUE(mdText.contains("## User")) << mdText.toStdString();
  EXPECT_TRUE(mdText.contains("Hello"));
  EXPECT_TRUE(QString::fromUtf8(j.readAll()).contains("\"radixchat-conversation\""));
}

TEST_F(ChatControllerTest, PromptTokensAndPrefixLookup) {
  sendAndWait("Hello");
  sendAndWait("What is a radix tree?");
  const qint64 reply = rows()[1].id;
  QSignalSpy tokens(controller_.get(), &ChatController::promptTokensReady);
  controller_->requestPromptTokens(reply);
  ASSERT_TRUE(waitUntil([&] { return tokens.count() > 0; }, 10000));
  auto rendered = tokens.at(0).at(1).value<std::vector<int32_t>>();
  ASSERT_GT(rendered.size(), 4u);

  // The first turn's tokens are a prefix of this conversation only.
  controller_->newConversation();
  sendAndWait("Something else entirely");
  QSignalSpy matches(controller_.get(), &ChatController::prefixMatches);
  controller_->findConversationsWithPrefix(rendered);
  ASSERT_TRUE(waitUntil([&] { return matches.count() > 0; }, 10000));
  auto found = matches.at(0).at(0).value<std::vector<rc::ui::PrefixMatch>>();
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].title, "Hello");
  EXPECT_GE(found[0].sharedTokens * 16, found[0].requestedTokens * 15);

  // Opening the match shows that branch.
  reloadAfter([&] { controller_->openBranch(found[0].conversationId, found[0].leafId); });
  EXPECT_EQ(rows().size(), 4u);
}

TEST_F(ChatControllerTest, ASmallContextLeavesOutTheOldestTurns) {
  ChatSampling s = controller_->sampling();
  s.contextLength = 64;
  controller_->setSampling(s);
  QSignalSpy info(controller_.get(), &ChatController::info);
  QSignalSpy finished(controller_.get(), &ChatController::replyFinished);
  QSignalSpy cuts(controller_.get(), &ChatController::contextCut);
  sendAndWait("Hello");
  sendAndWait("What is a radix tree?");
  sendAndWait("And what is a prefix cache?");
  ASSERT_EQ(finished.count(), 3);
  // Each cut carries the prompt sent and how much of it the cache served,
  // for the panel's badge where it leaves the cached path.
  ASSERT_GT(cuts.count(), 0);
  for (const auto& args : cuts) {
    EXPECT_GT(args.at(0).toInt(), 0);
    const auto prompt = args.at(1).value<std::vector<int32_t>>();
    EXPECT_GT(prompt.size(), 4u);
    EXPECT_GE(args.at(2).toInt(), 0);
    EXPECT_LT(args.at(2).toInt(), int(prompt.size()));
  }
  for (const auto& args : finished)
    EXPECT_TRUE(args.at(2).toString().isEmpty()) << args.at(2).toString().toStdString();
  EXPECT_GT(info.count(), 0);  // "the earliest n messages no longer fit ..."
  const auto m = controller_->lastMetrics();
  ASSERT_TRUE(m.has_value());
  EXPECT_LE(m->promptTokens + m->completionTokens, 64);
  EXPECT_GT(m->droppedMessages, 0);  // shown under the reply
  EXPECT_EQ(m->droppedMessages % 2, 0) << "whole turns are dropped";
}

TEST_F(ChatControllerTest, AFailingModelKeepsTheOldOneWorking) {
  rc::Engine* before = host_->engine();
  QSignalSpy failed(host_, &EngineHost::loadFailed);
  rc::ui::ModelRequest bad;
  bad.path = dir_.filePath("not-a-model.gguf");
  QFile f(bad.path);
  ASSERT_TRUE(f.open(QIODevice::WriteOnly));
  f.write("this is not a GGUF file");
  f.close();
  host_->load(bad);
  ASSERT_TRUE(waitUntil([&] { return failed.count() > 0; }, 20000));
  EXPECT_FALSE(failed.at(0).at(0).toString().isEmpty());  // says why
  EXPECT_FALSE(failed.at(0).at(1).toBool());
  EXPECT_EQ(host_->engine(), before);
  EXPECT_FALSE(host_->isLoading());
  EXPECT_GT(sendAndWait("Hello"), 0);
}

// Saved settings are names: a bad one fails the load in the words of the
// setting's parse function (radixchat/engine-config.h), and the old model
// stays.
TEST_F(ChatControllerTest, ABadSavedSettingFailsTheLoadInTheEnginesWords) {
  rc::Engine* before = host_->engine();
  QSignalSpy failed(host_, &EngineHost::loadFailed);
  rc::ui::ModelRequest bad;
  bad.cachePolicy = QStringLiteral("radix16");
  host_->load(bad);
  ASSERT_TRUE(waitUntil([&] { return failed.count() > 0; }, 20000));
  EXPECT_EQ(
      failed.at(0).at(0).toString(),
      QStringLiteral("unknown cache 'radix16' (expected radix, radix-page16, hash16 or off)"));
  EXPECT_EQ(host_->engine(), before);
}

TEST_F(ChatControllerTest, ALoadCanBeCancelled) {
  rc::Engine* before = host_->engine();
  QSignalSpy failed(host_, &EngineHost::loadFailed);
  host_->load({});
  host_->cancelLoad();
  ASSERT_TRUE(waitUntil([&] { return failed.count() > 0; }, 20000));
  EXPECT_TRUE(failed.at(0).at(1).toBool());
  EXPECT_EQ(host_->engine(), before);
}

}  // namespace
