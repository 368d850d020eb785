// The main window driven like a user would, in process (offscreen: the
// cache panel shows its placeholder): type and press Enter, watch the reply
// stream, Regenerate, flip the branch picker, edit a question, Esc to stop,
// Ctrl+N. Saves screenshots next to the test binary for a look.
#include <gtest/gtest.h>
#include <QAction>
#include <QApplication>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollBar>
#include <QSettings>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QToolButton>

#include "app-style.h"
#include "chat-test-util.h"
#include "chat/chat-view.h"
#include "chat/composer.h"
#include "chat/conversation-list-model.h"
#include "chat/engine-host.h"
#include "chat/markdown-view.h"
#include "chat/message-widget.h"
#include "main-window.h"
#include "panel/cache-panel-state.h"
#include "panel/cache-panel.h"
#include "require-test-model.h"

using namespace rc::gui;
using rc::test::waitUntil;

namespace {

QToolButton* action(QWidget* w, const QString& text) {
  for (QToolButton* b : w->findChildren<QToolButton*>()) {
    if (b->text() == text && !b->isHidden()) return b;
  }
  return nullptr;
}

class MainWindowTest : public testing::Test {
 protected:
  void SetUp() override {
    RC_REQUIRE_TEST_MODEL();
    ASSERT_TRUE(dir_.isValid());
    auto store = rc::store::StoreThread::open(dir_.filePath("chat.db").toStdString());
    ASSERT_TRUE(store.ok()) << store.status().message();
    store_ = std::move(store.value());
    rc::gui::applyAppStyle(*qApp);  // as radixchat's main() does
    WindowOptions options;
    options.settingsFile = dir_.filePath("settings.ini");
    window_ = std::make_unique<MainWindow>(store_.get(), options);
    window_->show();
    // Shortcuts (Esc, Ctrl+N) need the active window; under Xvfb there is
    // no window manager to activate it.
    window_->activateWindow();
    EXPECT_TRUE(QTest::qWaitForWindowActive(window_.get()));
    QSignalSpy ready(window_.get(), &MainWindow::readyForInput);
    window_->start();
    ASSERT_TRUE(waitUntil([&] { return ready.count() > 0; }, 120000));
    ChatSampling s;
    s.temperature = 0.8;  // regenerate should usually differ
    s.maxTokens = 80;     // several lines
    window_->controller()->setSampling(s);
  }
  void TearDown() override {
    window_.reset();
    store_.reset();
  }

  void typeAndSend(const QString& text) {
    QSignalSpy stored(window_->controller(), &ChatController::replyStored);
    rc::ui::ComposerEdit* edit = window_->composer()->edit();
    edit->setFocus();
    QTest::keyClicks(edit, text);
    QTest::keyClick(edit, Qt::Key_Return);
    ASSERT_TRUE(waitUntil([&] { return stored.count() > 0; }));
    expectWholeTextsShown();
  }

  // Every bubble shows all of its text: no bubble scrolls inside.
  void expectWholeTextsShown() {
    QTest::qWait(80);
    for (rc::ui::MarkdownView* body : window_->chatView()->findChildren<rc::ui::MarkdownView*>()) {
      if (!body->isVisible()) continue;
      EXPECT_GE(body->viewport()->height() + 1, static_cast<int>(body->document()->size().height()))
          << body->toPlainText().toStdString();
      EXPECT_EQ(body->verticalScrollBar()->value(), 0);
    }
  }

  void save(const QString& name) {
    QTest::qWait(100);
    window_->grab().save(QStringLiteral(RADIXCHAT_TEST_OUT "/") + name);
  }

