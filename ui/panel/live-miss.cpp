// The live panel's "Why it missed" for the prompt of the chat message the
// user located (CachePanelState::explain_located): against the feed's
// snapshot, drawn with the miss view (miss-view.h) under the located node.
#include <imgui.h>

#include "panel/cache-panel-state.h"
#include "panel/panel-widgets.h"

namespace rc::ui {

bool CachePanelState::can_explain_located() const {
  return miss_explainer && source.feed && !tree.located_tokens.empty() && !replay_shown() &&
         !remote_shown() && !lesson_shown();
}

void CachePanelState::explain_located() {
  tree.live_miss = {};
  tree.live_miss_valid = false;
  if (!can_explain_located()) return;
  // The feed's own snapshot, not the panel's model: paused, the model lags
  // behind the cache by the queued events.
  panel::CacheFeed* feed = source.feed.get();
  const panel::LocatedRequest& r = tree.located_request;
  std::vector<Token> prompt = tree.located_tokens;
  if (r.prompt_tokens > 0 && r.prompt_tokens <= int64_t(prompt.size()))
    prompt.resize(size_t(r.prompt_tokens));
  CacheSnapshot cache = feed->snapshot();
  if (r.cached_tokens >= 0) cache = panel::without_own_path(cache, prompt, r.cached_tokens);
  tree.live_miss = miss_explainer(
      cache, prompt, [feed](const std::vector<Token>& t) { return feed->detokenize(t); });
  if (r.cached_tokens >= 0) tree.live_miss.matched_tokens = r.cached_tokens;
  tree.live_miss_valid = true;
  tree.live_miss_node = tree.selected;
}

void CachePanelState::draw_live_miss() {
  if (!tree.live_miss_valid || !can_explain_located()) return;
  // Under the located node: the one locate() selected, or where the prompt
  // leaves the tree now (events applied after the locate move it).
  const NodeId target = tree.located_partial != kNoNode ? tree.located_partial : tree.located;
  if (tree.selected != target && tree.selected != tree.live_miss_node) return;
  const bool own_left_out = tree.located_request.cached_tokens >= 0;
  ImGui::Separator();
  ImGui::TextWrapped("Why it missed: the located message's request, against the cache now");
  panel::flow(panel::button_w("Recheck"));
  if (ImGui::SmallButton("Recheck")) explain_located();
  if (ImGui::IsItemHovered())
    panel::tooltip(
        "Compare the prompt with the cache as it is now. The tree has moved on since the "
        "request ran: its own prompt was cached after it (left out here when the reply "
        "says how much was cached), later requests added paths and evictions removed some.");
  panel::draw_miss_view(tree.live_miss, own_left_out ? "the cache now, less what this request added"
                                                     : "the cache now");
  ImGui::Separator();
}

}  // namespace rc::ui
