// The panel's Plots, Events and Cache tabs (the rest of the frame is in
// panel-frame.cpp). Every row wraps or shrinks to the panel's width.
#include <imgui.h>

#include <algorithm>
#include <cstdio>

#include "panel/cache-panel-state.h"
#include "panel/label-text.h"
#include "panel/panel-fit.h"
#include "panel/panel-style.h"
#include "panel/panel-widgets.h"
#include "panel/stats-plot.h"

namespace rc::ui {

using panel::button_w;
using panel::fit_width;
using panel::flow;

// Hit rate, mean match and TTFT over time, with axes and units; a dashed
// line marks each change of cache policy or pool (the series go on).
void CachePanelState::draw_plots_tab(double now) {
  if (remote_shown()) {
    ImGui::TextWrapped(
        "Hit rate, mean match and TTFT are unavailable from a remote cache: KV events carry "
        "stored and removed blocks only. The Events tab logs each update of the tree.");
    return;
  }
  if (source.has_tiers) {
    // Demotions, promotions, loads and recomputes are counts, not rates: a
    // line says them above the plots.
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(panel::Palette::tier));
    ImGui::TextWrapped("tiers: %s", tier_line().c_str());
    ImGui::PopStyleColor();
  }
  const int plots = source.has_requests ? 3 : 2;
  const float gap = ImGui::GetStyle().ItemSpacing.y;
  const float ph = std::max((ImGui::GetContentRegionAvail().y - gap * float(plots)) / float(plots),
                            ImGui::GetFontSize() * 3.5f);
  const float pw = ImGui::GetContentRegionAvail().x;
  panel::PlotSpec hit;
  hit.title = "hit rate";
  hit.unit = "%";
  hit.scale = 100;
  hit.fixed_top = 100;
  hit.value = "%.0f%% of prompt tokens cached";
  panel::draw_time_plot("##plot-hit", history.times(), history.hit_rate(), history.markers(), hit,
                        ImVec2(pw, ph), now);
  panel::PlotSpec match;
  match.title = "mean match";
  match.unit = "tok";
  match.value = "%.0f tokens reused per request";
  panel::draw_time_plot("##plot-match", history.times(), history.matched_len(), history.markers(),
                        match, ImVec2(pw, ph), now);
  if (source.has_requests) {
    panel::PlotSpec ttft;
    ttft.title = "TTFT";
    ttft.unit = "ms";
    ttft.value = "%.0f ms to first token";
    panel::draw_time_plot("##plot-ttft", history.times(), history.ttft_ms(), history.markers(),
                          ttft, ImVec2(pw, ph), now);
  }
}

// The event log: which kinds show (a popup, so the filters take one row),
// a text filter, and how many lines match.
void CachePanelState::draw_events_tab(double /*now*/) {
  int shown_kinds = 0;
  for (size_t k = 0; k < panel::kEventKinds; ++k) shown_kinds += log.show[k] ? 1 : 0;
  char kinds[48];
  std::snprintf(kinds, sizeof kinds, "Kinds (%d of %zu)###kinds", shown_kinds, panel::kEventKinds);
  if (ImGui::Button(kinds)) ImGui::OpenPopup("##event-kinds");
  if (ImGui::BeginPopup("##event-kinds")) {
    for (size_t k = 0; k < panel::kEventKinds; ++k) {
      ImGui::PushStyleColor(ImGuiCol_Text, panel::kind_colour(CacheEventKind(k)));
      ImGui::Checkbox(cache_event_kind_name(CacheEventKind(k)), &log.show[k]);
      ImGui::PopStyleColor();
    }
    ImGui::Checkbox("notes", &log.show_notes);
    if (ImGui::Button("All")) log.show.fill(true), log.show_notes = true;
    ImGui::SameLine();
    if (ImGui::Button("Only changes")) {
      // What changed the tree: match, lock and unlock are the chatty ones.
      log.show.fill(true);
      for (CacheEventKind k : {CacheEventKind::match, CacheEventKind::lock, CacheEventKind::unlock})
        log.show[size_t(k)] = false;
    }
    ImGui::EndPopup();
  }
  const float filter_w = std::clamp(ImGui::GetContentRegionAvail().x * 0.4f, 90.0f, 220.0f);
  flow(filter_w);
  char filter[128];
  std::snprintf(filter, sizeof filter, "%s", log.text_filter.c_str());
  ImGui::SetNextItemWidth(fit_width(filter_w));
  if (ImGui::InputTextWithHint("##filter", "filter text", filter, sizeof filter))
    log.text_filter = filter;
  flow(button_w("Clear"));
  if (ImGui::Button("Clear")) log.clear();

  std::vector<const panel::LogEntry*> rows;
  rows.reserve(log.entries().size());
  for (const panel::LogEntry& e : log.entries())
    if (log.visible(e)) rows.push_back(&e);
  char matches[96];
  std::snprintf(matches, sizeof matches, "%s of %s", panel::thousands(int64_t(rows.size())).c_str(),
                panel::plural(int64_t(log.entries().size()), "line").c_str());
  panel::flow_text(matches, true);
  if (ImGui::IsItemHovered())
    panel::tooltip(
        "Lines shown by the filters, of those kept. %s logged since the panel "
        "started; the newest %s are kept.",
        panel::thousands(int64_t(log.total())).c_str(),
        panel::thousands(int64_t(log.entries().size())).c_str());

  ImGui::BeginChild("##log", ImVec2(0, 0), true, ImGuiWindowFlags_HorizontalScrollbar);
  frame.region_lines = panel::window_lines();
  const bool at_bottom = ImGui::GetScrollY() >= ImGui::GetScrollMaxY() - 4;
  ImGuiListClipper clip;
  clip.Begin(int(rows.size()));
  while (clip.Step()) {
    for (int i = clip.DisplayStart; i < clip.DisplayEnd; ++i) {
      const panel::LogEntry& e = *rows[size_t(i)];
      if (e.seq == UINT64_MAX) {
        ImGui::TextDisabled("        %s", e.text.c_str());
      } else {
        ImGui::TextDisabled("%7llu", (unsigned long long)e.seq);
        ImGui::SameLine();
        ImGui::TextColored(panel::kind_colour(e.kind), "%s", e.text.c_str());
      }
    }
  }
  if (at_bottom) ImGui::SetScrollHereY(1.0f);
  ImGui::EndChild();
}