  QTemporaryDir dir_;
  std::unique_ptr<rc::store::StoreThread> store_;
  std::unique_ptr<MainWindow> window_;
};

// A new chat starts from the loaded model's recommended sampling (the
// bundled model's general.sampling.*), and the sampling dialog says so.
TEST_F(MainWindowTest, ANewChatStartsFromTheModelsRecommendedSampling) {
  ChatController* c = window_->controller();
  const ChatSampling d = c->defaultSampling();
  EXPECT_DOUBLE_EQ(d.temperature, 0.5);
  EXPECT_EQ(d.topK, 40);
  EXPECT_DOUBLE_EQ(d.topP, 0.95);
  EXPECT_DOUBLE_EQ(d.minP, 0.1);
  EXPECT_TRUE(c->defaultSamplingNote().contains(QStringLiteral("temperature 0.5")))
      << c->defaultSamplingNote().toStdString();
  c->newConversation();
  EXPECT_EQ(c->sampling(), d);
}

TEST_F(MainWindowTest, ChatRegenerateBranchesAndEdit) {
  rc::ui::ChatView* view = window_->chatView();
  typeAndSend("Hello");
  ASSERT_EQ(view->messageCount(), 2);
  EXPECT_TRUE(window_->metricsText().contains("tok/s"));
  typeAndSend("What is a radix tree?");
  ASSERT_EQ(view->messageCount(), 4);
  // The second message reused the first turn from the cache.
  EXPECT_FALSE(window_->metricsText().contains(" 0 cached"))
      << window_->metricsText().toStdString();

  // Regenerate the last reply: a second branch, picker shows 2/2.
  {
    QSignalSpy stored(window_->controller(), &ChatController::replyStored);
    QToolButton* regen = action(view->messageWidget(3), "Regenerate");
    ASSERT_NE(regen, nullptr);
    regen->click();
    ASSERT_TRUE(waitUntil([&] { return stored.count() > 0; }));
  }
  ASSERT_EQ(view->messageCount(), 4);
  auto* label = view->messageWidget(3)->findChild<QLabel*>("branchLabel");
  ASSERT_TRUE(label && !label->isHidden());
  EXPECT_EQ(label->text(), "2/2");
  save("main-window-branches.png");

  // "‹" shows the first reply again.
  {
    QSignalSpy changed(window_->controller(), &ChatController::conversationChanged);
    QToolButton* prev = action(view->messageWidget(3), "‹");
    ASSERT_NE(prev, nullptr);
    prev->click();
    ASSERT_TRUE(waitUntil([&] { return changed.count() > 0; }, 10000));
  }
  EXPECT_EQ(view->messageWidget(3)->findChild<QLabel*>("branchLabel")->text(), "1/2");

  // Edit the second question in place: a new branch from there.
  {
    QSignalSpy stored(window_->controller(), &ChatController::replyStored);
    rc::ui::MessageWidget* question = view->messageWidget(2);
    QToolButton* edit = action(question, "Edit");
    ASSERT_NE(edit, nullptr);
    edit->click();
    auto* editor = question->findChild<QPlainTextEdit*>("editText");
    ASSERT_NE(editor, nullptr);
    editor->setPlainText("What is a prefix cache?");
    for (QPushButton* b : question->findChildren<QPushButton*>()) {
      if (b->text() == "Send as new branch") b->click();
    }
    ASSERT_TRUE(waitUntil([&] { return stored.count() > 0; }));
  }
  ASSERT_EQ(view->messageCount(), 4);
  EXPECT_EQ(view->messageWidget(2)->markdown(), "What is a prefix cache?");
  EXPECT_EQ(view->messageWidget(2)->findChild<QLabel*>("branchLabel")->text(), "2/2");
  save("main-window-edit.png");
}

TEST_F(MainWindowTest, EscStopsAndCtrlNStartsANewChat) {
  ChatSampling s = window_->controller()->sampling();
  s.maxTokens = 600;
  window_->controller()->setSampling(s);
  QSignalSpy finished(window_->controller(), &ChatController::replyFinished);
  // Esc as soon as the reply starts.
  QObject::connect(window_->controller(), &ChatController::generatingChanged, window_.get(),
                   [this](bool on) {
                     if (on) QTest::keyClick(window_->composer()->edit(), Qt::Key_Escape);
                   });
  typeAndSend("Tell me a long story.");
  ASSERT_EQ(finished.count(), 1);
  EXPECT_EQ(finished.at(0).at(1).value<rc::ui::ReplyMetrics>().finishReason, "cancelled");

  QTest::keyClick(window_.get(), Qt::Key_N, Qt::ControlModifier);
  EXPECT_TRUE(waitUntil([&] { return window_->controller()->currentConversation() == 0; }, 5000));
  EXPECT_EQ(window_->chatView()->messageCount(), 0);
}

// Model > Drafted decoding: saved with the other settings, the engine
// reloaded with speculate "tree"; a regenerated reply (greedy, so the cached
// reply is the draft) says in its footer how many drafted tokens were kept.
TEST_F(MainWindowTest, DraftedDecodingSwitchIsSavedAndShownInTheFooter) {
  rc::ui::ReplyMetrics m;
  EXPECT_FALSE(rc::ui::formatMetrics(m).contains("drafted"));
  // A first reply's prompt-lookup draft that kept nothing is not news.
  m.draftedTokens = 8;
  EXPECT_FALSE(rc::ui::formatMetrics(m).contains("draft"));
  m.draftedTokens = 12;
  m.acceptedTokens = 9;
  EXPECT_TRUE(rc::ui::formatMetrics(m).endsWith("9 of 12 drafted tokens kept"));

  QAction* drafted = nullptr;
  for (QAction* a : window_->findChildren<QAction*>())
    if (a->text() == QLatin1String("&Drafted decoding")) drafted = a;
  ASSERT_NE(drafted, nullptr);
  // On by default; switched off and on again, each saved and reloaded.
  EXPECT_TRUE(drafted->isChecked());
  EXPECT_TRUE(window_->engineHost()->modelRequest().drafted);
  QSignalSpy ready(window_->engineHost(), &rc::ui::EngineHost::modelReady);
  for (const bool on : {false, true}) {
    const int before = ready.count();
    drafted->trigger();
    ASSERT_TRUE(waitUntil([&] { return ready.count() > before; }, 120000));
    EXPECT_EQ(window_->engineHost()->modelRequest().drafted, on);
    QSettings saved(dir_.filePath("settings.ini"), QSettings::IniFormat);
    EXPECT_EQ(saved.value("models/drafted").toBool(), on);
  }

  ChatSampling s = window_->controller()->sampling();
  s.temperature = 0;
  s.maxTokens = 40;
  window_->controller()->setSampling(s);
  typeAndSend("What is a radix tree?");
  QSignalSpy finished(window_->controller(), &ChatController::replyFinished);
  QToolButton* regen = action(window_->chatView()->messageWidget(1), "Regenerate");
  ASSERT_NE(regen, nullptr);
  regen->click();
  ASSERT_TRUE(waitUntil([&] { return finished.count() > 0; }));
  const auto metrics = finished.at(0).at(1).value<rc::ui::ReplyMetrics>();
  EXPECT_GT(metrics.draftedTokens, 0);
  EXPECT_GT(metrics.acceptedTokens, 0);
  EXPECT_TRUE(window_->metricsText().contains("drafted tokens kept"))
      << window_->metricsText().toStdString();
}

}  // namespace

