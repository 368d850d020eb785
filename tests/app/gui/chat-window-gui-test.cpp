// The everyday chat in the real window under xvfb-run, with a fresh home:
// the sidebar's search finds words inside messages and opens the
// conversation at the message; file dialogs start in the user's folders
// and a saved picture is confirmed; the window's shortcuts work right after
// a dialog closes (no window manager hands the focus back under Xvfb); the
// first run's introduction is no conversation: what is typed under it
// starts a new chat and the model never sees the introduction.
#include <gtest/gtest.h>
#include <QApplication>
#include <QDir>
#include <QFileDialog>
#include <QLabel>
#include <QLineEdit>
#include <QListView>
#include <QProcess>
#include <QScrollBar>
#include <QSignalSpy>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>
#include <functional>
#include <memory>

#include "app-style.h"
#include "chat-test-util.h"
#include "chat/chat-view.h"
#include "chat/composer.h"
#include "chat/message-widget.h"
#include "get-model-dialog.h"
#include "main-window.h"
#include "panel/cache-panel-state.h"
#include "panel/cache-panel.h"
#include "require-test-model.h"
#include "skip-or-fail.h"
#include "store/store.h"
#include "welcome.h"

using namespace rc::gui;
using rc::test::waitUntil;

namespace {

class ChatWindowGui : public testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(home_.isValid());
    // Nothing of the real home is read or written.
    qputenv("HOME", home_.path().toLocal8Bit());
    for (const char* v : {"XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME"})
      qputenv(v, home_.filePath(QString::fromLatin1(v)).toLocal8Bit());
    for (const char* d : {"XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME"})
      QDir(home_.path()).mkpath(QString::fromLatin1(d));
    // Qt's own dialogs, whatever platform theme is installed: the test
    // drives them.
    QApplication::setAttribute(Qt::AA_DontUseNativeDialogs);
    applyAppStyle(*qApp);
  }
  void TearDown() override {
    window_.reset();
    store_.reset();
  }

  // The history before the app starts, written with the store's own API.
  void seed(const std::function<void(rc::store::Store&)>& fill) {
    auto s = rc::store::Store::open(home_.filePath("chat.db").toStdString());
    ASSERT_TRUE(s.ok()) << s.status().message();
    fill(*s.value());
  }

  // The window as radixchat's main() makes it, shown and active. The test
  // then starts the controller alone (the conversations, no model) or the
  // whole window (the model too).
  void launch() {
    auto store = rc::store::StoreThread::open(home_.filePath("chat.db").toStdString());
    ASSERT_TRUE(store.ok()) << store.status().message();
    store_ = std::move(store.value());
    WindowOptions options;
    // As main() decides it: the introduction on a first run.
    auto first = store_->submit([](rc::store::Store& s) { return take_first_run(s); }).get();
    ASSERT_TRUE(first.ok()) << first.status().message();
    options.welcome = first.value();
    options.settingsFile = home_.filePath("radixchat.conf");
    options.kvDisk.clear();
    window_ = std::make_unique<MainWindow>(store_.get(), options);
    window_->show();
    window_->activateWindow();
    ASSERT_TRUE(QTest::qWaitForWindowActive(window_.get()));
  }

  // Runs `handle` on the next modal QFileDialog (inside its own event loop).
  void onNextFileDialog(std::function<void(QFileDialog*)> handle) {
    auto* timer = new QTimer(window_.get());
    timer->setInterval(20);
    QObject::connect(timer, &QTimer::timeout, timer, [timer, handle] {
      auto* dialog = qobject_cast<QFileDialog*>(QApplication::activeModalWidget());
      if (!dialog || !dialog->isVisible()) return;
      timer->stop();
      timer->deleteLater();
      handle(dialog);
    });
    timer->start();
  }

  // Keys as a user types them: through the X server (xdotool's XTEST), to
  // whichever window has the keyboard there, not posted to a Qt widget.
  static bool xkey(const char* keys) {
    return QProcess::execute(QStringLiteral("xdotool"),
                             {QStringLiteral("key"), QString::fromLatin1(keys)}) == 0;
  }

  QTemporaryDir home_;
  std::unique_ptr<rc::store::StoreThread> store_;
  std::unique_ptr<MainWindow> window_;
};

