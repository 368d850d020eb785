// The panel's explanation marks on the bundled model's real tokenizer, in a
// real window (run under xvfb-run, like panel-gui-test): a reply cached once
// as its text encodes and once re-encoded character by character is marked
// as a look-alike at the first token where the two part, and a context cut
// reported through CachePanel::markContextCut badges the node where the cut
// prompt leaves the cached path. Screenshot: tests/ui/panel/marks-gui.png.
#include <gtest/gtest.h>

#include <QElapsedTimer>
#include <QGuiApplication>
#include <QHBoxLayout>
#include <QImage>
#include <QTest>
#include <QWidget>
#include <filesystem>
#include <functional>

#include "panel/cache-panel-gl.h"
#include "panel/cache-panel-state.h"
#include "panel/cache-panel.h"
#include "radixchat/engine.h"
#include "skip-or-fail.h"
#include "test-paths.h"

namespace rc::ui {
namespace {

using rc::test::test_model_path;

bool wait_for(const std::function<bool()>& done, int timeout_ms) {
  QElapsedTimer t;
  t.start();
  while (!done()) {
    if (t.elapsed() > timeout_ms) return false;
    QTest::qWait(20);
  }
  return true;
}

std::vector<int32_t> cat(std::vector<int32_t> a, const std::vector<int32_t>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

size_t common_prefix(const std::vector<int32_t>& a, const std::vector<int32_t>& b) {
  size_t n = 0;
  while (n < a.size() && n < b.size() && a[n] == b[n]) ++n;
  return n;
}

TEST(MarksGui, AReencodedReplyAndAContextCutAreMarked) {
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
  auto* box = new QHBoxLayout(&window);
  box->setContentsMargins(0, 0, 0, 0);
  auto* panel = new CachePanel(&window);
  box->addWidget(panel);
  window.resize(1000, 760);
  window.show();
  ASSERT_TRUE(QTest::qWaitForWindowExposed(&window));
  ASSERT_TRUE(panel->hasGl()) << panel->unavailableReason().toStdString();
  panel->setEngine(&e);
  CachePanelState& st = *panel->state();

  // One reply cached twice after the same prompt: as its text encodes, and
  // re-encoded one character at a time (the same text, other ids). A shared
  // last token keeps both texts whole whether or not it is cached.
  const std::vector<int32_t> prompt =
      e.render_chat({{"system", "Answer briefly."}, {"user", "What is a KV cache?"}}).value();
  const std::string reply = "It keeps the keys and values of earlier tokens";
  const std::vector<int32_t> encoded = e.tokenize(reply, false).value();
  std::vector<int32_t> split;
  for (size_t i = 0; i < reply.size(); ++i)
    split = cat(split, e.tokenize(reply.substr(i, 1), false).value());
  ASSERT_NE(encoded, split);
  ASSERT_EQ(e.detokenize(cat(prompt, encoded)), e.detokenize(cat(prompt, split)));
  const std::vector<int32_t> tail = e.tokenize("!", false).value();
  ASSERT_TRUE(e.last_logits(cat(cat(prompt, encoded), tail)).ok());
  ASSERT_TRUE(e.last_logits(cat(cat(prompt, split), tail)).ok());

  // A chat whose first exchange was cut: the prompt sent keeps the system
  // prompt and the latest turn only.
  const std::string system = "You are RadixChat, a friendly assistant on this computer.";
  const std::vector<int32_t> old = e.render_chat({{"system", system},
                                                  {"user", "Hello there"},
                                                  {"assistant", "Hello! How can I help?"},
                                                  {"user", "Tell me about radix trees"}})
                                       .value();
  ASSERT_TRUE(e.last_logits(old).ok());
  const std::vector<int32_t> cut =
      e.render_chat({{"system", system}, {"user", "Tell me about radix trees"}}).value();
  const size_t reused = common_prefix(old, cut);
  ASSERT_GT(reused, 0u);
  ASSERT_TRUE(e.last_logits(cut).ok());
  ASSERT_TRUE(wait_for([&] { return st.tree.model.infos() == e.cache_snapshot().nodes; }, 10000));

  // The look-alike: the node of the encoded reply, told apart from the
  // re-encoded one at their first differing token.
  const size_t k = common_prefix(encoded, split);
  const NodeId parent = st.tree.model.locate(cat(prompt, {encoded.begin(), encoded.begin() + k}));
  ASSERT_EQ(st.tree.model.path_tokens(parent).size(), prompt.size() + k);
  NodeId mine = kNoNode, other = kNoNode;
  for (NodeId c : st.tree.model.find(parent)->children) {
    const panel::TreeNode* n = st.tree.model.find(c);
    if (n->tokens.at(0) == encoded[k]) mine = c;
    if (n->tokens.at(0) == split[k]) other = c;
  }
  ASSERT_NE(mine, kNoNode);
  ASSERT_NE(other, kNoNode);
  ASSERT_TRUE(wait_for([&] { return st.tree.look_alikes.find(mine) != nullptr; }, 5000));
  const panel::SiblingDiff& d = *st.tree.look_alikes.find(mine);
  EXPECT_EQ(d.sibling, other);
  EXPECT_EQ(d.span_index, 0u);
  EXPECT_EQ(d.path_index, int64_t(prompt.size() + k));
  EXPECT_EQ(d.token, encoded[k]);
  EXPECT_EQ(d.sibling_token, split[k]);
  EXPECT_TRUE(d.why == panel::LookAlike::same_text_split ||
              d.why == panel::LookAlike::same_text_space)
      << panel::look_alike_why(d.why);
  EXPECT_NE(st.tree.look_alikes.find(other), nullptr);

  // The context cut: reported as the app does, badged where `cut` leaves
  // the old path.
  panel->markContextCut(2, cut, int(reused));
  const NodeId branch = st.tree.model.locate({cut.begin(), cut.begin() + ptrdiff_t(reused)});
  EXPECT_EQ(st.tree.context_cut.node, branch);
  EXPECT_EQ(st.tree.model.path_tokens(branch).size(), reused);
  EXPECT_EQ(st.tree.model.find(branch)->children.size(), 2u);
  ASSERT_TRUE(wait_for([&] { return st.tree.view.stats().cut_marks_drawn == 1; }, 5000));
  EXPECT_GE(st.tree.view.stats().look_alikes_drawn, 2);
  st.tree.select(mine);  // the Node tab explains the look-alike in the picture
  QTest::qWait(600);
  EXPECT_GT(st.tree.view.top_inset, 0);  // the banner
  const QImage shot = window.grab().toImage();
  const std::string path = RADIXCHAT_BINARY_DIR "/tests/ui/panel/marks-gui.png";
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  EXPECT_TRUE(shot.save(QString::fromStdString(path)));
}

}  // namespace
}  // namespace rc::ui
