// Lesson mode in the real app window (run under xvfb-run: the cache panel
// needs GL): every demo runs to its end in its own engine, then an ordinary
// message, typed and sent like a user would, succeeds on the user's engine
// with the user's pool, and the panel is back on the user's cache. At
// 1024x700, each step's caption lies above the nodes it describes, never
// over them.
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
#include "panel/cache-panel-gl.h"
#include "panel/cache-panel-state.h"
#include "panel/cache-panel.h"
#include "radixchat/engine.h"
#include "skip-or-fail.h"
#include "store/store-thread.h"
#include "test-paths.h"

namespace {

using rc::test::test_model_path;

// The app window on a fresh home, started on the bundled model, with GL.
class LessonGui : public testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(test_model_path()))
      RC_SKIP_OR_FAIL("no model at " << test_model_path());
    if (QGuiApplication::platformName() == "offscreen")
      RC_SKIP_OR_FAIL("needs a display (run under xvfb-run)");
    ASSERT_TRUE(dir_.isValid());
    auto store = rc::store::StoreThread::open(dir_.filePath("chat.db").toStdString());
    ASSERT_TRUE(store.ok()) << store.status().message();
    store_ = std::move(store.value());
    rc::gui::applyAppStyle(*qApp);
    rc::gui::WindowOptions options;
    options.settingsFile = dir_.filePath("settings.ini");
    window_ = std::make_unique<rc::gui::MainWindow>(store_.get(), options);
    window_->show();
    ASSERT_TRUE(QTest::qWaitForWindowExposed(window_.get()));
    QSignalSpy ready(window_.get(), &rc::gui::MainWindow::readyForInput);
    window_->start();
    ASSERT_TRUE(QTest::qWaitFor([&] { return ready.count() > 0; }, 120000));
    panel_ = window_->cachePanel();
    ASSERT_NE(panel_, nullptr);
    if (!panel_->hasGl())
      RC_SKIP_OR_FAIL("the panel has no GL: " << panel_->unavailableReason().toStdString());
  }
  void TearDown() override {
    window_.reset();
    store_.reset();
  }

  QTemporaryDir dir_;
  std::unique_ptr<rc::store::StoreThread> store_;
  std::unique_ptr<rc::gui::MainWindow> window_;
  rc::ui::CachePanel* panel_ = nullptr;
};

// Lets the panel paint `n` more frames.
bool paint_frames(rc::ui::CachePanelGl* gl, int n) {
  const quint64 target = gl->frames() + quint64(n);
  return QTest::qWaitFor(
      [&] {
        gl->update();
        return gl->frames() >= target;
      },
      20000);
}

TEST_F(LessonGui, AtTheSmallestSizeACaptionNeverCoversItsNodes) {
  window_->resize(1024, 700);
  rc::ui::CachePanelState& st = *panel_->state();
  st.lesson.demo.by_hand = true;
  st.lesson.demo.lead_seconds = 0.05;
  ASSERT_TRUE(st.start_lesson(0, 0));  // Shared system prompt: one prefix, three children
  ASSERT_TRUE(QTest::qWaitFor([&] { return st.lesson_shown() && st.lesson.demo.running(); }, 60000))
      << st.lesson.error;
  for (size_t step = 0; step < st.lesson.demo.steps(); ++step) {
    SCOPED_TRACE("step " + std::to_string(step + 1));
    ASSERT_TRUE(QTest::qWaitFor([&] { return st.lesson.demo.can_advance(); }, 60000));
    st.lesson_next(0);
    ASSERT_TRUE(QTest::qWaitFor(
        [&] {
          return paint_frames(panel_->glWidget(), 1) && st.lesson.demo.results()[step].finished &&
                 st.source.pending.empty() && !st.tree.view.busy();
        },
        120000));
    ASSERT_TRUE(paint_frames(panel_->glWidget(), 4));
    const auto& cap = st.frame.caption_box;
    ASSERT_TRUE(cap.visible) << "no caption over the tree";
    const rc::ui::panel::TreeLayout& L = st.tree.layout(1e9);
    const ImVec2 c0 = st.tree.view.canvas_min(), c1 = st.tree.view.canvas_max();
    int below = 0;
    for (const rc::ui::panel::LaidNode& ln : L.nodes) {
      float x, y, w, h;
      if (ln.id == rc::kNoNode || !st.tree.view.world_box(ln.id, L, &x, &y, &w, &h)) continue;
      const ImVec2 p0 = st.tree.view.to_screen(x, y), p1 = st.tree.view.to_screen(x + w, y + h);
      if (p1.x <= c0.x || p0.x >= c1.x) continue;  // left or right of the canvas: a pan away
      EXPECT_FALSE(p0.y < cap.max.y && cap.min.y < p1.y && p0.x < cap.max.x && cap.min.x < p1.x)
          << "node #" << ln.id << " at y " << p0.y << "-" << p1.y << " is under the caption (y "
          << cap.min.y << "-" << cap.max.y << ")";
      below += p0.y >= cap.max.y;
    }
    EXPECT_GT(below, 0) << "no node shows below the caption";
    // The newest node is in the tree's area.
    float x, y, w, h;
    const rc::NodeId newest = st.tree.model.last_insert_node();
    ASSERT_TRUE(st.tree.view.world_box(newest, L, &x, &y, &w, &h));
    const ImVec2 n0 = st.tree.view.to_screen(x, y), n1 = st.tree.view.to_screen(x + w, y + h);
    EXPECT_GE(n0.y, st.tree.view.tree_area_top() - 0.5f);
    EXPECT_LE(n1.y, st.tree.view.tree_area_bottom() + 0.5f);
    EXPECT_LE(n1.x, c1.x + 0.5f);
  }
  window_->grab().save(QStringLiteral(RADIXCHAT_BINARY_DIR "/tests/ui/panel/lesson-1024x700.png"));
}

TEST_F(LessonGui, EveryDemoThenAnOrdinaryMessageUsesTheUsersPool) {
  auto& window = window_;
  rc::ui::CachePanel* panel = panel_;
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
}

}  // namespace

int main(int argc, char** argv) {
  if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication app(argc, argv);
  testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
