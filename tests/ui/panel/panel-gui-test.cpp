// The cache panel in a real window (run under xvfb-run, Mesa llvmpipe):
// an Engine on the bundled model, two chats sharing a system prompt, and
// the panel's own state must show the shared prefix as one node with two
// children; a screenshot of the window is saved and must not be blank.
// Also: the no-GL placeholder, and the panel's signals and slot.
#include <gtest/gtest.h>

#include <unistd.h>
#include <QApplication>
#include <QElapsedTimer>
#include <QHBoxLayout>
#include <QImage>
#include <QLabel>
#include <QOpenGLWidget>
#include <QSet>
#include <QSignalSpy>
#include <QTest>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <set>

#include "panel/cache-panel-gl.h"
#include "panel/cache-panel-state.h"
#include "panel/cache-panel.h"
#include "panel/imgui-input.h"
#include "radixchat/engine.h"
#include "skip-or-fail.h"
#include "test-paths.h"

namespace rc::ui {
namespace {

using rc::test::test_model_path;

std::string screenshot_path() {
  if (const char* env = std::getenv("RADIXCHAT_PANEL_SCREENSHOT"); env && *env) return env;
  return RADIXCHAT_BINARY_DIR "/tests/ui/panel/panel-gui.png";
}

bool wait_for(const std::function<bool()>& done, int timeout_ms) {
  QElapsedTimer t;
  t.start();
  while (!done()) {
    if (t.elapsed() > timeout_ms) return false;
    QTest::qWait(20);
  }
  return true;
}

// Sends one chat and waits (pumping the GUI, so the panel keeps drawing).
bool chat(Engine& e, const std::vector<ChatMessage>& messages, int max_tokens = 16) {
  auto done = std::make_shared<std::atomic<bool>>(false);
  GenerateRequest req;
  req.messages = messages;
  req.max_tokens = max_tokens;
  Result<RequestId> id = e.submit(req, [done](const StreamEvent& ev) {
    if (ev.finished) done->store(true);
    return true;
  });
  if (!id.ok()) {
    ADD_FAILURE() << id.status().to_string();
    return false;
  }
  return wait_for([&] { return done->load(); }, 180000);
}

// Why a test with a live panel and the bundled model cannot run here ("":
// it can).
std::string live_panel_missing() {
  if (!std::filesystem::exists(test_model_path())) return "no model at " + test_model_path();
  if (QGuiApplication::platformName() == "offscreen") return "needs a display (run under xvfb-run)";
  return "";
}

// The bundled model on two threads with a pool of `pool` tokens.
std::unique_ptr<Engine> bundled_engine(int64_t pool) {
  EngineConfig cfg;
  cfg.model_path = test_model_path();
  cfg.n_threads = 2;
  cfg.kv_pool_tokens = pool;
  auto engine = Engine::create(cfg);
  EXPECT_TRUE(engine.ok()) << engine.status().to_string();
  return engine.ok() ? std::move(engine.value()) : nullptr;
}

size_t common_prefix(const std::vector<int32_t>& a, const std::vector<int32_t>& b) {
  size_t n = 0;
  while (n < a.size() && n < b.size() && a[n] == b[n]) ++n;
  return n;
}

TEST(CachePanelGui, SharedSystemPromptIsOneNodeWithTwoChildren) {
  if (!std::filesystem::exists(test_model_path()))
    RC_SKIP_OR_FAIL("no model at " << test_model_path());
  if (QGuiApplication::platformName() == "offscreen")
    RC_SKIP_OR_FAIL("needs a display (run under xvfb-run)");
  EngineConfig cfg;
  cfg.model_path = test_model_path();
  cfg.n_threads = 2;
  cfg.kv_pool_tokens = 8192;
  auto engine = Engine::create(cfg);
  ASSERT_TRUE(engine.ok()) << engine.status().to_string();
  Engine& e = *engine.value();

  QWidget window;
  window.setWindowTitle("RadixChat cache panel");
  auto* box = new QHBoxLayout(&window);
  box->setContentsMargins(0, 0, 0, 0);
  auto* panel = new CachePanel(&window);
  box->addWidget(panel);
  window.resize(1000, 760);
  window.show();
  ASSERT_TRUE(QTest::qWaitForWindowExposed(&window));
  ASSERT_TRUE(panel->hasGl()) << panel->unavailableReason().toStdString();
  panel->setEngine(&e);

  const std::string system =
      "You are RadixChat, a friendly assistant running on this computer. Answer in two or three "
      "short sentences.";
  const std::vector<ChatMessage> a = {{"system", system}, {"user", "What is a KV cache?"}};
  const std::vector<ChatMessage> b = {{"system", system},
                                      {"user", "Why does reusing a prefix save time?"}};
  ASSERT_TRUE(chat(e, a));
  ASSERT_TRUE(chat(e, b));
  ASSERT_TRUE(wait_for([&] { return e.stats().requests_running == 0; }, 10000));
  QTest::qWait(400);  // a few frames: the panel drains the last events

  CachePanelState& st = *panel->state();
  // The panel's replayed tree equals the engine's own snapshot.
  const CacheSnapshot snap = e.cache_snapshot();
  EXPECT_EQ(st.tree.model.infos(), snap.nodes);

  const std::vector<int32_t> ta = e.render_chat(a).value(), tb = e.render_chat(b).value();
  const size_t shared = common_prefix(ta, tb);
  const std::vector<int32_t> sys_only = e.render_chat({{"system", system}}).value();
  ASSERT_GT(shared, sys_only.size() / 2) << "the prompts should share the system prompt";
  const NodeId node =
      st.tree.model.locate(std::vector<Token>(ta.begin(), ta.begin() + ptrdiff_t(shared)));
  ASSERT_NE(node, kRootNode);
  const panel::TreeNode* n = st.tree.model.find(node);
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(st.tree.model.path_tokens(node).size(), shared)
      << "one node ends where the chats diverge";
  ASSERT_EQ(n->children.size(), 2u) << "the shared prefix has one child per chat";
  std::set<Token> firsts;
  for (NodeId c : n->children) firsts.insert(st.tree.model.find(c)->tokens.at(0));
  EXPECT_EQ(firsts, (std::set<Token>{ta[shared], tb[shared]}));
  // Its text is the system prompt, and it is laid out with both children.
  const std::string text = e.detokenize(st.tree.model.path_tokens(node));
  EXPECT_NE(text.find("friendly assistant"), std::string::npos) << text;
  const panel::TreeLayout& L = st.tree.layout(1e9);
  ASSERT_NE(L.find(node), nullptr);
  for (NodeId c : n->children) EXPECT_NE(L.find(c), nullptr);
  EXPECT_GE(st.tree.view.stats().nodes_drawn, 4);
  EXPECT_GT(panel->glWidget()->frames(), 10u);

  // Locate the first chat (as the chat view does) and take the picture.
  panel->locateTokens(ta);
  EXPECT_EQ(st.tree.located, st.tree.model.locate(ta));
  QTest::qWait(900);  // the camera glides to it
  const QImage shot = window.grab().toImage();
  std::filesystem::create_directories(std::filesystem::path(screenshot_path()).parent_path());
  ASSERT_TRUE(shot.save(QString::fromStdString(screenshot_path())));
  QSet<QRgb> colours;
  for (int y = 0; y < shot.height(); y += 4)
    for (int x = 0; x < shot.width(); x += 4) colours.insert(shot.pixel(x, y));
  EXPECT_GT(colours.size(), 50) << "the screenshot looks blank";
  std::printf("screenshot: %s (%dx%d, %d colours sampled)\n", screenshot_path().c_str(),
              shot.width(), shot.height(), int(colours.size()));
  panel->setEngine(nullptr);
}

// The teaching scenarios run in a lesson engine of their own: shared system
// prompt (one prefix, three children, later steps matched), then eviction in
// a small pool (evictions logged, ghosts drawn). The user's engine is never
// touched: its cache stays empty, its pool stays, and a chat afterwards
// works and brings the panel back to it.
TEST(CachePanelGui, DemosRunInTheirOwnEngineAndLeaveTheUsersAlone) {
  if (const std::string why = live_panel_missing(); !why.empty()) RC_SKIP_OR_FAIL(why);
  std::unique_ptr<Engine> engine = bundled_engine(4096);
  ASSERT_NE(engine, nullptr);
  Engine& user = *engine;
  CachePanel panel;
  panel.resize(900, 700);
  panel.show();
  ASSERT_TRUE(QTest::qWaitForWindowExposed(&panel));
  panel.setEngine(&user);
  CachePanelState& st = *panel.state();
  const auto& all = panel::demo_scenarios();
  auto find = [&](const std::string& name) {
    for (size_t i = 0; i < all.size(); ++i)
      if (all[i].name.rfind(name, 0) == 0) return i;
    return all.size();
  };
  st.lesson.demo.lead_seconds = 0.05;
  st.lesson.demo.seconds_per_step = 0.2;

  ASSERT_TRUE(st.start_lesson(find("Shared system prompt"), 0));
  ASSERT_TRUE(wait_for([&] { return st.lesson_shown(); }, 60000)) << st.lesson.error;
  ASSERT_NE(st.feed()->engine(), &user);
  ASSERT_TRUE(wait_for([&] { return st.lesson.demo.step() >= 1; }, 60000));
  EXPECT_NE(st.lesson.demo.caption().find("Step 2/3"), std::string::npos)
      << st.lesson.demo.caption();
  ASSERT_TRUE(wait_for([&] { return st.lesson.demo.finished(); }, 120000))
      << st.lesson.demo.caption();
  QTest::qWait(300);
  // Some node has three children: the shared system prompt.
  size_t widest = 0;
  for (const auto& [id, n] : st.tree.model.nodes()) widest = std::max(widest, n.children.size());
  EXPECT_EQ(widest, 3u);
  // The card: step 1 matched nothing (a fresh cache), steps 2 and 3 matched
  // the system prompt and computed less than `off` would have.
  const auto& r = st.lesson.demo.results();
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[0].metrics.cached_tokens, 0);
  EXPECT_EQ(r[0].metrics.computed_tokens, r[0].metrics.prompt_tokens);
  for (size_t i = 1; i < 3; ++i) {
    EXPECT_GT(r[i].metrics.cached_tokens, 10) << i;
    EXPECT_LT(r[i].metrics.computed_tokens, r[i].metrics.prompt_tokens) << i;
  }
  EXPECT_EQ(user.cache_snapshot().nodes.size(), 1u) << "the demo ran in the user's cache";

