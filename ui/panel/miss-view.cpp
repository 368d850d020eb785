// The miss explanation widget (miss-view.h), and the live panel's "Why it
// missed" for the prompt of the chat message the user located
// (CachePanelState::explain_located / draw_live_miss).
#include "panel/miss-view.h"

#include <imgui.h>

#include <algorithm>
#include <cstdint>
#include <unordered_map>
#include <unordered_set>

#include "panel/cache-panel-state.h"
#include "panel/event-log.h"
#include "panel/label-text.h"
#include "panel/panel-fit.h"
#include "panel/panel-widgets.h"

namespace rc::ui {

namespace panel {

namespace {
std::string quoted(const std::string& s) { return "\xC2\xAB" + one_line(s, 160) + "\xC2\xBB"; }
}  // namespace

void draw_miss_view(const MissView& m, const std::string& against) {
  if (!m.ok) {
    ImGui::TextWrapped("%s", m.error.c_str());
    return;
  }
  if (m.matched_tokens >= 0)
    ImGui::TextWrapped("%s of %s prompt tokens were cached.", thousands(m.matched_tokens).c_str(),
                       thousands(m.prompt_tokens).c_str());
  if (m.divergence >= m.prompt_tokens) {
    ImGui::TextWrapped(
        "Against %s, the whole prompt (%s) is on a cached path: a full hit, nothing "
        "diverges.",
        against.c_str(), plural(m.prompt_tokens, "token").c_str());
    return;
  }
  ImGui::TextWrapped(
      "Against %s, the prompt follows the best cached path for %s and diverges at token %s.",
      against.c_str(), plural(m.divergence, "token").c_str(), thousands(m.divergence).c_str());
  ImGui::TextWrapped("Before the divergence: %s", quoted(m.before).c_str());
  if (m.realigned) {
    ImGui::TextWrapped("This prompt had: %s", quoted(m.prompt_span).c_str());
    ImGui::TextWrapped("The cache had: %s", quoted(m.cached_span).c_str());
    ImGui::TextWrapped(
        "Realigned: after that span %s agree again. Without the divergence %s of %s "
        "would have been reused.",
        plural(m.run_after, "token").c_str(), thousands(m.would_reuse).c_str(),
        plural(m.prompt_tokens, "token").c_str());
  } else {
    ImGui::TextWrapped("This prompt went on with: %s", quoted(m.prompt_span).c_str());
    if (!m.cached_next.empty())
      ImGui::TextWrapped("The cached path went on with: %s", quoted(m.cached_next).c_str());
    ImGui::TextWrapped(
        "Not realigned: nothing after it agrees with a cached path, so the rest is new "
        "content (%s of %s reusable).",
        thousands(m.would_reuse).c_str(), plural(m.prompt_tokens, "token").c_str());
  }
}

CacheSnapshot without_own_path(const CacheSnapshot& tree, const std::vector<Token>& prompt,
                               int64_t keep) {
  CacheSnapshot out = tree;
  if (keep < 0 || keep >= int64_t(prompt.size())) keep = int64_t(prompt.size());
  std::unordered_map<NodeId, std::vector<size_t>> children;
  for (size_t i = 0; i < out.nodes.size(); ++i)
    if (out.nodes[i].id != kRootNode) children[out.nodes[i].parent].push_back(i);
  // Down the prompt's path to the node that holds token `keep`.
  NodeId at = kRootNode;
  int64_t depth = 0;
  size_t cut = SIZE_MAX;
  int64_t cut_len = 0;  // tokens of the cut node that stay
  while (depth < int64_t(prompt.size())) {
    size_t next = SIZE_MAX;
    for (size_t i : children[at]) {
      const std::vector<Token>& t = out.nodes[i].tokens;
      if (!t.empty() && t[0] == prompt[size_t(depth)]) next = i;
    }
    if (next == SIZE_MAX) break;
    const CacheNodeInfo& n = out.nodes[next];
    int64_t k = 0;
    while (k < int64_t(n.tokens.size()) && depth + k < int64_t(prompt.size()) &&
           n.tokens[size_t(k)] == prompt[size_t(depth + k)])
      ++k;
    const int64_t size = int64_t(n.tokens.size());
    if (depth + size > keep) {
      // It holds token `keep`; the prompt must agree with it up to there.
      if (depth + k >= keep) {
        cut = next;
        cut_len = keep - depth;
      }
      break;
    }
    if (k < size) break;  // the prompt leaves the tree before `keep`: nothing to cut
    depth += int64_t(n.tokens.size());
    at = n.id;
  }
  if (cut == SIZE_MAX) return out;
  std::unordered_set<NodeId> gone;
  std::vector<NodeId> stack;
  for (size_t i : children[out.nodes[cut].id]) stack.push_back(out.nodes[i].id);
  while (!stack.empty()) {
    const NodeId id = stack.back();
    stack.pop_back();
    gone.insert(id);
    for (size_t i : children[id]) stack.push_back(out.nodes[i].id);
  }
  CacheNodeInfo& c = out.nodes[cut];
  if (cut_len == 0) {
    gone.insert(c.id);
  } else {
    const size_t pages =
        c.tokens.empty()
            ? 0
            : (c.pages.size() * size_t(cut_len) + c.tokens.size() - 1) / c.tokens.size();
    c.tokens.resize(size_t(cut_len));
    c.pages.resize(std::min(c.pages.size(), pages));
  }
  std::erase_if(out.nodes, [&](const CacheNodeInfo& n) { return gone.count(n.id) > 0; });
  return out;
}

}  // namespace panel

bool CachePanelState::can_explain_located() const {
  return miss_explainer && feed_ && !located_tokens.empty() && !replay_shown() && !remote_shown() &&
         !lesson_shown();
}

void CachePanelState::explain_located() {
  live_miss = {};
  live_miss_valid = false;
  if (!can_explain_located()) return;
  // The feed's own snapshot, not the panel's model: paused, the model lags
  // behind the cache by the queued events.
  panel::CacheFeed* feed = feed_.get();
  const panel::LocatedRequest& r = located_request;
  std::vector<Token> prompt = located_tokens;
  if (r.prompt_tokens > 0 && r.prompt_tokens <= int64_t(prompt.size()))
    prompt.resize(size_t(r.prompt_tokens));
  CacheSnapshot tree = feed->snapshot();
  if (r.cached_tokens >= 0) tree = panel::without_own_path(tree, prompt, r.cached_tokens);
  live_miss = miss_explainer(tree, prompt,
                             [feed](const std::vector<Token>& t) { return feed->detokenize(t); });
  if (r.cached_tokens >= 0) live_miss.matched_tokens = r.cached_tokens;
  live_miss_valid = true;
  live_miss_node_ = selected;
}

void CachePanelState::draw_live_miss() {
  if (!live_miss_valid || !can_explain_located()) return;
  // Under the located node: the one locate() selected, or where the prompt
  // leaves the tree now (events applied after the locate move it).
  const NodeId target = located_partial != kNoNode ? located_partial : located;
  if (selected != target && selected != live_miss_node_) return;
  const bool own_left_out = located_request.cached_tokens >= 0;
  ImGui::Separator();
  ImGui::TextWrapped("Why it missed: the located message's request, against the cache now");
  panel::flow(panel::button_w("Recheck"));
  if (ImGui::SmallButton("Recheck")) explain_located();
  if (ImGui::IsItemHovered())
    panel::tooltip(
        "Compare the prompt with the cache as it is now. The tree has moved on since the "
        "request ran: its own prompt was cached after it (left out here when the reply "
        "says how much was cached), later requests added paths and evictions removed some.");
  panel::draw_miss_view(
      live_miss, own_left_out ? "the cache now, less what this request added" : "the cache now");
  ImGui::Separator();
}

}  // namespace rc::ui
