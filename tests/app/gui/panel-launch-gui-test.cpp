// The cache panel across launches, in the real window under xvfb-run with a
// fresh home: the panel shows on the first launch with its View menu item
// ticked, quitting with Ctrl+Q keeps it for the next launch, and only the
// user's own F9 hides it for good. The bar between the tree and the tabs
// moves when dragged and is where the user left it on the next launch.
#include <gtest/gtest.h>
#include <QAction>
#include <QApplication>
#include <QTemporaryDir>
#include <QTest>
#include <memory>

#include "chat-test-util.h"
#include "main-window.h"
#include "panel/cache-panel-gl.h"
#include "panel/cache-panel-state.h"
#include "panel/cache-panel.h"
#include "skip-or-fail.h"

using namespace rc::gui;

namespace {

class PanelVisibilityTest : public testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(home_.isValid());
    // Nothing of the real home is read or written: this is a first launch.
    qputenv("HOME", home_.path().toLocal8Bit());
    qputenv("XDG_CONFIG_HOME", home_.filePath(".config").toLocal8Bit());
    auto store = rc::store::StoreThread::open(home_.filePath("chat.db").toStdString());
    ASSERT_TRUE(store.ok()) << store.status().message();
    store_ = std::move(store.value());
  }

  // A launch: the window as radixchat's main() makes it, shown and active
  // (shortcuts need the active window; Xvfb has no window manager).
  std::unique_ptr<MainWindow> launch() {
    WindowOptions options;
    options.settingsFile = home_.filePath(".config/RadixChat/radixchat.conf");
    auto w = std::make_unique<MainWindow>(store_.get(), options);
    w->show();
    w->activateWindow();
    EXPECT_TRUE(QTest::qWaitForWindowActive(w.get()));
    return w;
  }

  static QAction* panelAction(MainWindow* w) {
    for (QAction* a : w->findChildren<QAction*>())
      if (a->text() == MainWindow::tr("&Cache panel")) return a;
    return nullptr;
  }

  // Ctrl+Q, as a user quits.
  static void quit(std::unique_ptr<MainWindow>& w) {
    QTest::keyClick(w.get(), Qt::Key_Q, Qt::ControlModifier);
    EXPECT_TRUE(rc::test::waitUntil([&] { return !w->isVisible(); }, 5000))
        << "Ctrl+Q did not quit";
    w.reset();
  }

  // The bar's top edge once the panel has drawn it (-1: never drawn).
  static float split_top(MainWindow* w) {
    const auto& bar = w->cachePanel()->state()->frame.split_box;
    if (!rc::test::waitUntil([&] { return bar.visible; }, 10000)) return -1;
    QTest::qWait(100);  // a few more frames: the layout settles
    return bar.min.y;
  }

  QTemporaryDir home_;
  std::unique_ptr<rc::store::StoreThread> store_;
};

TEST_F(PanelVisibilityTest, PanelStaysAfterQuitAndRelaunch) {
  auto w = launch();
  QAction* item = panelAction(w.get());
  ASSERT_NE(item, nullptr);
  EXPECT_TRUE(w->cachePanel()->isVisible()) << "first launch: no panel";
  EXPECT_TRUE(item->isChecked()) << "first launch: the panel shows but its menu item is unticked";
  quit(w);

  w = launch();
  item = panelAction(w.get());
  ASSERT_NE(item, nullptr);
  EXPECT_TRUE(w->cachePanel()->isVisible()) << "the panel vanished on the second launch";
  EXPECT_TRUE(item->isChecked());
  quit(w);
}

TEST_F(PanelVisibilityTest, F9HidesItForTheNextLaunchAndTheTickFollows) {
  auto w = launch();
  QTest::keyClick(w.get(), Qt::Key_F9);
  EXPECT_FALSE(w->cachePanel()->isVisible()) << "F9 did not hide the panel";
  EXPECT_FALSE(panelAction(w.get())->isChecked());
  quit(w);

  w = launch();
  EXPECT_FALSE(w->cachePanel()->isVisible()) << "the user's choice was not kept";
  EXPECT_FALSE(panelAction(w.get())->isChecked());
  QTest::keyClick(w.get(), Qt::Key_F9);
  EXPECT_TRUE(w->cachePanel()->isVisible());
  EXPECT_TRUE(panelAction(w.get())->isChecked());
  quit(w);

  w = launch();
  EXPECT_TRUE(w->cachePanel()->isVisible());
  EXPECT_TRUE(panelAction(w.get())->isChecked());
  quit(w);
}

TEST_F(PanelVisibilityTest, TheSplitBarMovesWhenDraggedAndIsRestored) {
  auto w = launch();
  QWidget* gl = w->cachePanel()->glWidget();
  if (!gl) RC_SKIP_OR_FAIL("no OpenGL: " << w->cachePanel()->unavailableReason().toStdString());
  const float top = split_top(w.get());
  ASSERT_GT(top, 0) << "the panel drew no bar";
  const auto& bar = w->cachePanel()->state()->frame.split_box;
  const QPoint grab(int((bar.min.x + bar.max.x) / 2), int((bar.min.y + bar.max.y) / 2));
  // Up by 150 px, a frame's worth at a time: the tabs get taller.
  QTest::mouseMove(gl, grab);
  QTest::qWait(60);
  QTest::mousePress(gl, Qt::LeftButton, {}, grab);
  QTest::qWait(60);
  for (int i = 1; i <= 10; ++i) {
    QTest::mouseMove(gl, grab - QPoint(0, 15 * i));
    QTest::qWait(40);
  }
  QTest::mouseRelease(gl, Qt::LeftButton, {}, grab - QPoint(0, 150));
  QTest::qWait(100);
  const float moved = split_top(w.get());
  EXPECT_NEAR(moved, top - 150, 8) << "the bar did not follow the drag";
  quit(w);

  w = launch();
  EXPECT_NEAR(split_top(w.get()), moved, 2) << "the bar was not restored";
  quit(w);
}

}  // namespace
