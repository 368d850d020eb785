// The cache panel attached to a remote cache, under xvfb-run: a
// KV-events publisher in this process (the same one `serve --kv-events`
// uses) sends two ranks' block chains in vLLM's format; the panel, attached
// through the app's connector (ZeroMQ subscriber) with the bundled model's
// vocabulary, must fold each rank's chains into radix nodes (shared prefix
// with two children on rank 0, one run on rank 1, a "rank N" node per
// rank), say that locks and hit rate are unavailable, and show the tree in
// the screenshot. Detach brings the local feed (none here) back.
#include <gtest/gtest.h>

#include <QApplication>
#include <QElapsedTimer>
#include <QHBoxLayout>
#include <QImage>
#include <QSet>
#include <QTest>
#include <cstdlib>
#include <filesystem>

#include "kv-publisher.h"
#include "panel/cache-panel-state.h"
#include "panel/cache-panel.h"
#include "radixchat/model-tools.h"
#include "remote-cache-source.h"
#include "skip-or-fail.h"
#include "test-paths.h"

namespace rc::ui {
namespace {

using rc::test::test_model_path;

std::string screenshot_path() {
  if (const char* env = std::getenv("RADIXCHAT_REMOTE_PANEL_SCREENSHOT"); env && *env) return env;
  return RADIXCHAT_BINARY_DIR "/tests/ui/panel/remote-panel-gui.png";
}

bool wait_for(const std::function<bool()>& done, int timeout_ms,
              const std::function<void()>& each = {}) {
  QElapsedTimer t;
  t.start();
  while (!done()) {
    if (t.elapsed() > timeout_ms) return false;
    if (each) each();
    QTest::qWait(50);
  }
  return true;
}

std::vector<int64_t> tokens(const std::string& text, size_t block) {
  auto ids = tokenize_with_model(test_model_path(), text, false, false);
  EXPECT_TRUE(ids.ok());
  std::vector<int64_t> out(ids->begin(), ids->end());
  out.resize(out.size() / block * block);  // whole blocks only, as vLLM sends
  return out;
}

kv_events::BlockHash hash(uint64_t v) {
  kv_events::BlockHash h(9, 'i');
  for (int i = 0; i < 8; ++i) h[8 - i] = static_cast<char>((v >> (8 * i)) & 0xff);
  return h;
}

// One BlockStored for `toks` under `parent`, hashes first_hash, first_hash+1...
kv_events::Event stored(const std::vector<int64_t>& toks, std::optional<uint64_t> parent,
                        uint64_t first_hash, size_t block) {
  kv_events::Event e;
  e.kind = kv_events::EventKind::stored;
  e.token_ids = toks;
  e.block_size = int64_t(block);
  if (parent) e.parent = hash(*parent);
  for (size_t i = 0; i < toks.size() / block; ++i) e.block_hashes.push_back(hash(first_hash + i));
  return e;
}

TEST(RemotePanelGui, AttachesToKvEventsAndDrawsTheRemoteTree) {
  if (QGuiApplication::platformName() == "offscreen")
    RC_SKIP_OR_FAIL("no display (run under xvfb-run)");
  if (!std::filesystem::exists(test_model_path())) RC_SKIP_OR_FAIL("the bundled model is missing");
  auto pub = kv_events::Publisher::bind({"tcp://127.0.0.1:*", "", "kv-events", 100});
  ASSERT_TRUE(pub.ok()) << pub.status().message();

  QWidget window;
  auto* box = new QHBoxLayout(&window);
  box->setContentsMargins(0, 0, 0, 0);
  auto* panel = new CachePanel(&window);
  box->addWidget(panel);
  window.resize(900, 760);
  window.show();
  ASSERT_TRUE(QTest::qWaitForWindowExposed(&window));
  if (!panel->hasGl()) RC_SKIP_OR_FAIL(panel->unavailableReason().toStdString());
  panel->setRemoteConnector(gui::make_remote_connector());

  panel::AttachRequest bad;
  bad.endpoint = "nonsense://x";
  EXPECT_NE(panel->attachRemote(bad), "");
  EXPECT_FALSE(panel->remoteAttached());

  panel::AttachRequest req;
  req.endpoint = (*pub)->endpoint();
  req.vocab = test_model_path();
  ASSERT_EQ(panel->attachRemote(req).toStdString(), "");
  ASSERT_TRUE(panel->remoteAttached());

  const size_t B = 4;
  const auto system = tokens("You are a helpful assistant who knows about caches.", B);
  const auto q1 = tokens(" What is a radix tree and why is it fast?", B);
  const auto q2 = tokens(" Tell me about octopus gardens.", B);
  const auto other = tokens("A different prompt on the second rank of the server.", B);
  kv_events::Batch r0, r1;
  r0.events.push_back({});  // AllBlocksCleared: each resend starts afresh
  r0.events.push_back(stored(system, std::nullopt, 1000, B));
  const uint64_t tail = 1000 + system.size() / B - 1;
  r0.events.push_back(stored(q1, tail, 2000, B));
  r0.events.push_back(stored(q2, tail, 3000, B));
  r1.rank = 1;
  r1.events.push_back({});
  r1.events.push_back(stored(other, std::nullopt, 4000, B));

  CachePanelState& st = *panel->state();
  // PUB/SUB joins take a moment: resend until the panel holds both ranks.
  // root + 2 rank nodes + system, q1, q2 (rank 0) + other (rank 1).
  ASSERT_TRUE(wait_for([&] { return st.tree.model.size() == 7; }, 15000,
                       [&] {
                         (*pub)->publish(r0);
                         (*pub)->publish(r1);
                       }))
      << "panel holds " << st.tree.model.size() << " nodes";
  ASSERT_NE(st.feed(), nullptr);
  EXPECT_TRUE(st.feed()->remote());

  // The shared system prompt is one node with two children, under rank 0.
  const panel::TreeNode* sys = nullptr;
  for (const auto& [id, n] : st.tree.model.nodes())
    if (n.tokens.size() == system.size() && n.children.size() == 2) sys = &n;
  ASSERT_NE(sys, nullptr) << "no folded system-prompt node with two children";
  const NodeId sys_id = sys->id;  // the model is rebuilt below: keep the id, not the node
  EXPECT_NE(st.feed()->detokenize(sys->tokens).find("helpful assistant"), std::string::npos);
  const panel::TreeNode* rank0 = st.tree.model.find(sys->parent);
  ASSERT_NE(rank0, nullptr);
  EXPECT_EQ(st.feed()->detokenize(rank0->tokens), "rank 0");
  EXPECT_EQ(rank0->parent, kRootNode);

  QTest::qWait(1200);  // frames: layout, fit, camera
  EXPECT_GE(st.tree.view.stats().nodes_drawn, 6);
  const QImage shot = window.grab().toImage();
  std::filesystem::create_directories(std::filesystem::path(screenshot_path()).parent_path());
  ASSERT_TRUE(shot.save(QString::fromStdString(screenshot_path())));
  QSet<QRgb> colours;
  for (int y = 0; y < shot.height(); y += 4)
    for (int x = 0; x < shot.width(); x += 4) colours.insert(shot.pixel(x, y));
  EXPECT_GT(colours.size(), 50) << "the screenshot looks blank";
  std::printf("screenshot: %s\n", screenshot_path().c_str());

  // An eviction on rank 1 removes its only node; with one rank left the
  // "rank N" level goes too (root + system + q1 + q2).
  kv_events::Batch gone;
  gone.rank = 1;
  kv_events::Event rm;
  rm.kind = kv_events::EventKind::removed;
  for (size_t i = 0; i < other.size() / B; ++i) rm.block_hashes.push_back(hash(4000 + i));
  gone.events.push_back(rm);
  (*pub)->publish(gone);
  EXPECT_TRUE(wait_for([&] { return st.tree.model.size() == 4; }, 5000));
  EXPECT_NE(st.tree.model.find(sys_id), nullptr) << "node ids are stable across updates";

  panel->detachRemote();
  EXPECT_TRUE(wait_for([&] { return st.feed() == nullptr; }, 2000));
  EXPECT_FALSE(panel->remoteAttached());
}

}  // namespace
}  // namespace rc::ui