  ASSERT_TRUE(st.start_lesson(find("Eviction"), 0));
  ASSERT_TRUE(wait_for([&] { return st.lesson_shown() && st.lesson.demo.running(); }, 60000));
  Engine* lesson = st.lesson.host.engine();
  ASSERT_NE(lesson, nullptr);
  EXPECT_LT(lesson->model_info().kv_pool_tokens, 1024);
  int ghosts_seen = 0;
  ASSERT_TRUE(wait_for(
      [&] {
        const int g = st.tree.view.stats().ghosts_drawn;
        if (g > 0 && ghosts_seen == 0) {  // the first fade-out, for the record
          const std::string shot =
              std::string(RADIXCHAT_BINARY_DIR) + "/tests/ui/panel/panel-eviction.png";
          EXPECT_TRUE(panel.grab().save(QString::fromStdString(shot)));
        }
        ghosts_seen = std::max(ghosts_seen, g);
        return st.lesson.demo.finished();
      },
      240000))
      << st.lesson.demo.caption();
  QTest::qWait(300);
  EXPECT_GT(lesson->stats().cache.evictions, 0u);
  bool logged = false;
  for (const panel::LogEntry& e : st.log.entries())
    logged |= e.kind == CacheEventKind::evict && e.seq != UINT64_MAX;
  EXPECT_TRUE(logged) << "evictions appear in the event log";
  EXPECT_GT(ghosts_seen, 0) << "evicted nodes fade out on the canvas";
  EXPECT_EQ(st.tree.model.infos(), lesson->cache_snapshot().nodes);