namespace {

TEST_F(MainWindowTest, CachePanelRequestsAreServed) {
  typeAndSend("Hello");
  MainWindow* w = window_.get();
  rc::ui::CachePanel* panel = w->cachePanel();
  ASSERT_NE(panel, nullptr);

  // "Cache" on a reply: its prompt tokens go to the panel (locateTokens).
  QSignalSpy tokens(w->controller(), &ChatController::promptTokensReady);
  QToolButton* locate = action(w->chatView()->messageWidget(1), "Cache");
  ASSERT_NE(locate, nullptr);
  locate->click();
  ASSERT_TRUE(waitUntil([&] { return tokens.count() > 0; }, 10000));
  const auto path = tokens.at(0).at(1).value<std::vector<int32_t>>();
  ASSERT_FALSE(path.empty());
  // ... and the panel explains why its request missed, from the
  // reply's own metrics: its prompt is the path's first promptTokens.
  const rc::ui::CachePanelState& st = *panel->state();
  const auto& rows = w->controller()->chatModel()->rows();
  ASSERT_GE(rows.size(), 2u);
  ASSERT_TRUE(rows[1].metrics.has_value());
  EXPECT_EQ(st.tree.located_request.prompt_tokens, rows[1].metrics->promptTokens);
  EXPECT_EQ(st.tree.located_request.cached_tokens, rows[1].metrics->cachedTokens);
  ASSERT_TRUE(st.tree.live_miss_valid);
  ASSERT_TRUE(st.tree.live_miss.ok) << st.tree.live_miss.error;
  EXPECT_EQ(st.tree.live_miss.prompt_tokens, rows[1].metrics->promptTokens);
  EXPECT_EQ(st.tree.live_miss.matched_tokens, rows[1].metrics->cachedTokens);

  // The panel asks which conversations use a node: the list is filtered.
  typeAndSend("What is a radix tree?");
  QTest::keyClick(w, Qt::Key_N, Qt::ControlModifier);
  typeAndSend("Another topic");
  QSignalSpy matches(w->controller(), &ChatController::prefixMatches);
  emit panel->conversationsForPrefixRequested(path);
  ASSERT_TRUE(waitUntil([&] { return matches.count() > 0; }, 10000));
  ASSERT_TRUE(
      waitUntil([&] { return w->controller()->conversationList()->rowCount() == 1; }, 5000));
  EXPECT_EQ(w->controller()->conversationList()->conversations()[0].title, "Hello");

  // The panel changes the cache policy: a new engine, same model, new cache.
  QSignalSpy ready(w->engineHost(), &rc::ui::EngineHost::modelReady);
  emit panel->cacheSettingsRequested("hash16", 8192);
  ASSERT_TRUE(waitUntil([&] { return ready.count() > 0; }, 60000));
  EXPECT_EQ(w->engineHost()->model().cachePolicy, "hash16");
  EXPECT_GE(w->engineHost()->model().poolTokens, 8192);
  typeAndSend("Still works?");
}

}  // namespace
