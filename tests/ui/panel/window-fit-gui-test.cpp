// The cache panel inside the real app window at the sizes a class uses,
// run under xvfb-run (the panel needs GL): at 1024x700,
// 1280x800 and 1440x900 the panel widget lies inside the window (Qt
// geometry), and every ImGui window and item of every tab lies inside the
// panel (the panel's own fit measure, panel-fit.h), also at a projector's
// text scale; a conversation title of any length leaves the panel's width
// alone. ScreenFit runs on screens of 1024x700, 1366x768 and 1920x1080
// (tests/ui/panel/CMakeLists.txt): the window opens inside the screen, and
// in chat, drafted (a reply drafted from the cache: the header's drafts line),
// lesson, recording and attach mode the composer, Send, every tab's whole label, Next
// step and the tree area lie inside it, the tree taking at least half the
// panel's height; the Attach popup's labels and messages lie whole inside
// it. Screenshots land next to the test binary for a look. main() is the Qt suites'
// (tests/ui/chat/qt-test-main.cpp).
#include <gtest/gtest.h>

#include <QApplication>
#include <QPushButton>
#include <QScreen>
#include <QSettings>
#include <QSignalSpy>
#include <QSplitter>
#include <QTemporaryDir>
#include <QTest>
#include <QToolButton>
#include <cstdio>
#include <filesystem>

#include "app-style.h"
#include "chat/composer.h"
#include "chat/engine-host.h"
#include "main-window.h"
#include "panel/cache-panel-gl.h"
#include "panel/cache-panel-state.h"
#include "panel/cache-panel.h"
#include "recording/recorder.h"
#include "skip-or-fail.h"
#include "store/store-thread.h"
#include "test-paths.h"

namespace {

using rc::test::test_model_path;

// Lets the panel paint `n` more frames (it paints on its own timer).
bool paint_frames(rc::ui::CachePanelGl* gl, int n) {
  const quint64 target = gl->frames() + quint64(n);
  return QTest::qWaitFor(
      [&] {
        gl->update();
        return gl->frames() >= target;
      },
      20000);
}

// A remote cache with nothing in it: the panel in attach mode.
class EmptyRemoteFeed : public rc::ui::panel::CacheFeed {
 public:
  rc::CacheSnapshot snapshot() override {
    rc::CacheSnapshot s;
    s.nodes.push_back(rc::CacheNodeInfo{});
    return s;
  }
  std::vector<rc::CacheEvent> drain(bool* overflowed) override {
    if (overflowed) *overflowed = false;
    return {};
  }
  rc::CacheStats cache_stats() override { return {}; }
  std::string detokenize(const std::vector<rc::Token>&) override { return ""; }
  std::string cache_setting() override { return "radix"; }
  int64_t pool_tokens() override { return 0; }
  std::string describe() override { return "tcp://127.0.0.1:5557 (an empty remote cache)"; }
  bool remote() const override { return true; }
};

// The widget's rectangle in the window's coordinates.
QRect in_window(QWidget* w, QWidget* window) {
  return QRect(w->mapTo(window, QPoint(0, 0)), w->size());
}

class WindowFit : public testing::Test {
 protected:
  // The window at the size it opens with; WindowFit's own tests resize it.
  virtual bool keep_opening_size() const { return false; }
  // Model > Drafted decoding on (saved before the window reads its settings).
  virtual bool drafted() const { return false; }
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
    if (drafted())
      QSettings(options.settingsFile, QSettings::IniFormat).setValue("models/drafted", true);
    window_ = std::make_unique<rc::gui::MainWindow>(store_.get(), options);
    if (!keep_opening_size()) window_->resize(1024, 700);
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

  void send(const QString& text) {
    QSignalSpy stored(window_->controller(), &rc::gui::ChatController::replyStored);
    rc::ui::ComposerEdit* edit = window_->composer()->edit();
    edit->setFocus();
    edit->setPlainText(text);
    QTest::keyClick(edit, Qt::Key_Return);
    ASSERT_TRUE(QTest::qWaitFor([&] { return stored.count() > 0; }, 120000));
  }

