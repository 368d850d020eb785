// The miss explanation widget (miss-view.h), and the live panel's "Why it
// missed" for the prompt of the chat message the user located
// (CachePanelState::explain_located / draw_live_miss).
#include "panel/miss-view.h"

#include <imgui.h>

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
  live_miss = miss_explainer(feed->snapshot(), located_tokens,
                             [feed](const std::vector<Token>& t) { return feed->detokenize(t); });
  live_miss_valid = true;
  live_miss_node_ = selected;
}

void CachePanelState::draw_live_miss() {
  if (!live_miss_valid || !can_explain_located()) return;
  // Under the located node: the one locate() selected, or where the prompt
  // leaves the tree now (events applied after the locate move it).
  const NodeId target = located_partial != kNoNode ? located_partial : located;
  if (selected != target && selected != live_miss_node_) return;
  ImGui::Separator();
  ImGui::TextWrapped("Why it missed: the located message's prompt, against the cache now");
  panel::flow(panel::button_w("Recheck"));
  if (ImGui::SmallButton("Recheck")) explain_located();
  if (ImGui::IsItemHovered())
    panel::tooltip(
        "Compare the prompt with the cache as it is now. The tree has moved on since the "
        "request ran: its own prompt was cached after it, and later requests may have "
        "evicted parts of it.");
  panel::draw_miss_view(live_miss, "the cache now");
  ImGui::Separator();
}

}  // namespace rc::ui