// Cache policy and pool (restart the engine), level of detail, layout.
void CachePanelState::draw_cache_tab(double now) {
  if (remote_shown()) {
    ImGui::TextWrapped(
        "Attached to a remote cache; these settings are the local engine's. "
        "Detach to change them.");
    return;
  }
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyle().Colors[ImGuiCol_TextDisabled]);
  ImGui::TextWrapped("Changing these restarts the engine with an empty cache.");
  ImGui::PopStyleColor();
  ImGui::Combo(panel::fit_labelled("policy", 160).c_str(), &settings_policy, kCachePolicies, 4);
  flow(160 + ImGui::CalcTextSize("pool tokens").x + 10);
  const int64_t step = 1024, step_fast = 16384;
  ImGui::InputScalar(panel::fit_labelled("pool tokens", 160, 120).c_str(), ImGuiDataType_S64,
                     &settings_pool_tokens, &step, &step_fast);
  settings_pool_tokens = std::max<int64_t>(settings_pool_tokens, 0);
  flow(button_w("Apply"));
  ImGui::BeginDisabled(!on_settings);
  if (ImGui::Button("Apply")) on_settings(kCachePolicies[settings_policy], settings_pool_tokens);
  ImGui::EndDisabled();
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyle().Colors[ImGuiCol_TextDisabled]);
  ImGui::TextWrapped(
      "radix: token-level tree (SGLang) \xC2\xB7 radix-page16: 16-token pages \xC2\xB7 "
      "hash16: vLLM-style block hashes \xC2\xB7 off: no reuse. A small pool shows eviction.");
  ImGui::PopStyleColor();
  ImGui::Separator();
  int budget = int(tree.lod.max_visible), fan = int(tree.lod.max_children),
      depth = tree.lod.max_depth;
  if (ImGui::SliderInt(panel::fit_labelled("boxes before folding", 200).c_str(), &budget, 50, 5000))
    tree.lod.max_visible = size_t(budget), tree.lod_changed();
  if (ImGui::SliderInt(panel::fit_labelled("children per node", 200).c_str(), &fan, 4, 200))
    tree.lod.max_children = size_t(fan), tree.lod_changed();
  if (ImGui::SliderInt(panel::fit_labelled("max depth (0: any)", 200).c_str(), &depth, 0, 64))
    tree.lod.max_depth = depth, tree.lod_changed();
  const char* orientations[] = {"auto (by panel shape)", "left to right", "top to bottom"};
  ImGui::Combo(panel::fit_labelled("layout", 200).c_str(), &tree.orientation, orientations, 3);
  ImGui::Checkbox("animate", &tree.view.animate);
  flow(button_w("Unfold all"));
  if (ImGui::Button("Unfold all")) {
    tree.lod.collapsed.clear();
    tree.lod.expanded.clear();
    tree.lod_changed();
  }
  flow(button_w("Resync from snapshot"));
  if (ImGui::Button("Resync from snapshot")) resync(now, "requested");
}

}  // namespace rc::ui
