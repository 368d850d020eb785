// Lesson mode in the real app window (run under xvfb-run: the cache panel
// needs GL): every demo runs to its end in its own engine, then an ordinary
// message, typed and sent like a user would, succeeds on the user's engine
// with the user's pool, and the panel is back on the user's cache.
#include <gtest/gtest.h>

#include <QApplication>
#include <QSignalSpy>
#include <QSplitter>
#include <QTemporaryDir>
#include <QTest>
#include <filesystem>

#include "app-style.h"
#include "chat/composer.h"
#include "chat/engine-host.h"
#include "main-window.h"
#include "panel/cache-panel-state.h"
#include "panel/cache-panel.h"
#include "radixchat/engine.h"
#include "skip-or-fail.h"
#include "store/store-thread.h"
#include "test-paths.h"

namespace {

using rc::test::test_model_path;

TEST(LessonGui, EveryDemoThenAnOrdinaryMessageUsesTheUsersPool) {
  if (!std::filesystem::exists(test_model_path()))
    RC_SKIP_OR_FAIL("no model at " << test_model_path());
  if (QGuiApplication::platformName() == "offscreen")
    RC_SKIP_OR_FAIL("needs a display (run under xvfb-run)");
  QTemporaryDir dir;
  ASSERT_TRUE(dir.isValid());
  auto store = rc::store::StoreThread::open(dir.filePath("chat.db").toStdString());
  ASSERT_TRUE(store.ok()) << store.status().message();
  rc::gui::applyAppStyle(*qApp);
  rc::gui::WindowOptions options;
  options.settingsFile = dir.filePath("settings.ini");
  auto window = std::make_unique<rc::gui::MainWindow>(store.value().get(), options);
  window->show();
  ASSERT_TRUE(QTest::qWaitForWindowExposed(window.get()));
  QSignalSpy ready(window.get(), &rc::gui::MainWindow::readyForInput);
  window->start();
  ASSERT_TRUE(QTest::qWaitFor([&] { return ready.count() > 0; }, 120000));

  rc::ui::CachePanel* panel = window->cachePanel();
  ASSERT_NE(panel, nullptr);
  if (!panel->hasGl())
    RC_SKIP_OR_FAIL("the panel has no GL: " << panel->unavailableReason().toStdString());
  rc::ui::CachePanelState& st = *panel->state();
  rc::Engine* user = window->engineHost()->engine();
  ASSERT_NE(user, nullptr);
  const int64_t pool = user->model_info().kv_pool_tokens;
  // Saved system prompts are warmed into the user's cache at start: let
  // that finish, then count.
  QTest::qWait(500);
  ASSERT_TRUE(QTest::qWaitFor(
      [&] {
        const rc::EngineStats s = user->stats();
        return s.requests_running + s.requests_waiting == 0;
      },
      60000));
  const uint64_t before = user->stats().requests_finished;
  st.lesson.demo.lead_seconds = 0.05;
  st.lesson.demo.seconds_per_step = 0.1;

  // The panel gets half the window while a lesson shows, then its width back.
  auto* splitter = window->findChild<QSplitter*>();
  ASSERT_NE(splitter, nullptr);
  const int panelWidth = panel->width();

  const auto& all = rc::ui::panel::demo_scenarios();
  for (size_t i = 0; i < all.size(); ++i) {
    SCOPED_TRACE(all[i].name);
    ASSERT_TRUE(st.start_lesson(i, 0));
    ASSERT_TRUE(
        QTest::qWaitFor([&] { return st.lesson_shown() && st.lesson.demo.running(); }, 60000))
        << st.lesson.error;
    ASSERT_TRUE(QTest::qWaitFor([&] { return st.lesson.demo.finished(); }, 240000))
        << st.lesson.demo.caption();
    for (const rc::ui::panel::DemoStepResult& r : st.lesson.demo.results()) {
      EXPECT_TRUE(r.finished);
      EXPECT_EQ(r.error, "");
      EXPECT_GT(r.metrics.prompt_tokens, 0);
      EXPECT_EQ(r.metrics.cached_tokens + r.metrics.computed_tokens, r.metrics.prompt_tokens);
    }
    EXPECT_GT(panel->width(), panelWidth + 100);
    // Nothing reached the user's engine.
    EXPECT_EQ(window->engineHost()->engine(), user);
    EXPECT_EQ(user->stats().requests_finished, before);
  }
  EXPECT_TRUE(st.lesson_shown()) << "the last demo's tree stays until the user chats";

  QSignalSpy finished(window->controller(), &rc::gui::ChatController::replyFinished);
  rc::ui::ComposerEdit* edit = window->composer()->edit();
  edit->setFocus();
  QTest::keyClicks(edit, "Hello again");
  QTest::keyClick(edit, Qt::Key_Return);
  ASSERT_TRUE(QTest::qWaitFor([&] { return finished.count() > 0; }, 120000));
  EXPECT_EQ(finished.at(0).at(2).toString(), QString()) << "the reply failed";
  EXPECT_EQ(window->engineHost()->engine(), user) << "the engine was replaced";
  EXPECT_EQ(user->model_info().kv_pool_tokens, pool);
  EXPECT_EQ(user->stats().requests_finished, before + 1);
  ASSERT_TRUE(QTest::qWaitFor([&] { return !st.lesson_shown(); }, 10000));
  EXPECT_EQ(st.feed()->engine(), user);
  EXPECT_EQ(st.lesson.host.engine(), nullptr);
  EXPECT_TRUE(QTest::qWaitFor([&] { return panel->width() == panelWidth; }, 5000))
      << panel->width() << " != " << panelWidth;
  window.reset();
}

}  // namespace

int main(int argc, char** argv) {
  if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication app(argc, argv);
  testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
