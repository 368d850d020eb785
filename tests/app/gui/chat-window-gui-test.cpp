// The everyday chat in the real window under xvfb-run, with a fresh home:
// the sidebar's search finds words inside messages and opens the
// conversation at the message.
#include <gtest/gtest.h>
#include <QApplication>
#include <QDir>
#include <QLineEdit>
#include <QListView>
#include <QScrollBar>
#include <QTemporaryDir>
#include <QTest>
#include <functional>
#include <memory>

#include "app-style.h"
#include "chat-test-util.h"
#include "chat/chat-view.h"
#include "chat/message-widget.h"
#include "main-window.h"
#include "store/store.h"

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
    options.settingsFile = home_.filePath("radixchat.conf");
    options.kvDisk.clear();
    window_ = std::make_unique<MainWindow>(store_.get(), options);
    window_->show();
    window_->activateWindow();
    ASSERT_TRUE(QTest::qWaitForWindowActive(window_.get()));
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
  QTest::qWait(200);                                 // layout and scrolling settle
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

}  // namespace