  // At the window's current size: the panel inside the window, and every
  // tab of it fitting the panel.
  void expect_fits(const std::string& where) {
    SCOPED_TRACE(where);
    QWidget* w = window_.get();
    const QRect win(QPoint(0, 0), w->size());
    const QRect panel = in_window(panel_, w);
    EXPECT_TRUE(panel_->isVisible());
    EXPECT_TRUE(win.contains(panel))
        << "panel at " << panel.x() << "," << panel.y() << " " << panel.width() << "x"
        << panel.height() << " in " << win.width() << "x" << win.height();
    EXPECT_GE(panel.width(), panel_->minimumSizeHint().width());
    rc::ui::CachePanelGl* gl = panel_->glWidget();
    EXPECT_TRUE(win.contains(in_window(gl, w)));
    rc::ui::CachePanelState& st = *panel_->state();
    for (const char* tab : {"Node", "Plots", "Events", "Demos", "Cache"}) {
      st.frame.select_tab = tab;
      ASSERT_TRUE(paint_frames(gl, 4));
      EXPECT_EQ(st.frame.current_tab, tab);
      const rc::ui::panel::PanelFit& fit = st.frame.last_fit;
      EXPECT_TRUE(fit.fits()) << tab << ": " << fit.overflow;
      // The ImGui display is the GL widget: the measure is in its pixels.
      EXPECT_EQ(int(fit.display.x), gl->width());
      EXPECT_EQ(int(fit.display.y), gl->height());
      EXPECT_LE(fit.items_max.x, float(gl->width()) + 0.5f) << tab;
      EXPECT_LE(fit.windows_max.x, float(gl->width()) + 0.5f) << tab;
      EXPECT_LE(fit.windows_max.y, float(gl->height()) + 0.5f) << tab;
      if (!shots_.isEmpty()) screenshot(shots_ + "-" + tab + ".png");
    }
    st.frame.select_tab = "Node";
    ASSERT_TRUE(paint_frames(gl, 3));
  }

  void screenshot(const QString& name) {
    QTest::qWait(150);
    window_->grab().save(QStringLiteral(RADIXCHAT_BINARY_DIR "/tests/ui/panel/") + name);
  }

