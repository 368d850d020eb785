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

namespace rc::ui {
namespace {

std::string model_path() {
  if (const char* env = std::getenv("RADIXCHAT_MODEL"); env && *env) return env;
  return RADIXCHAT_SOURCE_DIR "/assets/model/radixchat-demo.gguf";
}

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

size_t common_prefix(const std::vector<int32_t>& a, const std::vector<int32_t>& b) {
  size_t n = 0;
  while (n < a.size() && n < b.size() && a[n] == b[n]) ++n;
  return n;
}

TEST(CachePanelGui, SharedSystemPromptIsOneNodeWithTwoChildren) {
  if (!std::filesystem::exists(model_path())) RC_SKIP_OR_FAIL("no model at " << model_path());
  if (QGuiApplication::platformName() == "offscreen")
    RC_SKIP_OR_FAIL("needs a display (run under xvfb-run)");
  EngineConfig cfg;
  cfg.model_path = model_path();
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
  EXPECT_EQ(st.model.infos(), snap.nodes);

  const std::vector<int32_t> ta = e.render_chat(a).value(), tb = e.render_chat(b).value();
  const size_t shared = common_prefix(ta, tb);
  const std::vector<int32_t> sys_only = e.render_chat({{"system", system}}).value();
  ASSERT_GT(shared, sys_only.size() / 2) << "the prompts should share the system prompt";
  const NodeId node =
      st.model.locate(std::vector<Token>(ta.begin(), ta.begin() + ptrdiff_t(shared)));
  ASSERT_NE(node, kRootNode);
  const panel::TreeNode* n = st.model.find(node);
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(st.model.path_tokens(node).size(), shared) << "one node ends where the chats diverge";
  ASSERT_EQ(n->children.size(), 2u) << "the shared prefix has one child per chat";
  std::set<Token> firsts;
  for (NodeId c : n->children) firsts.insert(st.model.find(c)->tokens.at(0));
  EXPECT_EQ(firsts, (std::set<Token>{ta[shared], tb[shared]}));
  // Its text is the system prompt, and it is laid out with both children.
  const std::string text = e.detokenize(st.model.path_tokens(node));
  EXPECT_NE(text.find("friendly assistant"), std::string::npos) << text;
  const panel::TreeLayout& L = st.layout(1e9);
  ASSERT_NE(L.find(node), nullptr);
  for (NodeId c : n->children) EXPECT_NE(L.find(c), nullptr);
  EXPECT_GE(st.view.stats().nodes_drawn, 4);
  EXPECT_GT(panel->glWidget()->frames(), 10u);

  // Locate the first chat (as the chat view does) and take the picture.
  panel->locateTokens(ta);
  EXPECT_EQ(st.located, st.model.locate(ta));
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

// The teaching scenarios run against a real engine: shared system prompt
// (one prefix, three children), then eviction in a small pool (evictions
// logged, ghosts drawn), with captions on the way.
TEST(CachePanelGui, DemoScenariosShowSharingAndEviction) {
  if (!std::filesystem::exists(model_path())) RC_SKIP_OR_FAIL("no model at " << model_path());
  if (QGuiApplication::platformName() == "offscreen")
    RC_SKIP_OR_FAIL("needs a display (run under xvfb-run)");
  EngineConfig cfg;
  cfg.model_path = model_path();
  cfg.n_threads = 2;
  cfg.kv_pool_tokens = 320;  // what the eviction demo asks for
  auto engine = Engine::create(cfg);
  ASSERT_TRUE(engine.ok()) << engine.status().to_string();
  CachePanel panel;
  panel.resize(900, 700);
  panel.show();
  ASSERT_TRUE(QTest::qWaitForWindowExposed(&panel));
  panel.setEngine(engine.value().get());
  CachePanelState& st = *panel.state();
  const auto& all = panel::demo_scenarios();
  auto find = [&](const std::string& name) {
    for (size_t i = 0; i < all.size(); ++i)
      if (all[i].name.rfind(name, 0) == 0) return i;
    return all.size();
  };
  st.demo.seconds_per_step = 0.2;

  ASSERT_TRUE(st.demo.start(find("Shared system prompt"), engine.value().get(), "radix", 0));
  ASSERT_TRUE(wait_for([&] { return st.demo.step() >= 1; }, 60000));
  EXPECT_NE(st.demo.caption().find("Step 2/3"), std::string::npos) << st.demo.caption();
  ASSERT_TRUE(wait_for([&] { return st.demo.finished(); }, 120000)) << st.demo.caption();
  QTest::qWait(300);
  // Some node has three children: the shared system prompt.
  size_t widest = 0;
  for (const auto& [id, n] : st.model.nodes()) widest = std::max(widest, n.children.size());
  EXPECT_EQ(widest, 3u);

  ASSERT_TRUE(st.demo.start(find("Eviction"), engine.value().get(), "radix", 0));
  int ghosts_seen = 0;
  ASSERT_TRUE(wait_for(
      [&] {
        const int g = st.view.stats().ghosts_drawn;
        if (g > 0 && ghosts_seen == 0) {  // the first fade-out, for the record
          const std::string shot =
              std::string(RADIXCHAT_BINARY_DIR) + "/tests/ui/panel/panel-eviction.png";
          EXPECT_TRUE(panel.grab().save(QString::fromStdString(shot)));
        }
        ghosts_seen = std::max(ghosts_seen, g);
        return st.demo.finished();
      },
      240000))
      << st.demo.caption();
  QTest::qWait(300);
  EXPECT_GT(engine.value()->stats().cache.evictions, 0u);
  bool logged = false;
  for (const panel::LogEntry& e : st.log.entries())
    logged |= e.kind == CacheEventKind::evict && e.seq != UINT64_MAX;
  EXPECT_TRUE(logged) << "evictions appear in the event log";
  EXPECT_GT(ghosts_seen, 0) << "evicted nodes fade out on the canvas";
  EXPECT_EQ(st.model.infos(), engine.value()->cache_snapshot().nodes);
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
  EXPECT_EQ(st.conversation_titles, (std::vector<std::string>{"Trip planning", "Octopus facts"}));
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
