// The panel's explanation marks, without a window or GL: siblings
// that read the same with other token ids (first differing token, both ids
// and pieces, why), and the context cut's badge on the node where the
// prompt sent after the cut leaves the cached path. Real KvCaches feed the
// panel; a small vocabulary stands in for a tokenizer.
#include <gtest/gtest.h>
#include <imgui.h>

#include <map>

#include "panel/cache-panel-state.h"
#include "panel/label-text.h"
#include "panel/panel-style.h"
#include "ui/panel/headless-imgui.h"
#include "ui/panel/panel-workload.h"

namespace rc::ui::panel {
namespace {

// Ids and the text they stand for; 22 is a control token (renders as nothing).
const std::map<Token, std::string>& vocab() {
  static const std::map<Token, std::string> v = {
      {1, "<sys>"},         {2, "Be brief."}, {3, "Be kind."}, {10, " Hello"}, {11, " world"},
      {12, " Hello world"}, {13, " Hello "},  {14, "world"},   {15, " bye"},   {20, " Hi"},
      {21, "\n"},           {22, ""},         {30, " wor"},    {31, "ld"}};
  return v;
}

std::string vocab_text(const std::vector<Token>& tokens) {
  std::string s;
  for (Token t : tokens) {
    auto it = vocab().find(t);
    s += it != vocab().end() ? it->second
                             : std::string(1, '<').append(std::to_string(t)).append(">");
  }
  return s;
}

std::vector<Token> chars(const std::string& s) { return {s.begin(), s.end()}; }

// One request through the cache protocol; returns the matched prefix length.
int64_t run_request(KvCache& c, const std::vector<Token>& key) {
  const int64_t ps = c.config().page_size;
  MatchResult m = c.match_prefix(key);
  std::vector<PageId> pages = m.pages;
  const int64_t need = (int64_t(key.size()) - m.tokens + ps - 1) / ps;
  EXPECT_TRUE(c.alloc_pages(need, pages).ok());
  const size_t aligned = key.size() / size_t(ps) * size_t(ps);
  EXPECT_TRUE(
      c.insert(std::span(key.data(), aligned), std::span(pages.data(), aligned / size_t(ps))).ok());
  if (pages.size() > aligned / size_t(ps))
    (void)c.free_pages(std::span(pages).subspan(aligned / size_t(ps)));
  return m.tokens;
}

class MarksTest : public ::testing::Test {
 protected:
  void frame(CachePanelState& st, double dt = 1.0 / 60) {
    now_ += dt;
    ImGui::NewFrame();
    st.sync(now_);
    st.draw(now_);
    ImGui::Render();
  }
  static void still(CachePanelState& st) {
    st.tree.view.animate = false;
    st.tree.view.smooth_camera = false;
  }
  static NodeId node_at(const CachePanelState& st, const std::vector<Token>& path) {
    const NodeId id = st.tree.model.locate(path);
    EXPECT_EQ(st.tree.model.path_tokens(id), path);
    return id;
  }
  // Vertices of `colour` inside node `id`'s screen box grown by `grow` pixels.
  static int colour_in_box(CachePanelState& st, NodeId id, ImU32 colour, float grow) {
    float x, y, w, h;
    if (!st.tree.view.world_box(id, st.tree.layout(0), &x, &y, &w, &h)) return -1;
    const ImVec2 p0 = st.tree.view.to_screen(x, y), p1 = st.tree.view.to_screen(x + w, y + h);
    const ImDrawData* dd = ImGui::GetDrawData();
    int n = 0;
    for (int l = 0; l < dd->CmdListsCount; ++l)
      for (const ImDrawVert& v : dd->CmdLists[l]->VtxBuffer)
        n += v.col == colour && v.pos.x >= p0.x - grow && v.pos.x <= p1.x + grow &&
             v.pos.y >= p0.y - grow && v.pos.y <= p1.y + grow;
    return n;
  }