TEST_F(ChatWindowGui, SearchFindsAWordInAMessageAndJumpsToIt) {
  rc::store::Id older = 0, newer = 0, hit = 0;
  seed([&](rc::store::Store& s) {
    older = s.create_conversation({.title = "Animals"}).value();
    // The word is in an early message; many long ones follow, so the
    // conversation opens scrolled to its end, far from it.
    rc::store::Id parent =
        s.append_message({.conversation_id = older, .content = "hello there"}).value();
    hit = s.append_message({.conversation_id = older,
                            .parent_id = parent,
                            .role = rc::store::Role::assistant,
                            .content = "The quokka lives on Rottnest Island."})
              .value();
    parent = hit;
    for (int i = 0; i < 12; ++i) {
      parent = s.append_message({.conversation_id = older,
                                 .parent_id = parent,
                                 .role = i % 2 ? rc::store::Role::assistant : rc::store::Role::user,
                                 .content = std::string(400, 'x') + " line " + std::to_string(i)})
                   .value();
    }
    newer = s.create_conversation({.title = "Cooking"}).value();
    s.append_message({.conversation_id = newer, .content = "how do I boil an egg?"}).value();
  });
  launch();
  window_->controller()->start();
  ChatController* c = window_->controller();
  ASSERT_TRUE(waitUntil([&] { return c->conversationList()->rowCount() == 2; }, 10000));

  auto* search = window_->findChild<QLineEdit*>(QStringLiteral("searchEdit"));
  ASSERT_NE(search, nullptr);
  search->setFocus();
  QTest::keyClicks(search, QStringLiteral("quokka"));
  QTest::keyClick(search, Qt::Key_Return);

  rc::ui::ChatView* view = window_->chatView();
  auto found = [&]() -> rc::ui::MessageWidget* {
    for (int i = 0; i < view->messageCount(); ++i)
      if (view->messageWidget(i)->isMarkedFound()) return view->messageWidget(i);
    return nullptr;
  };
  ASSERT_TRUE(waitUntil([&] { return c->currentConversation() == older && found(); }, 10000))
      << "Enter did not open the conversation at the message";
  EXPECT_EQ(found()->messageId(), hit);
  EXPECT_EQ(c->conversationList()->rowCount(), 1);  // only the conversation holding it
  QTest::qWait(200);                                // layout and scrolling settle
  EXPECT_FALSE(found()->visibleRegion().isEmpty()) << "the found message is scrolled out of view";
  EXPECT_LT(view->verticalScrollBar()->value(), view->verticalScrollBar()->maximum());
  window_->grab().save(home_.filePath("search.png"));
  window_->grab().save(QStringLiteral(RADIXCHAT_TEST_OUT "/search-jump.png"));

  // A click on a result does the same.
  QTest::keyClick(window_.get(), Qt::Key_N, Qt::ControlModifier);
  ASSERT_TRUE(waitUntil([&] { return c->currentConversation() != older; }, 5000));
  QListView* list = window_->findChild<QListView*>(QStringLiteral("conversationList"));
  const QRect row = list->visualRect(list->model()->index(0, 0));
  QTest::mouseClick(list->viewport(), Qt::LeftButton, {}, row.center());
  ASSERT_TRUE(waitUntil([&] { return c->currentConversation() == older && found(); }, 10000))
      << "a click on the result did not open the conversation at the message";
}

TEST_F(ChatWindowGui, TreeExportStartsInPicturesAndConfirmsTheSave) {
  RC_REQUIRE_TEST_MODEL();  // a tree to export: the bundled model's cache
  ASSERT_TRUE(QDir(home_.path()).mkpath(QStringLiteral("Pictures")));
  launch();
  QSignalSpy ready(window_.get(), &MainWindow::readyForInput);
  window_->start();
  ASSERT_TRUE(waitUntil([&] { return ready.count() > 0; }, 120000));
  QString startDir;
  const QString target = QDir(home_.filePath("Pictures")).filePath(QStringLiteral("tree.svg"));
  onNextFileDialog([&](QFileDialog* d) {
    startDir = d->directory().absolutePath();
    d->selectFile(target);
    QMetaObject::invokeMethod(d, "accept");  // Save
  });
  window_->cachePanel()->state()->replay.export_tree();  // the panel's Export button
  ASSERT_TRUE(waitUntil([&] { return !startDir.isEmpty(); }, 10000)) << "no file dialog";
  EXPECT_EQ(startDir, QDir(home_.filePath("Pictures")).absolutePath());
  ASSERT_TRUE(waitUntil([&] { return QFileInfo::exists(target); }, 10000));
  EXPECT_TRUE(window_->statusBar()->currentMessage().contains(target))
      << window_->statusBar()->currentMessage().toStdString();
}