  QTemporaryDir dir_;
  std::unique_ptr<rc::store::StoreThread> store_;
  std::unique_ptr<rc::gui::MainWindow> window_;
  rc::ui::CachePanel* panel_ = nullptr;
  QString shots_;  // when set, expect_fits saves each tab as shots_-TAB.png
};

TEST_F(WindowFit, PanelFitsFrom1024x700Up) {
  send("What is a KV cache?");
  send("And why does a radix tree help?");
  for (const QSize size : {QSize(1024, 700), QSize(1280, 800), QSize(1440, 900)}) {
    window_->resize(size);
    QTest::qWait(200);
    const std::string where = std::to_string(size.width()) + "x" + std::to_string(size.height());
    EXPECT_EQ(window_->size(), size) << "the window cannot be made " << where;
    if (size.width() == 1024) shots_ = "window-fit-1024x700";
    expect_fits(where);
    shots_.clear();
    screenshot(QStringLiteral("window-fit-%1x%2.png").arg(size.width()).arg(size.height()));
  }
  // At the smallest size: Fit stops at a zoom where boxes keep their
  // text, and a node's tooltip (hovered at the right edge of the window)
  // lies inside the panel.
  window_->resize(1024, 700);
  QTest::qWait(200);
  rc::ui::CachePanelState& st = *panel_->state();
  rc::ui::CachePanelGl* gl = panel_->glWidget();
  st.tree.view.request_fit();
  ASSERT_TRUE(QTest::qWaitFor([&] { return paint_frames(gl, 1) && !st.tree.view.busy(); }, 5000));
  EXPECT_GE(st.tree.view.cam.zoom, rc::ui::panel::kReadableZoom - 1e-3f);
  int hovered = 0;
  const rc::ui::panel::TreeLayout& L = st.tree.layout(1e9);
  for (const rc::ui::panel::LaidNode& ln : L.nodes) {
    float x, y, w, h;
    if (ln.id == rc::kNoNode || !st.tree.view.world_box(ln.id, L, &x, &y, &w, &h)) continue;
    const ImVec2 p = st.tree.view.to_screen(x + w - 3, y + h / 2);
    if (p.x < st.tree.view.canvas_min().x || p.x > st.tree.view.canvas_max().x - 1 ||
        p.y < st.tree.view.tree_area_top() || p.y > st.tree.view.tree_area_bottom())
      continue;
    QTest::mouseMove(gl, QPoint(int(p.x), int(p.y)));
    ASSERT_TRUE(paint_frames(gl, 4));
    if (st.frame.last_fit.tooltips == 0) continue;
    ++hovered;
    EXPECT_TRUE(st.frame.last_fit.fits())
        << "node #" << ln.id << ": " << st.frame.last_fit.overflow;
  }
  EXPECT_GT(hovered, 0) << "no tooltip was shown";
  QTest::mouseMove(window_->composer(), QPoint(5, 5));
  // A projector: larger text at the smallest size still fits.
  panel_->state()->set_text_scale(1.5f);
  QTest::qWait(200);
  expect_fits("1024x700 at 150% text");
  screenshot(QStringLiteral("window-fit-1024x700-text150.png"));
  panel_->state()->set_text_scale(1.0f);
}

TEST_F(WindowFit, PanelWidthDoesNotDependOnTheTitle) {
  send("Hello");
  QTest::qWait(200);
  const int panel_w = panel_->width(), window_w = window_->width();
  const qint64 id = window_->controller()->currentConversation();
  ASSERT_NE(id, 0);
  window_->controller()->renameConversation(
      id, QString("A very long conversation title that goes on ").repeated(8));
  ASSERT_TRUE(
      QTest::qWaitFor([&] { return window_->controller()->currentTitle().size() > 300; }, 10000));
  QTest::qWait(300);
  EXPECT_EQ(window_->width(), window_w);
  EXPECT_EQ(panel_->width(), panel_w);
  expect_fits("1024x700 with a long title");
  screenshot(QStringLiteral("window-fit-long-title.png"));
}

// `off` reuses nothing: once the requests finished the panel draws no
// cached tree (the root alone) though the cache still holds their
// sequences; the plots keep the radix points and mark the switch.
TEST_F(WindowFit, OffDrawsNoCachedTreeAndPlotsKeepTheirPoints) {
  send("What is a KV cache?");
  send("Tell me more.");
  rc::ui::CachePanelState& st = *panel_->state();
  ASSERT_TRUE(paint_frames(panel_->glWidget(), 3));
  ASSERT_TRUE(QTest::qWaitFor([&] { return st.history.points() > 0; }, 10000));
  const size_t points = st.history.points();
  EXPECT_GT(st.tree.layout(1e9).nodes.size(), 1u);
  rc::ui::EngineHost* host = window_->engineHost();
  QSignalSpy ready(host, &rc::ui::EngineHost::modelReady);
  emit panel_->cacheSettingsRequested("off", 0);
  ASSERT_TRUE(QTest::qWaitFor([&] { return ready.count() > 0; }, 60000));
  send("What is a KV cache?");
  send("Tell me more.");
  ASSERT_TRUE(paint_frames(panel_->glWidget(), 3));
  // Evicted sequences fade out (their ghosts hold the old layout up to two
  // seconds), then the camera glides to what is left; checked below.
  (void)QTest::qWaitFor(
      [&] {
        return paint_frames(panel_->glWidget(), 1) && !st.tree.view.busy() &&
               st.tree.view.stats().nodes_drawn == 1;
      },
      8000);
  ASSERT_TRUE(paint_frames(panel_->glWidget(), 2));
  ASSERT_TRUE(st.policy_off());
  EXPECT_GT(st.tree.model.size(), 1u)
      << "off keeps finished sequences until their pages are needed";
  EXPECT_EQ(panel_->state()->tree.view.stats().nodes_drawn, 1)
      << "the root alone; laid out " << st.tree.layout(1e9).nodes.size() << ", culled "
      << st.tree.view.stats().culled << ", cam " << st.tree.view.cam.x << "," << st.tree.view.cam.y
      << " x" << st.tree.view.cam.zoom;
  EXPECT_GT(st.history.points(), points);
  ASSERT_FALSE(st.history.markers().empty());
  EXPECT_EQ(st.history.markers().back().label.rfind("off", 0), 0u)
      << st.history.markers().back().label;
  shots_ = "window-fit-off";
  expect_fits("1024x700, cache off");
}

class ScreenFit : public WindowFit {
 protected:
  bool keep_opening_size() const override { return true; }
  bool drafted() const override { return true; }