  HeadlessImGui imgui_{ImVec2(1100, 800), 15.0f};
  double now_ = 0;
};

// Four replies under one system prompt (three read " Hello world") and
// three under another (" Hi" with a line break or a control token before).
void grow_look_alikes(KvCache& c) {
  for (const std::vector<Token>& k : std::vector<std::vector<Token>>{{1, 2, 10, 11},
                                                                     {1, 2, 12},
                                                                     {1, 2, 13, 14},
                                                                     {1, 2, 15},
                                                                     {1, 3, 20},
                                                                     {1, 3, 21, 20},
                                                                     {1, 3, 22, 20}})
    run_request(c, k);
}

TEST(VisibleText, SpacesControlsAndBytesAreShown) {
  EXPECT_EQ(visible_text("a b\n\t\\\x01"),
            "a\xC2\xB7"
            "b\\n\\t\\\\\\x01");
  EXPECT_EQ(visible_text("\xEF\xBF\xBD"), "\\uFFFD");
  EXPECT_EQ(visible_text("\xC3"), "\\xC3");               // a lone lead byte
  EXPECT_EQ(visible_text("caf\xC3\xA9"), "caf\xC3\xA9");  // whole UTF-8 stays
  EXPECT_EQ(token_and_piece(22, ""), "22 (renders as nothing: a control token)");
  EXPECT_EQ(token_and_piece(10, "\xC2\xB7Hello"), "10 \"\xC2\xB7Hello\"");
}

TEST_F(MarksTest, SiblingsThatReadTheSameShowTheirFirstDifferingToken) {
  auto cache = rc::test::make_panel_cache(1, 4096);
  grow_look_alikes(*cache);
  CachePanelState st;
  st.set_feed(make_kv_cache_feed(*cache, vocab_text), 0);
  still(st);
  frame(st);
  const NodeId a = node_at(st, {1, 2, 10, 11}), b = node_at(st, {1, 2, 12}),
               c = node_at(st, {1, 2, 13, 14}), d = node_at(st, {1, 2, 15});
  const NodeId e = node_at(st, {1, 3, 20}), f = node_at(st, {1, 3, 21, 20}),
               g = node_at(st, {1, 3, 22, 20});
  EXPECT_EQ(st.tree.look_alikes.size(), 6u);

  const SiblingDiff* da = st.tree.look_alikes.find(a);
  ASSERT_NE(da, nullptr);
  EXPECT_EQ(da->sibling, b);
  EXPECT_EQ(da->span_index, 0u);
  EXPECT_EQ(da->path_index, 2);
  EXPECT_EQ(da->token, 10);
  EXPECT_EQ(da->sibling_token, 12);
  EXPECT_EQ(da->piece, "\xC2\xB7Hello");
  EXPECT_EQ(da->sibling_piece, "\xC2\xB7Hello\xC2\xB7world");
  EXPECT_EQ(da->why, LookAlike::same_text_split);
  EXPECT_EQ(da->others, 1u);  // c reads the same too
  EXPECT_EQ(look_alike_why(da->why), "the same text split into other tokens (a re-encoded reply?)");
  EXPECT_EQ(first_difference_where(*da), "token 3 of the prompt path (1st of this node)");

  ASSERT_NE(st.tree.look_alikes.find(b), nullptr);
  EXPECT_EQ(st.tree.look_alikes.find(b)->sibling, a);
  EXPECT_EQ(st.tree.look_alikes.find(b)->token, 12);

  const SiblingDiff* dc = st.tree.look_alikes.find(c);
  ASSERT_NE(dc, nullptr);
  EXPECT_EQ(dc->sibling, a);
  EXPECT_EQ(dc->token, 13);
  EXPECT_EQ(dc->piece, "\xC2\xB7Hello\xC2\xB7");
  EXPECT_EQ(dc->why, LookAlike::same_text_space);

  // Control cases: a sibling with other text, and parents whose children
  // differ ("Be brief." / "Be kind."), carry no mark.
  EXPECT_EQ(st.tree.look_alikes.find(d), nullptr);
  EXPECT_EQ(st.tree.look_alikes.find(node_at(st, {1, 2})), nullptr);
  EXPECT_EQ(st.tree.look_alikes.find(node_at(st, {1, 3})), nullptr);

  const SiblingDiff* de = st.tree.look_alikes.find(e);
  ASSERT_NE(de, nullptr);
  EXPECT_EQ(de->sibling, f);
  EXPECT_EQ(de->token, 20);
  EXPECT_EQ(de->sibling_token, 21);
  EXPECT_EQ(de->sibling_piece, "\\n");
  EXPECT_EQ(de->why, LookAlike::whitespace_control);
  const SiblingDiff* dg = st.tree.look_alikes.find(g);
  ASSERT_NE(dg, nullptr);
  EXPECT_EQ(dg->sibling, e);
  EXPECT_EQ(dg->token, 22);
  EXPECT_EQ(dg->piece, "");  // the control token
  EXPECT_EQ(dg->why, LookAlike::whitespace_control);
  EXPECT_EQ(look_alike_why(dg->why), "differs only in whitespace/control tokens");

  // Marked on the boxes: the amber corner inside each look-alike, none on
  // the sibling with other text.
  frame(st);
  EXPECT_EQ(st.tree.view.stats().look_alikes_drawn, 6);
  for (NodeId id : {a, b, c, e, f, g})
    EXPECT_GT(colour_in_box(st, id, MarkColours::look_alike, 0), 0);
  EXPECT_EQ(colour_in_box(st, d, MarkColours::look_alike, 0), 0);

  // Hovered, its tooltip says so (a window more); selected, the Node tab.
  float x, y, w, h;
  ASSERT_TRUE(st.tree.view.world_box(a, st.tree.layout(now_), &x, &y, &w, &h));
  const int lists = ImGui::GetDrawData()->CmdListsCount;
  ImGui::GetIO().MousePos = st.tree.view.to_screen(x + w / 2, y + h / 2);
  frame(st);
  frame(st);
  EXPECT_GT(ImGui::GetDrawData()->CmdListsCount, lists);
  ImGui::GetIO().MousePos = ImVec2(-1, -1);
  st.tree.select(a);
  frame(st);
  EXPECT_EQ(st.frame.current_tab, "Node");
}

TEST_F(MarksTest, PagedSiblingsPartAfterTheirSharedTokens) {
  // Page 2: children are keyed by their first page, so siblings may share
  // tokens before they part.
  auto cache = rc::test::make_panel_cache(2, 4096);
  run_request(*cache, {1, 2, 10, 11});
  run_request(*cache, {1, 2, 10, 30, 31, 22});
  CachePanelState st;
  st.set_feed(make_kv_cache_feed(*cache, vocab_text), 0);
  frame(st);
  const NodeId a = node_at(st, {1, 2, 10, 11});
  const SiblingDiff* d = st.tree.look_alikes.find(a);
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->sibling, node_at(st, {1, 2, 10, 30, 31, 22}));
  EXPECT_EQ(d->span_index, 1u);
  EXPECT_EQ(d->path_index, 3);
  EXPECT_EQ(d->token, 11);
  EXPECT_EQ(d->sibling_token, 30);
  EXPECT_EQ(d->piece, "\xC2\xB7world");
  EXPECT_EQ(d->sibling_piece, "\xC2\xB7wor");
  EXPECT_EQ(d->why, LookAlike::same_text_split);
  EXPECT_EQ(first_difference_where(*d), "token 4 of the prompt path (2nd of this node)");
}

TEST_F(MarksTest, LookAlikesAreRecomputedOnlyWhenTheTreeChanges) {
  auto cache = rc::test::make_panel_cache(1, 4096);
  run_request(*cache, {1, 2, 10, 11});
  CachePanelState st;
  st.set_feed(make_kv_cache_feed(*cache, vocab_text), 0);
  frame(st);
  const uint64_t n0 = st.tree.look_alikes.computations();
  frame(st);
  frame(st);
  EXPECT_EQ(st.tree.look_alikes.computations(), n0);
  EXPECT_EQ(st.tree.look_alikes.size(), 0u);
  run_request(*cache, {1, 2, 15});  // other text: still nothing to mark
  frame(st);
  EXPECT_GT(st.tree.look_alikes.computations(), n0);
  EXPECT_EQ(st.tree.look_alikes.size(), 0u);
  run_request(*cache, {1, 2, 12});  // the same text as the first reply
  frame(st);
  EXPECT_EQ(st.tree.look_alikes.size(), 2u);
  EXPECT_NE(st.tree.look_alikes.find(node_at(st, {1, 2, 12})), nullptr);
}

TEST_F(MarksTest, ContextCutBadgesTheBranchPointAndMovesWithTheNextCut) {
  auto cache = rc::test::make_panel_cache(1, 4096);
  run_request(*cache, chars("<sys> Be brief. <user> one <bot> 1 <user> two <bot> 2 "));
  CachePanelState st;
  st.set_feed(make_kv_cache_feed(*cache), 0);
  still(st);
  frame(st);
  EXPECT_EQ(st.tree.context_cut.node, kNoNode);
  // The first exchange no longer fits: the prompt sent keeps the system
  // prompt and the second one.
  const std::vector<Token> cut1 = chars("<sys> Be brief. <user> two <bot> 2 <user> three <bot>");
  const int64_t reused1 = run_request(*cache, cut1);
  ASSERT_EQ(reused1, int64_t(std::string("<sys> Be brief. <user> ").size()));
  frame(st);
  st.mark_context_cut(2, cut1, reused1, now_);
  frame(st);
  const NodeId branch1 = node_at(st, std::vector<Token>(cut1.begin(), cut1.begin() + reused1));
  EXPECT_EQ(st.tree.context_cut.node, branch1);
  EXPECT_EQ(st.tree.model.find(branch1)->children.size(), 2u);  // the old path and the new prompt
  EXPECT_EQ(st.tree.context_cut.badge(), "context cut: 2 messages dropped");
  EXPECT_EQ(st.tree.view.stats().cut_marks_drawn, 1);
  EXPECT_GT(colour_in_box(st, branch1, MarkColours::context_cut, 8), 0);
  EXPECT_GT(st.tree.view.top_inset, 0);  // the banner
  {                                      // its tooltip and Node tab explain it
    float x, y, w, h;
    ASSERT_TRUE(st.tree.view.world_box(branch1, st.tree.layout(now_), &x, &y, &w, &h));
    const int lists = ImGui::GetDrawData()->CmdListsCount;
    ImGui::GetIO().MousePos = st.tree.view.to_screen(x + w / 2, y + h / 2);
    frame(st);
    frame(st);
    EXPECT_GT(ImGui::GetDrawData()->CmdListsCount, lists);
    ImGui::GetIO().MousePos = ImVec2(-1, -1);
    st.tree.select(branch1);
    frame(st);
  }
  EXPECT_NE(st.tree.context_cut.banner(now_).find("branches off at #" + std::to_string(branch1)),
            std::string::npos);
  bool logged = false;
  for (const LogEntry& e : st.log.entries()) logged |= e.text.find("context cut") == 0;
  EXPECT_TRUE(logged);

  // The banner goes after a few seconds; the badge stays.
  frame(st, ContextCut::kBannerSeconds + 1);
  frame(st);
  EXPECT_EQ(st.tree.view.top_inset, 0);
  EXPECT_EQ(st.tree.view.stats().cut_marks_drawn, 1);

  // The next cut replaces it: another branch point, the old box unmarked.
  const std::vector<Token> cut2 = chars("<sys> Be brief. <user> three <bot> 3 <user> four <bot>");
  const int64_t reused2 = run_request(*cache, cut2);
  ASSERT_EQ(reused2, int64_t(std::string("<sys> Be brief. <user> t").size()));
  frame(st);
  st.mark_context_cut(3, cut2, reused2, now_);
  frame(st);
  const NodeId branch2 = node_at(st, std::vector<Token>(cut2.begin(), cut2.begin() + reused2));
  EXPECT_NE(branch2, branch1);
  EXPECT_EQ(st.tree.context_cut.node, branch2);
  EXPECT_EQ(st.tree.context_cut.badge(), "context cut: 3 messages dropped");
  EXPECT_EQ(st.tree.view.stats().cut_marks_drawn, 1);
  EXPECT_GT(colour_in_box(st, branch2, MarkColours::context_cut, 8), 0);
  EXPECT_EQ(colour_in_box(st, branch1, MarkColours::context_cut, 0), 0);

  // Once the shared prefix is gone from the cache, nothing is marked.
  ASSERT_TRUE(cache->reset().ok());
  frame(st);
  frame(st);
  EXPECT_EQ(st.tree.context_cut.node, kNoNode);
  EXPECT_EQ(st.tree.view.stats().cut_marks_drawn, 0);
}

TEST_F(MarksTest, ACutReportedBeforeItsPromptIsCachedMovesToTheSplit) {
  auto cache = rc::test::make_panel_cache(1, 4096);
  const std::vector<Token> old = chars("<sys> Be kind. <user> a <bot> b ");
  run_request(*cache, old);
  CachePanelState st;
  st.set_feed(make_kv_cache_feed(*cache), 0);
  frame(st);
  const std::vector<Token> cut = chars("<sys> Be kind. <user> c <bot>");
  const int64_t reused = int64_t(std::string("<sys> Be kind. <user> ").size());
  st.mark_context_cut(1, cut, reused, now_);
  // Not inserted yet: the prompt leaves the cached path inside the old node.
  const NodeId whole = node_at(st, old);
  EXPECT_EQ(st.tree.context_cut.node, whole);
  EXPECT_EQ(st.tree.context_cut.node_shared, reused);
  EXPECT_NE(st.tree.context_cut.detail().find("after its first"), std::string::npos);
  run_request(*cache, cut);
  frame(st);
  const NodeId branch = node_at(st, std::vector<Token>(cut.begin(), cut.begin() + reused));
  EXPECT_EQ(st.tree.context_cut.node, branch);
  // Without the prompt (a source that does not send it) there is no badge,
  // only the banner and the log line.
  st.mark_context_cut(4, {}, 0, now_);
  frame(st);
  EXPECT_EQ(st.tree.context_cut.node, kNoNode);
  EXPECT_EQ(st.tree.view.stats().cut_marks_drawn, 0);
  EXPECT_FALSE(st.tree.context_cut.banner(now_).empty());
}

// Drafted decoding: a draft read from the tree marks the node it came from
// (an outline and a "drafted N · kept M" tag that fade; drafts from the
// same node while the mark lasts add up) and the header line counts
// kept of drafted tokens once one was kept; a prompt-lookup draft is
// counted and marks nothing, and alone (a first reply) adds no line.
TEST_F(MarksTest, ADraftMarksItsSourceNodeAndTheHeaderCountsIt) {
  auto cache = rc::test::make_panel_cache(1, 4096);
  const std::vector<Token> prompt{1, 2, 10}, whole{1, 2, 10, 11, 15, 20, 21, 14};
  run_request(*cache, whole);   // a first reply
  run_request(*cache, prompt);  // its regeneration's prompt splits the reply off
  CachePanelState st;
  st.set_feed(make_kv_cache_feed(*cache, vocab_text), 0);
  still(st);
  frame(st);
  frame(st);
  const NodeId reply = node_at(st, whole);
  EXPECT_EQ(st.draft_line(), "");
  // Vertices of the draft colour at any alpha (the mark fades) around a box.
  auto drafted_in_box = [&](NodeId id) {
    float x, y, w, h;
    if (!st.tree.view.world_box(id, st.tree.layout(0), &x, &y, &w, &h)) return -1;
    ImVec2 p0 = st.tree.view.to_screen(x, y), p1 = st.tree.view.to_screen(x + w, y + h);
    p0 = ImVec2(p0.x - 8, p0.y - 8);
    p1 = ImVec2(p1.x + 8, p1.y + 8);
    const ImDrawData* dd = ImGui::GetDrawData();
    int n = 0;
    for (int l = 0; l < dd->CmdListsCount; ++l)
      for (const ImDrawVert& v : dd->CmdLists[l]->VtxBuffer)
        n += (v.col & 0x00FFFFFFu) == (Palette::drafted & 0x00FFFFFFu) && v.pos.x >= p0.x &&
             v.pos.x <= p1.x && v.pos.y >= p0.y && v.pos.y <= p1.y;
    return n;
  };
  EXPECT_EQ(drafted_in_box(reply), 0);

  const Continuation c = cache->peek_continuation(prompt, 4);
  ASSERT_EQ(c.tokens, (std::vector<Token>{11, 15, 20, 21}));
  ASSERT_EQ(c.node.id, reply);
  cache->note_draft(NodeHandle{kNoNode, 0}, 5, 0);  // from the prompt, nothing kept
  frame(st);
  EXPECT_EQ(st.tree.model.draft_counts().drafted_tokens, 5u);
  EXPECT_EQ(st.draft_line(), "") << "a draft that kept nothing is not news";
  cache->note_draft(c.node, 4, 3);
  cache->note_draft(c.node, 4, 4);
  frame(st);
  EXPECT_EQ(st.tree.view.stats().draft_marks_drawn, 1);
  EXPECT_GT(drafted_in_box(reply), 0);
  EXPECT_EQ(drafted_in_box(node_at(st, prompt)), 0);
  EXPECT_EQ(st.tree.model.find(reply)->draft_tokens, 8u);
  EXPECT_EQ(st.tree.model.find(reply)->draft_kept, 7u);
  EXPECT_EQ(draft_text(8, 7), "drafted 8 \xC2\xB7 kept 7");
  EXPECT_EQ(st.draft_line(), "drafts: 7 of 13 tokens kept");
  EXPECT_EQ(st.tree.model.draft_counts().tree_drafts, 2u);
  ASSERT_GE(st.log.entries().size(), 3u);
  const auto& log = st.log.entries();
  EXPECT_EQ(log[log.size() - 3].text, "draft 5 tok from the prompt, 0 kept, 5 wasted");
  EXPECT_EQ(log[log.size() - 2].text.rfind(
                "draft 4 tok from #" + std::to_string(reply) + ", 3 kept, 1 wasted  \"", 0),
            0u)
      << log[log.size() - 2].text;

  // Faded: no mark, the counts stay; a later draft starts a new mark.
  frame(st, kDraftGlow + 0.5);
  EXPECT_EQ(st.tree.view.stats().draft_marks_drawn, 0);
  EXPECT_EQ(drafted_in_box(reply), 0);
  EXPECT_EQ(st.draft_line(), "drafts: 7 of 13 tokens kept");
  cache->note_draft(c.node, 4, 4);
  frame(st);
  EXPECT_EQ(st.tree.view.stats().draft_marks_drawn, 1);
  EXPECT_EQ(st.tree.model.find(reply)->draft_tokens, 4u);
  EXPECT_EQ(st.tree.model.find(reply)->draft_kept, 4u);
}

}  // namespace
}  // namespace rc::ui::panel