TEST_F(ChatWindowGui, ShortcutsWorkRightAfterADialogCloses) {
  rc::store::Id conv = 0;
  seed([&](rc::store::Store& s) {
    conv = s.create_conversation({.title = "Notes"}).value();
    s.append_message({.conversation_id = conv, .content = "remember the milk"}).value();
  });
  launch();
  window_->controller()->start();
  ChatController* c = window_->controller();
  ASSERT_TRUE(waitUntil([&] { return c->conversationList()->rowCount() == 1; }, 10000));
  c->selectConversation(conv);
  ASSERT_TRUE(waitUntil([&] { return window_->chatView()->messageCount() == 1; }, 10000));

  if (qEnvironmentVariable("QT_QPA_PLATFORM") != QLatin1String("xcb") ||
      QProcess::execute(QStringLiteral("xdotool"), {QStringLiteral("version")}) != 0)
    RC_SKIP_OR_FAIL("needs an X server and xdotool");

  // Ctrl+E: the export dialog, in Documents or home (no Documents here).
  QString startDir;
  onNextFileDialog([&](QFileDialog* d) {
    startDir = d->directory().absolutePath();
    d->reject();
  });
  ASSERT_TRUE(xkey("ctrl+e"));
  ASSERT_TRUE(waitUntil([&] { return !startDir.isEmpty(); }, 5000)) << "Ctrl+E opened no dialog";
  EXPECT_EQ(startDir, QDir(home_.path()).absolutePath());

  // Right after it closed: Ctrl+N starts a new chat.
  QTest::qWait(200);
  ASSERT_TRUE(xkey("ctrl+n"));
  EXPECT_TRUE(waitUntil([&] { return window_->chatView()->messageCount() == 0; }, 3000))
      << "Ctrl+N was ignored after the dialog closed";

  // Ctrl+Shift+O: Get a model; closing it gives the keys back as well.
  ASSERT_TRUE(xkey("ctrl+shift+o"));
  GetModelDialog* get = nullptr;
  ASSERT_TRUE(waitUntil(
      [&] { return (get = window_->findChild<GetModelDialog*>()) && get->isVisible(); }, 3000))
      << "Ctrl+Shift+O was ignored after the export dialog and Ctrl+N";
  QTest::qWait(200);
  ASSERT_TRUE(xkey("Escape"));  // closes it, as a user does
  ASSERT_TRUE(waitUntil([&] { return !get->isVisible(); }, 3000));
  c->selectConversation(conv);
  ASSERT_TRUE(waitUntil([&] { return window_->chatView()->messageCount() == 1; }, 10000));
  QTest::qWait(200);
  startDir.clear();
  onNextFileDialog([&](QFileDialog* d) {
    startDir = d->directory().absolutePath();
    d->reject();
  });
  ASSERT_TRUE(xkey("ctrl+e"));
  EXPECT_TRUE(waitUntil([&] { return !startDir.isEmpty(); }, 3000))
      << "Ctrl+E was ignored after the Get a model dialog closed";
}

TEST_F(ChatWindowGui, TheWelcomePageIsNotPartOfTheFirstChat) {
  RC_REQUIRE_TEST_MODEL();
  launch();  // a fresh home: the first run
  QSignalSpy ready(window_.get(), &MainWindow::readyForInput);
  window_->start();
  ASSERT_TRUE(waitUntil([&] { return ready.count() > 0; }, 120000));
  ChatController* c = window_->controller();
  auto* page = window_->chatView()->findChild<QLabel*>(QStringLiteral("chatPlaceholder"));
  ASSERT_NE(page, nullptr);
  EXPECT_TRUE(page->isVisible());
  EXPECT_TRUE(page->text().contains("Welcome to RadixChat")) << page->text().toStdString();
  EXPECT_EQ(c->conversationList()->rowCount(), 0);
  window_->grab().save(QStringLiteral(RADIXCHAT_TEST_OUT "/welcome-page.png"));

  QSignalSpy stored(c, &ChatController::replyStored);
  rc::ui::ComposerEdit* edit = window_->composer()->edit();
  edit->setFocus();
  QTest::keyClicks(edit, QStringLiteral("What is a radix tree?"));
  QTest::keyClick(edit, Qt::Key_Return);
  ASSERT_TRUE(waitUntil([&] { return stored.count() > 0; }, 120000));

  EXPECT_NE(c->currentTitle(), "Welcome to RadixChat");
  EXPECT_TRUE(c->currentTitle().startsWith("What is a radix tree"))
      << c->currentTitle().toStdString();
  ASSERT_EQ(c->chatModel()->rows().size(), 2u);  // the question and its reply, nothing else
  EXPECT_EQ(c->chatModel()->rows()[0].text, "What is a radix tree?");
  EXPECT_FALSE(page->isVisible());

  // The prompt the reply was written for holds the question, not the page.
  std::vector<int32_t> tokens;
  QObject::connect(c, &ChatController::promptTokensReady, window_.get(),
                   [&](qint64, const std::vector<int32_t>& t) { tokens = t; });
  c->requestPromptTokens(c->chatModel()->rows()[1].id);
  ASSERT_TRUE(waitUntil([&] { return !tokens.empty(); }, 30000));
  const std::string prompt = window_->engineHost()->engine()->detokenize(tokens);
  EXPECT_NE(prompt.find("What is a radix tree?"), std::string::npos) << prompt;
  EXPECT_EQ(prompt.find("Welcome"), std::string::npos) << prompt;
  EXPECT_EQ(prompt.find("KV cache"), std::string::npos) << prompt;
  // Nor did it ever reach the cache.
  for (const rc::CacheNodeInfo& n : window_->engineHost()->engine()->cache_snapshot().nodes)
    EXPECT_EQ(window_->engineHost()->engine()->detokenize(n.tokens).find("KV cache"),
              std::string::npos);
}

}  // namespace
