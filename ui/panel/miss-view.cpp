// The miss explanation widget (miss-view.h), and the tree less a request's
// own path it is compared with for a live chat message.
#include "panel/miss-view.h"

#include <imgui.h>

#include <algorithm>
#include <cstdint>
#include <unordered_map>
#include <unordered_set>

#include "panel/label-text.h"
#include "panel/panel-fit.h"
#include "panel/panel-widgets.h"
#include "radixchat/cache-text.h"

namespace rc::ui {

namespace panel {

namespace {
std::string quoted(const std::string& s) {
  return "\xC2\xAB" + one_line(readable_control_tokens(s), 160) + "\xC2\xBB";
}
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

}  // namespace rc::ui