  // The user's engine: same pool, empty cache, and a chat works; the panel
  // goes back to it.
  EXPECT_EQ(user.model_info().kv_pool_tokens, 4096);
  EXPECT_EQ(user.stats().cache.evictions, 0u);
  ASSERT_TRUE(chat(user, {{"user", "Hello after the lesson"}}));
  ASSERT_TRUE(wait_for([&] { return !st.lesson_shown(); }, 10000));
  EXPECT_EQ(st.feed()->engine(), &user);
  EXPECT_EQ(st.lesson.host.engine(), nullptr) << "the lesson engine is released";
  ASSERT_TRUE(
      wait_for([&] { return st.tree.model.infos() == user.cache_snapshot().nodes; }, 10000));
  EXPECT_GT(st.tree.model.size(), 1u);
  panel.setEngine(nullptr);
}

// Pause holds a lesson: the caption stays on the step whose events are
// queued, the demo is not "done" while events wait, Next step shows the
// queue and sends the next chat, and Stop brings the user's cache back.
TEST(CachePanelGui, APausedLessonsCaptionDoesNotAdvance) {
  if (const std::string why = live_panel_missing(); !why.empty()) RC_SKIP_OR_FAIL(why);
  std::unique_ptr<Engine> engine = bundled_engine(4096);
  ASSERT_NE(engine, nullptr);
  CachePanel panel;
  panel.resize(900, 700);
  panel.show();
  ASSERT_TRUE(QTest::qWaitForWindowExposed(&panel));
  panel.setEngine(engine.get());
  CachePanelState& st = *panel.state();
  st.lesson.demo.lead_seconds = 0.05;
  st.lesson.demo.seconds_per_step = 0.1;

  ASSERT_TRUE(st.start_lesson(0, 0));  // the shared system prompt
  ASSERT_TRUE(wait_for([&] { return st.lesson_shown(); }, 60000)) << st.lesson.error;
  st.set_paused(true, 0);
  // Paused before its first chat: the lesson waits.
  QTest::qWait(600);
  EXPECT_FALSE(st.lesson.demo.in_flight());
  EXPECT_FALSE(st.lesson.demo.results()[0].finished);
  // Next step sends chat 1; its events queue; nothing advances.
  ASSERT_TRUE(st.lesson_next(0));
  ASSERT_TRUE(wait_for([&] { return st.lesson.demo.results()[0].finished; }, 60000));
  QTest::qWait(1500);
  EXPECT_EQ(st.lesson.demo.step(), 0u);
  EXPECT_FALSE(st.lesson.demo.finished());
  EXPECT_NE(st.lesson.demo.caption().find("Step 1/3"), std::string::npos)
      << st.lesson.demo.caption();
  EXPECT_GT(st.source.pending.size(), 0u);
  const size_t queued = st.source.pending.size();
  ASSERT_TRUE(st.step_one(0));
  EXPECT_EQ(st.source.pending.size(), queued - 1);
  EXPECT_EQ(st.lesson.demo.step(), 0u) << "Step shows events; it does not start a chat";

  // Next step: the queue is shown, then chat 2 goes (still paused); a short
  // chat may finish between two polls, so seeing it done counts too.
  ASSERT_TRUE(st.lesson_next(0));
  ASSERT_TRUE(wait_for(
      [&] {
        return st.lesson.demo.step() == 1 &&
               (st.lesson.demo.in_flight() || st.lesson.demo.results()[1].finished);
      },
      10000));
  EXPECT_NE(st.lesson.demo.caption().find("Step 2/3"), std::string::npos)
      << st.lesson.demo.caption();
  ASSERT_TRUE(wait_for([&] { return st.lesson.demo.results()[1].finished; }, 60000));
  QTest::qWait(800);
  EXPECT_EQ(st.lesson.demo.step(), 1u);
  EXPECT_GT(st.source.pending.size(), 0u);

  // Resume: the rest runs to the end.
  st.set_paused(false, 0);
  ASSERT_TRUE(wait_for([&] { return st.lesson.demo.finished(); }, 120000))
      << st.lesson.demo.caption();
  EXPECT_TRUE(st.source.pending.empty());

  // Stop (Back to my cache): the user's feed returns, the lesson engine goes.
  st.end_lesson(0, "test");
  EXPECT_FALSE(st.lesson_shown());
  EXPECT_EQ(st.feed()->engine(), engine.get());
  EXPECT_EQ(st.lesson.host.engine(), nullptr);
  panel.setEngine(nullptr);
}

// Pre-1.87 input: a press and release between two frames still reaches
// ImGui as one frame with the button down (else the click is lost).
TEST(ImGuiInput, QuickClickAndKeysSurviveUntilTheNextFrame) {
  ImGuiContext* ctx = ImGui::CreateContext();
  ImGuiIO& io = ImGui::GetIO();
  ImGuiInputQueue::setup_key_map(io);
  EXPECT_EQ(io.KeyMap[ImGuiKey_Enter], ImGuiInputQueue::key_index(Qt::Key_Return));
  EXPECT_LT(ImGuiInputQueue::key_index(Qt::Key_Escape), 512);
  EXPECT_EQ(ImGuiInputQueue::key_index(Qt::Key_A), 'A');
  ImGuiInputQueue q;
  q.mouse_move(QPointF(10, 20));
  q.mouse_button(Qt::LeftButton, true);
  q.mouse_button(Qt::LeftButton, false);
  q.key(Qt::Key_Return, true, Qt::NoModifier);
  q.key(Qt::Key_Return, false, Qt::NoModifier);
  q.wheel(1.0f, 0);
  q.begin_frame(io);
  EXPECT_TRUE(io.MouseDown[0]);
  EXPECT_TRUE(io.KeysDown[ImGuiInputQueue::key_index(Qt::Key_Return)]);
  EXPECT_EQ(io.MousePos.x, 10);
  EXPECT_EQ(io.MouseWheel, 1.0f);
  q.after_new_frame();
  io.MouseWheel = 0;
  q.begin_frame(io);
  EXPECT_FALSE(io.MouseDown[0]);
  EXPECT_FALSE(io.KeysDown[ImGuiInputQueue::key_index(Qt::Key_Return)]);
  EXPECT_EQ(io.MouseWheel, 0.0f);
  q.mouse_leave();
  q.begin_frame(io);
  EXPECT_LT(io.MousePos.x, -1e30f);  // off the panel: no hover
  ImGui::DestroyContext(ctx);
}

TEST(CachePanelGui, WithoutGlThePanelSaysSo) {
  qputenv("RADIXCHAT_PANEL_NO_GL", "1");
  CachePanel panel;
  qunsetenv("RADIXCHAT_PANEL_NO_GL");
  EXPECT_FALSE(panel.hasGl());
  EXPECT_EQ(panel.glWidget(), nullptr);
  EXPECT_FALSE(panel.unavailableReason().isEmpty());
  auto* label = panel.findChild<QLabel*>("cachePanelUnavailable");
  ASSERT_NE(label, nullptr);
  EXPECT_TRUE(label->text().contains("not available"));
  panel.setEngine(nullptr);  // harmless without GL
  panel.locateTokens({1, 2, 3});
}

TEST(CachePanelGui, SignalsLeaveAfterTheFrameAndTitlesComeBack) {
  CachePanel panel;
  QSignalSpy settings(&panel, &CachePanel::cacheSettingsRequested);
  QSignalSpy convs(&panel, &CachePanel::conversationsForPrefixRequested);
  CachePanelState& st = *panel.state();
  st.on_settings("radix-page16", 2048);
  st.on_conversations({5, 6, 7});
  EXPECT_EQ(settings.count(), 0);  // queued: not inside the ImGui frame
  QTest::qWait(50);
  ASSERT_EQ(settings.count(), 1);
  EXPECT_EQ(settings.at(0).at(0).toString(), "radix-page16");
  EXPECT_EQ(settings.at(0).at(1).toLongLong(), 2048);
  ASSERT_EQ(convs.count(), 1);
  EXPECT_EQ(convs.at(0).at(0).value<std::vector<int32_t>>(), (std::vector<int32_t>{5, 6, 7}));
  panel.showConversationsForNode({"Trip planning", "Octopus facts"});
  EXPECT_EQ(st.tree.conversation_titles,
            (std::vector<std::string>{"Trip planning", "Octopus facts"}));
}

}  // namespace
}  // namespace rc::ui

int main(int argc, char** argv) {
  // Without a display (e.g. listing tests) fall back to offscreen: the panel
  // then shows its placeholder instead of crashing in GL.
  if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM") && qEnvironmentVariableIsEmpty("DISPLAY"))
    qputenv("QT_QPA_PLATFORM", "offscreen");
  if (qEnvironmentVariableIsEmpty("XDG_RUNTIME_DIR")) {
    const QByteArray dir = "/tmp/radixchat-xdg-" + QByteArray::number(qint64(getuid()));
    std::filesystem::create_directories(dir.toStdString());
    std::filesystem::permissions(dir.toStdString(), std::filesystem::perms::owner_all);
    qputenv("XDG_RUNTIME_DIR", dir);
  }
  QApplication app(argc, argv);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