  // `w` lies inside the window, whole and shown.
  void expect_inside(QWidget* w, const char* what) {
    const QRect win(QPoint(0, 0), window_->size());
    const QRect r = in_window(w, window_.get());
    EXPECT_TRUE(w->isVisible()) << what;
    EXPECT_TRUE(win.contains(r)) << what << " at " << r.x() << "," << r.y() << " " << r.width()
                                 << "x" << r.height() << " in " << win.width() << "x"
                                 << win.height();
  }

  // Chat widgets, the tabs and the tree area of the panel, in the mode on
  // screen now; a screenshot named after the screen and `mode`.
  void expect_all_inside(const std::string& mode) {
    SCOPED_TRACE(mode);
    rc::ui::Composer* composer = window_->composer();
    expect_inside(composer, "composer");
    expect_inside(composer->edit(), "composer edit");
    auto* send = composer->findChild<QPushButton*>(QStringLiteral("sendButton"));
    ASSERT_NE(send, nullptr);
    expect_inside(send, "Send");
    EXPECT_GE(send->width(), send->sizeHint().width()) << "Send is cut";
    // The placeholder is read whole.
    rc::ui::ComposerEdit* edit = composer->edit();
    EXPECT_LE(edit->fontMetrics().horizontalAdvance(edit->placeholderText()),
              edit->viewport()->width())
        << "placeholder cut";
    // The messages' headers: no button or role label narrower than its text.
    for (QWidget* b : window_->findChildren<QWidget*>()) {
      const bool header =
          qobject_cast<QToolButton*>(b) || b->objectName() == QLatin1String("roleLabel");
      if (!header || !b->isVisible() || !window_->centralWidget()->isAncestorOf(b)) continue;
      EXPECT_GE(b->width(), b->sizeHint().width())
          << b->metaObject()->className() << " '" << b->property("text").toString().toStdString()
          << "' " << b->width() << " < " << b->sizeHint().width() << "' is cut";
    }
    expect_inside(panel_, "panel");
    rc::ui::CachePanelGl* gl = panel_->glWidget();
    expect_inside(gl, "panel GL");
    rc::ui::CachePanelState& st = *panel_->state();
    ASSERT_TRUE(paint_frames(gl, 3));
    ASSERT_FALSE(st.frame.tab_boxes.empty());
    for (const auto& t : st.frame.tab_boxes) {
      EXPECT_TRUE(t.visible) << t.label;
      EXPECT_GE(t.max.x - t.min.x, t.label_w) << "tab " << t.label << " is cut";
      EXPECT_GE(t.min.x, 0.0f) << t.label;
      EXPECT_LE(t.max.x, float(gl->width()) + 0.5f) << t.label;
      EXPECT_LE(t.max.y, float(gl->height()) + 0.5f) << t.label;
    }
    // The tree keeps a good part of the panel's height, and the tabs their
    // strip and a few lines below it.
    const ImVec2 c0 = st.tree.view.canvas_min(), c1 = st.tree.view.canvas_max();
    const float tree = c1.y - c0.y, below = float(gl->height()) - c1.y;
    const float line = ImGui::GetTextLineHeightWithSpacing();
    std::printf("%s at %dx%d: panel %d px, header %.0f px, tree %.0f px, tabs %.0f px\n",
                mode.c_str(), window_->width(), window_->height(), gl->height(), c0.y, tree, below);
    EXPECT_GE(tree, 0.3f * float(gl->height()))
        << "tree " << tree << " px of a " << gl->height() << " px panel";
    EXPECT_GE(below, float(rc::ui::panel::FrameState::kTabLines) * line)
        << "tabs " << below << " px";
    // The tabs use the space they get: the Events log and (where lessons
    // are run: not over a recording or a remote cache) the Demos list show
    // lines, not a strip.
    const std::string shown = st.frame.current_tab;
    const bool lessons = !st.replay_shown() && !st.remote_shown();
    for (const auto& [tab, least] :
         {std::pair<const char*, int>{"Events", 5}, {"Demos", lessons ? 4 : 2}}) {
      st.frame.select_tab = tab;
      ASSERT_TRUE(paint_frames(gl, 4));
      ASSERT_EQ(st.frame.current_tab, tab);
      std::printf("  %s: tab body %.0f px, %d lines in its region\n", tab, st.frame.tab_body_h,
                  st.frame.region_lines);
      EXPECT_GE(st.frame.region_lines, least) << tab << " shows " << st.frame.region_lines
                                              << " lines in a " << st.frame.tab_body_h << " px tab";
      EXPECT_TRUE(st.frame.last_fit.fits()) << tab << ": " << st.frame.last_fit.overflow;
    }
    st.frame.select_tab = shown;
    ASSERT_TRUE(paint_frames(gl, 4));
    EXPECT_LE(c1.y, float(gl->height()) + 0.5f);
    EXPECT_TRUE(st.frame.last_fit.fits()) << st.frame.last_fit.overflow;
    const QSize screen = window_->screen()->geometry().size();
    screenshot(QStringLiteral("screen-fit-%1x%2-%3.png")
                   .arg(screen.width())
                   .arg(screen.height())
                   .arg(QString::fromStdString(mode)));
  }
};

TEST_F(ScreenFit, OpensInsideTheScreenInEveryMode) {
  const QRect avail = window_->screen()->availableGeometry();
  EXPECT_TRUE(avail.contains(window_->frameGeometry()))
      << "window " << window_->width() << "x" << window_->height() << " on a screen of "
      << avail.width() << "x" << avail.height();
  EXPECT_GE(window_->width(), std::min(1024, avail.width()));
  EXPECT_GE(window_->height(), std::min(640, avail.height()));
  // A large screen: the first launch takes most of it, and the panel its
  // wide-window share rather than the 380 px of a small one.
  if (avail.width() >= 1600) {
    EXPECT_GE(window_->width(), avail.width() * 8 / 10);
    EXPECT_TRUE(QTest::qWaitFor([&] { return panel_->width() > 380; }, 5000))
        << "panel " << panel_->width() << " px in a window " << window_->width() << " px wide";
  }
  auto greedy = [&] {
    rc::ui::ChatSampling s = window_->controller()->sampling();
    s.temperature = 0;
    window_->controller()->setSampling(s);
  };
  greedy();
  send("What is a KV cache?");
  expect_all_inside("chat");

  // The same question in a new chat, greedy: its reply is drafted from the
  // first one's node, and the header gains the drafts line while the tree
  // keeps its half.
  rc::ui::CachePanelState& st = *panel_->state();
  window_->controller()->newConversation();
  greedy();
  send("What is a KV cache?");
  ASSERT_TRUE(QTest::qWaitFor(
      [&] { return paint_frames(panel_->glWidget(), 1) && !st.draft_line().empty(); }, 10000))
      << "no draft events reached the panel";
  EXPECT_GT(st.tree.model.draft_counts().tree_drafts, 0u);
  expect_all_inside("drafted");

  st.lesson.demo.by_hand = true;
  st.lesson.demo.lead_seconds = 0.05;
  ASSERT_TRUE(st.start_lesson(0, 0));
  ASSERT_TRUE(QTest::qWaitFor([&] { return st.lesson_shown() && st.lesson.demo.running(); }, 60000))
      << st.lesson.error;
  st.frame.select_tab = "Demos";
  ASSERT_TRUE(paint_frames(panel_->glWidget(), 4));
  EXPECT_EQ(st.frame.current_tab, "Demos");
  // Next step stays in view and whole, whatever the caption below it holds.
  const auto& next = st.frame.next_step_box;
  EXPECT_TRUE(next.visible);
  EXPECT_GE(next.min.y, 0.0f);
  EXPECT_LE(next.max.y, float(panel_->glWidget()->height()) + 0.5f);
  EXPECT_GE(next.max.x - next.min.x, next.label_w);
  expect_all_inside("lesson");
  st.end_lesson(0, "");

  // Recording mode: seven tabs (Request and Advisor join), none cut.
  const std::string path = dir_.filePath("shot.rcrec").toStdString();
  {
    auto rec = rc::recording::Recorder::create(path, {});
    ASSERT_TRUE(rec.ok()) << rec.status().message();
    rc::Engine* engine = window_->engineHost()->engine();
    ASSERT_NE(engine, nullptr);
    (*rec)->snapshot(engine->cache_snapshot());
    ASSERT_TRUE((*rec)->close().ok());
  }
  ASSERT_EQ(st.replay.open(path), "");
  ASSERT_TRUE(QTest::qWaitFor(
      [&] { return paint_frames(panel_->glWidget(), 1) && st.replay_shown(); }, 10000));
  for (const char* tab : {"Request", "Advisor", "Cache"}) {
    st.frame.select_tab = tab;
    ASSERT_TRUE(paint_frames(panel_->glWidget(), 4));
    EXPECT_EQ(st.frame.current_tab, tab);
  }
  st.frame.select_tab = "Request";
  ASSERT_TRUE(paint_frames(panel_->glWidget(), 4));
  EXPECT_EQ(st.frame.tab_boxes.size() + st.frame.hidden_tabs.size(), 7u);
  expect_all_inside("recording");
  st.replay.close();
  ASSERT_TRUE(QTest::qWaitFor(
      [&] { return paint_frames(panel_->glWidget(), 1) && !st.replay_shown(); }, 10000));

  // Attach mode: a remote cache's feed in the panel (what Attach installs).
  st.set_feed(std::make_unique<EmptyRemoteFeed>(), 0);
  ASSERT_TRUE(paint_frames(panel_->glWidget(), 4));
  ASSERT_TRUE(st.remote_shown());
  expect_all_inside("attach");
}

// The window as large as the screen: until the user drags the splitter the
// panel gets its default share (47% of what the conversation list leaves on
// a wide window, 380 px on a small one), and follows the window's size; once
// the user drags the handle, their split is kept and comes back at the next
// launch.
TEST_F(ScreenFit, TheSplitFollowsAWideWindowUntilTheUserDragsIt) {
  auto* splitter = window_->findChild<QSplitter*>();
  ASSERT_NE(splitter, nullptr);
  const QRect avail = window_->screen()->availableGeometry();
  window_->resize(avail.size() - (window_->frameGeometry().size() - window_->size()));
  QTest::qWait(300);
  QList<int> sizes = splitter->sizes();
  ASSERT_EQ(sizes.size(), 3);
  const int total = sizes[0] + sizes[1] + sizes[2];
  std::printf("window %dx%d: list %d, chat %d, panel %d\n", window_->width(), window_->height(),
              sizes[0], sizes[1], sizes[2]);
  EXPECT_NEAR(sizes[2], rc::gui::panelDefaultWidth(total, sizes[0]), 2);
  if (window_->width() >= 1800) {
    EXPECT_GE(sizes[2], (sizes[1] + sizes[2]) * 2 / 5) << "the panel's share of a wide window";
    screenshot(QStringLiteral("screen-fit-wide-window.png"));
  }
  EXPECT_EQ(rc::gui::panelDefaultWidth(1920, 250), 784);
  EXPECT_EQ(rc::gui::panelDefaultWidth(1280, 250), 380) << "the chat keeps its room";

  // The user drags the chat/panel handle 60 px to the right.
  QSplitterHandle* handle = splitter->handle(2);
  ASSERT_NE(handle, nullptr);
  const QPoint mid(handle->width() / 2, handle->height() / 2);
  QTest::mousePress(handle, Qt::LeftButton, {}, mid);
  QTest::mouseMove(handle, mid + QPoint(30, 0));
  QTest::mouseMove(handle, mid + QPoint(60, 0));
  QTest::mouseRelease(handle, Qt::LeftButton, {}, mid + QPoint(60, 0));
  QTest::qWait(100);
  const QList<int> dragged = splitter->sizes();
  ASSERT_LT(dragged[2], sizes[2] - 30) << "the drag did not move the handle";
  // A resize keeps the user's split (no default takes over).
  window_->resize(window_->width() - 40, window_->height());
  QTest::qWait(200);
  EXPECT_NEAR(splitter->sizes()[2], dragged[2], 2);
  const QList<int> kept = splitter->sizes();
  window_->close();
  window_ = std::make_unique<rc::gui::MainWindow>(store_.get(), [&] {
    rc::gui::WindowOptions o;
    o.settingsFile = dir_.filePath("settings.ini");
    return o;
  }());
  window_->show();
  ASSERT_TRUE(QTest::qWaitForWindowExposed(window_.get()));
  QTest::qWait(200);
  splitter = window_->findChild<QSplitter*>();
  EXPECT_NEAR(splitter->sizes()[2], kept[2], 2) << "the user's split is remembered";
}

// The Attach popup, opened and submitted with the mouse as a user does, on
// an endpoint that fails with a long error: every field label, the mode's
// note and the error lie whole inside the popup (wrapped, not cut), and the
// popup inside the panel.
TEST_F(ScreenFit, AttachPopupLabelsAndErrorFitInside) {
  const std::string error =
      "cannot connect to KV-events endpoint 'tcp://127.0.0.1:1,tcp://127.0.0.1:2': "
      "Connection refused by the publisher at the other end of this rather long address";
  panel_->setRemoteConnector([error](const rc::ui::panel::AttachRequest&)
                                 -> rc::Result<std::unique_ptr<rc::ui::panel::RemoteBlockSource>> {
    return rc::Status(rc::StatusCode::invalid_argument, error);
  });
  rc::ui::CachePanelGl* gl = panel_->glWidget();
  rc::ui::panel::RemoteAttach& remote = panel_->state()->remote;
  auto click = [&](ImVec2 min, ImVec2 max) {
    const QPoint at(int((min.x + max.x) / 2), int((min.y + max.y) / 2));
    QTest::mouseMove(gl, at);
    ASSERT_TRUE(paint_frames(gl, 2));
    QTest::mousePress(gl, Qt::LeftButton, {}, at);
    ASSERT_TRUE(paint_frames(gl, 2));
    QTest::mouseRelease(gl, Qt::LeftButton, {}, at);
    ASSERT_TRUE(paint_frames(gl, 4));
  };
  auto expect_popup_fits = [&](const char* when) {
    SCOPED_TRACE(when);
    ASSERT_TRUE(remote.popup_shown);
    const float right = float(gl->width()) + 0.5f, bottom = float(gl->height()) + 0.5f;
    EXPECT_GE(remote.popup_min.x, -0.5f);
    EXPECT_GE(remote.popup_min.y, -0.5f);
    EXPECT_LE(remote.popup_max.x, right) << "popup ends past the panel";
    EXPECT_LE(remote.popup_max.y, bottom) << "popup ends below the panel";
    ASSERT_GE(remote.popup_texts.size(), 5u);
    for (const auto& t : remote.popup_texts) {
      EXPECT_GE(t.min.x, remote.popup_min.x - 0.5f) << t.text;
      EXPECT_LE(t.max.x, remote.popup_max.x + 0.5f) << "'" << t.text << "' is cut";
      EXPECT_LE(t.max.y, remote.popup_max.y + 0.5f) << "'" << t.text << "' is below the popup";
      // A label is read on one line; a message longer than the popup wraps.
      if (t.text_w <= t.max.x - t.min.x + 0.5f) continue;
      EXPECT_GT(t.max.y - t.min.y, 1.5f * ImGui::GetTextLineHeight())
          << "'" << t.text << "' neither fits nor wraps";
    }
    EXPECT_TRUE(panel_->state()->frame.last_fit.fits()) << panel_->state()->frame.last_fit.overflow;
  };
  ASSERT_TRUE(paint_frames(gl, 3));
  ASSERT_GT(remote.button_max.x, remote.button_min.x);
  click(remote.button_min, remote.button_max);
  expect_popup_fits("opened");
  bool labelled = false;
  for (const auto& t : remote.popup_texts) labelled = labelled || t.text == "endpoint";
  EXPECT_TRUE(labelled);
  click(remote.submit_min, remote.submit_max);
  expect_popup_fits("after a failed attach");
  bool shown = false;
  for (const auto& t : remote.popup_texts) shown = shown || t.text == error;
  EXPECT_TRUE(shown) << "the error is not in the popup";
  EXPECT_FALSE(remote.attached());
  const QSize screen = window_->screen()->geometry().size();
  screenshot(
      QStringLiteral("screen-fit-%1x%2-attach-popup.png").arg(screen.width()).arg(screen.height()));
}

}  // namespace
