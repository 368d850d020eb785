// The cache panel's view of the tiers below the pool (docs/architecture.md
// section 8): the feed's TierStats each frame, each node's held_below from a
// snapshot at most once a second (events do not carry it), the counts line,
// and what the Node tab says of a node.
#include <imgui.h>

#include <cstdio>

#include "panel/cache-panel-state.h"
#include "panel/label-text.h"
#include "panel/panel-style.h"

namespace rc::ui {

namespace {

std::string bytes_text(int64_t b) {
  if (b < 0) return "?";
  char buf[32];
  if (b >= 1000000000)
    std::snprintf(buf, sizeof buf, "%.1f GB", double(b) / 1e9);
  else if (b >= 1000000)
    std::snprintf(buf, sizeof buf, "%.1f MB", double(b) / 1e6);
  else if (b >= 1000)
    std::snprintf(buf, sizeof buf, "%.0f kB", double(b) / 1e3);
  else
    std::snprintf(buf, sizeof buf, "%lld B", (long long)b);
  return buf;
}

}  // namespace

void CachePanelState::refresh_tiers(double now) {
  if (!source.has_tiers || source.paused || remote_shown() || replay_shown()) return;
  if (now - held_refreshed_at_ < kHeldRefreshSeconds) return;
  held_refreshed_at_ = now;
  ++held_refreshes;
  if (tree.model.refresh_held_below(source.feed->snapshot())) last_activity = now;
}

std::string CachePanelState::tier_names() const {
  if (!source.has_tiers) return "";
  std::string out;
  for (const TierInfo& t : source.tiers.tiers) out += (out.empty() ? "" : ", ") + t.name;
  return out;
}

std::string CachePanelState::sink_tier() const {
  if (!source.has_tiers || source.tiers.tiers.empty()) return "";
  // The lowest tier that is up is where evicted blocks end up for good.
  for (auto it = source.tiers.tiers.rbegin(); it != source.tiers.tiers.rend(); ++it)
    if (it->state == "up") return it->name;
  return source.tiers.tiers.back().name;
}

std::string CachePanelState::tier_line() const {
  if (!source.has_tiers) return "";
  std::string line;
  for (const TierInfo& t : source.tiers.tiers)
    line += t.name + " " + (t.state == "up" ? bytes_text(t.bytes) : t.state) + " \xC2\xB7 ";
  const panel::TreeModel::TierCounts& c = tree.model.tier_counts();
  line += std::to_string(c.demotions) + " demoted \xC2\xB7 " + std::to_string(c.promotions) +
          " promoted \xC2\xB7 " + panel::plural(int64_t(source.tiers.loads), "load") + " (" +
          panel::thousands(int64_t(source.tiers.loaded_tokens)) + " tok) vs " +
          panel::plural(int64_t(source.tiers.recomputes), "recompute");
  return line;
}

void CachePanelState::draw_node_tiers(const panel::TreeNode& n) {
  if (!source.has_tiers || n.id == kRootNode) return;
  const ImVec4 blue = ImGui::ColorConvertU32ToFloat4(panel::Palette::tier);
  if (n.held_below > 0) {
    ImGui::TextColored(blue, "Also held below the pool: %s of its %s (tiers: %s).",
                       panel::thousands(int64_t(n.held_below)).c_str(),
                       panel::plural(int64_t(n.tokens.size()), "token").c_str(),
                       tier_names().c_str());
    ImGui::TextDisabled(
        "If it is evicted it sinks to %s; a prompt that needs it again loads it instead of "
        "computing it, when the cost model says loading is faster.",
        sink_tier().c_str());
  } else {
    ImGui::TextDisabled(
        "Not held below the pool yet: the tiers take whole %d-token blocks, written as they "
        "fill.",
        source.tiers.block_tokens);
  }
  if (n.promoted_at != panel::kNever)
    ImGui::TextColored(blue, "Loaded back from the tiers %.0f s ago.", now_ - n.promoted_at);
}

}  // namespace rc::ui
