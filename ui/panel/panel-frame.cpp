// The ImGui composition of the cache panel: header and toolbar, memory bar,
// stats line, the tree canvas with its caption banner, and the bottom tabs
// (selected node, plots, event log, demos, cache settings).
#include <imgui.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "panel/cache-panel-state.h"
#include "panel/panel-style.h"
#include "radixchat/engine.h"

namespace rc::ui {

using panel::Palette;

namespace {

std::string bytes(int64_t b) {
  char buf[32];
  if (b >= (int64_t(1) << 30))
    std::snprintf(buf, sizeof buf, "%.2f GiB", double(b) / double(int64_t(1) << 30));
  else if (b >= (1 << 20))
    std::snprintf(buf, sizeof buf, "%.1f MiB", double(b) / double(1 << 20));
  else
    std::snprintf(buf, sizeof buf, "%.0f KiB", double(b) / 1024.0);
  return buf;
}

std::string count(int64_t v) {
  // Built digit by digit: std::string::insert here trips a false GCC 12
  // -Wrestrict warning.
  const std::string digits = std::to_string(v < 0 ? -v : v);
  std::string s;
  if (v < 0) s += '-';
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) s += ',';
    s += digits[i];
  }
  return s;
}

ImVec4 kind_colour(CacheEventKind k) {
  switch (k) {
    case CacheEventKind::insert:
      return ImVec4(0.42f, 0.86f, 0.55f, 1);
    case CacheEventKind::split:
    case CacheEventKind::merge:
      return ImVec4(0.95f, 0.95f, 0.95f, 1);
    case CacheEventKind::match:
      return ImVec4(1.0f, 0.82f, 0.36f, 1);
    case CacheEventKind::evict:
    case CacheEventKind::reset:
      return ImVec4(0.94f, 0.42f, 0.42f, 1);
    case CacheEventKind::pin:
    case CacheEventKind::unpin:
      return ImVec4(0.66f, 0.55f, 0.92f, 1);
    default:
      return ImVec4(0.70f, 0.72f, 0.78f, 1);
  }
}

// Continues the line if an item `w` pixels wide still fits, else wraps: the
// panel may be a narrow column beside the chat.
void flow(float w, float spacing = -1) {
  ImGui::SameLine(0, spacing);
  if (ImGui::GetCursorPosX() + w > ImGui::GetWindowContentRegionMax().x) ImGui::NewLine();
}
float button_w(const char* label) {
  return ImGui::CalcTextSize(label, nullptr, true).x + ImGui::GetStyle().FramePadding.x * 2;
}
float check_w(const char* label) {
  return ImGui::GetFrameHeight() + ImGui::GetStyle().ItemInnerSpacing.x +
         ImGui::CalcTextSize(label).x;
}

struct Segment {
  const char* name;
  int64_t pages;
  ImU32 colour;
};

}  // namespace

// Title, what is running, and the toolbar (pause/step, fit, follow, fold).
void CachePanelState::draw_header(double now) {
  {
    std::string about =
        !feed_ ? no_source_message
               : feed_->describe() + " \xC2\xB7 " + kCachePolicies[settings_policy] + " \xC2\xB7 " +
                     std::to_string(model.total_pages() * model.page_size()) + "-token pool";
    ImGui::TextUnformatted("KV cache");
    flow(ImGui::CalcTextSize(about.c_str()).x);
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyle().Colors[ImGuiCol_TextDisabled]);
    ImGui::TextWrapped("%s", about.c_str());
    ImGui::PopStyleColor();
  }
  if (ImGui::Button(paused ? "Resume" : "Pause")) set_paused(!paused, now);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        paused ? "Apply every queued event and follow the cache live again"
               : "Freeze the tree; new events queue up and Step applies them one by one");
  char step_label[48];
  std::snprintf(step_label, sizeof step_label, "Step (%s)###step",
                count(int64_t(pending.size())).c_str());
  flow(button_w(step_label));
  ImGui::BeginDisabled(!paused);
  if (ImGui::Button(step_label)) step_one(now);
  ImGui::EndDisabled();
  flow(button_w("Fit"));
  if (ImGui::Button("Fit")) view.request_fit();
  flow(check_w("Follow"));
  ImGui::Checkbox("Follow", &view.follow);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("Keep new growth in view (a manual pan turns this off)");
  flow(check_w("Fold cold"));
  if (ImGui::Checkbox("Fold cold", &lod.enabled)) lod_changed();
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("Level of detail: beyond %zu boxes, fold the least recently used subtrees",
                      lod.max_visible);
}

// One bar split by page state, with the byte counts in a tooltip.
void CachePanelState::draw_memory_bar() {
  const panel::TreeModel::Pages& p = pages();
  const int64_t total = std::max<int64_t>(model.total_pages(), cache_stats.total_pages);
  const int64_t held = std::max<int64_t>(cache_stats.held_pages, 0);
  const int64_t used = p.protected_pages + p.evictable_pages + held;
  const int64_t free_pages = std::max<int64_t>(total - used, 0);
  const Segment segs[] = {{"protected (locked)", p.protected_pages, Palette::locked},
                          {"in flight (held)", held, Palette::held},
                          {"evictable", p.evictable_pages - p.pinned_pages, Palette::hot},
                          {"pinned", p.pinned_pages, Palette::pinned},
                          {"free", free_pages, Palette::free_pages}};
  const float w = ImGui::GetContentRegionAvail().x, h = ImGui::GetFontSize() + 6;
  const ImVec2 b0 = ImGui::GetCursorScreenPos();
  ImGui::InvisibleButton("##membar", ImVec2(w, h));
  ImDrawList* dl = ImGui::GetWindowDrawList();
  dl->AddRectFilled(b0, ImVec2(b0.x + w, b0.y + h), Palette::free_pages, 4.0f);
  float x = b0.x;
  const double denom = double(std::max<int64_t>(total, 1));
  for (const Segment& s : segs) {
    if (s.colour == Palette::free_pages) break;
    const float sw = float(double(s.pages) / denom) * w;
    if (sw > 0) dl->AddRectFilled(ImVec2(x, b0.y), ImVec2(x + sw, b0.y + h), s.colour);
    x += sw;
  }
  dl->AddRect(b0, ImVec2(b0.x + w, b0.y + h), Palette::border, 4.0f);
  const int64_t bpp = cache_stats.bytes_per_page;
  char buf[160];
  // Tokens and bytes per token: an F16/BF16 pool holds twice the tokens of
  // an F32 one in the same bytes, and the bar says which.
  const int64_t page_tokens = std::max(model.page_size(), 1);
  if (bpp > 0)
    std::snprintf(buf, sizeof buf, "%s of %s KV used  \xC2\xB7  %s tokens at %s/token",
                  bytes(used * bpp).c_str(), bytes(total * bpp).c_str(),
                  count(total * page_tokens).c_str(), bytes(bpp / page_tokens).c_str());
  else
    std::snprintf(buf, sizeof buf, "%s of %s pages used", count(used).c_str(),
                  count(total).c_str());
  const ImVec2 ts = ImGui::CalcTextSize(buf);
  dl->AddText(ImVec2(b0.x + (w - ts.x) * 0.5f + 1, b0.y + (h - ts.y) * 0.5f + 1),
              IM_COL32(0, 0, 0, 160), buf);
  dl->AddText(ImVec2(b0.x + (w - ts.x) * 0.5f, b0.y + (h - ts.y) * 0.5f), Palette::text, buf);
  if (ImGui::IsItemHovered()) {
    ImGui::BeginTooltip();
    for (const Segment& s : segs) {
      ImGui::ColorButton(s.name, ImGui::ColorConvertU32ToFloat4(s.colour),
                         ImGuiColorEditFlags_NoTooltip, ImVec2(10, 10));
      ImGui::SameLine();
      if (bpp > 0)
        ImGui::Text("%-20s %10s pages  %10s", s.name, count(s.pages).c_str(),
                    bytes(s.pages * bpp).c_str());
      else
        ImGui::Text("%-20s %10s pages", s.name, count(s.pages).c_str());
    }
    ImGui::EndTooltip();
  }
}

// Hit rate, mean match, TTFT and the tree counts, wrapping in a narrow panel.
void CachePanelState::draw_stats_line() {
  const CacheStats& cs = cache_stats;
  char buf[4][96];
  std::snprintf(buf[0], sizeof buf[0], "hit rate %.1f%%", 100.0 * cs.hit_rate());
  std::snprintf(buf[1], sizeof buf[1], "mean match %.0f tok", cs.mean_match_tokens());
  std::snprintf(buf[2], sizeof buf[2], "TTFT %.0f ms", requests.ttft_ms_mean);
  std::snprintf(buf[3], sizeof buf[3], "%s nodes \xC2\xB7 %s evictions \xC2\xB7 %s splits",
                count(int64_t(model.size()) - 1).c_str(), count(int64_t(cs.evictions)).c_str(),
                count(int64_t(cs.splits)).c_str());
  ImGui::TextUnformatted(buf[0]);
  flow(ImGui::CalcTextSize(buf[1]).x, 14);
  ImGui::TextUnformatted(buf[1]);
  if (has_requests && requests.finished > 0) {
    flow(ImGui::CalcTextSize(buf[2]).x, 14);
    ImGui::TextUnformatted(buf[2]);
  }
  flow(ImGui::CalcTextSize(buf[3]).x, 14);
  ImGui::TextDisabled("%s", buf[3]);
}

// Asks the chat list which saved conversations start with the node's prefix.
void CachePanelState::ask_conversations(NodeId id) {
  select(id);
  conversations_for = id;
  conversation_titles.clear();
  conversations_pending = true;
  if (on_conversations) on_conversations(model.path_tokens(id));
}

// The tree canvas, laid out for the panel's shape, and the clicks on it;
// the bottom tabs get what is left below it.
void CachePanelState::draw_canvas(double now) {
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float bottom_h = std::clamp(avail.y * 0.32f, 140.0f, 320.0f);
  const float canvas_h = std::max(avail.y - bottom_h - ImGui::GetStyle().ItemSpacing.y, 80.0f);
  // Chats grow chains (one node per turn): unless the canvas is clearly
  // wide, depth runs down.
  const bool vertical = orientation == 0 ? canvas_h > avail.x * 0.75f : orientation == 2;
  if (vertical != lod.vertical) {
    lod.vertical = vertical;
    lod_changed();
    view.request_fit();
  }
  const panel::TreeLayout& L = layout(now);
  panel::TreeViewInput in;
  in.model = &model;
  in.layout = &L;
  in.metrics = &metrics;
  in.label = [this](const panel::TreeNode& n) -> panel::NodeLabel& { return label(n); };
  in.selected = selected;
  in.located = located;
  in.located_partial = located_partial;
  in.now = now;
  in.layout_generation = layouts_computed;
  const panel::TreeViewActions act = view.draw(in, ImVec2(avail.x, canvas_h));
  if (act.clicked != kNoNode) select(act.clicked);
  if (act.clicked_background) select(kNoNode);
  if (act.toggle_fold != kNoNode) toggle_fold(act.toggle_fold);
  if (act.expand_children_of != kNoNode) expand_children(act.expand_children_of);
  if (act.conversations != kNoNode) ask_conversations(act.conversations);
}

// Caption banner over the top of the canvas: the demo step, or the pause.
void CachePanelState::draw_banner() {
  std::string banner;
  ImU32 colour = IM_COL32(20, 70, 90, 230);
  if (paused) {
    banner = "Paused: " + count(int64_t(pending.size())) + " events queued.";
    if (!pending.empty())
      banner += " Next: " + panel::EventLog::describe(
                                pending.front(), model, [this](const std::vector<Token>& t) {
                                  return feed_ ? feed_->detokenize(t) : std::string();
                                });
    colour = IM_COL32(96, 70, 20, 235);
  } else if (demo.running()) {
    banner = demo.caption();
  }
  if (!banner.empty()) {
    banner = panel::one_line(banner, 400);
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const ImVec2 c0 = view.canvas_min(), c1 = view.canvas_max();
    const float wrap = c1.x - c0.x - 24;
    const ImVec2 ts = ImGui::CalcTextSize(banner.c_str(), nullptr, false, wrap);
    const float top = c0.y + 26;  // below the zoom label
    dl->AddRectFilled(ImVec2(c0.x + 6, top), ImVec2(c1.x - 6, top + ts.y + 12), colour, 5.0f);
    dl->AddText(ImGui::GetFont(), ImGui::GetFontSize(), ImVec2(c0.x + 12, top + 6), Palette::text,
                banner.c_str(), nullptr, wrap);
    view.top_inset = ts.y + 16;  // fit and follow keep boxes out from under it
  } else {
    view.top_inset = 0;
  }
}

// The selected node: counts, actions, conversations using it, its text.
void CachePanelState::draw_node_tab(double /*now*/) {
  const panel::TreeNode* n = model.find(selected);
  if (!n) {
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyle().Colors[ImGuiCol_TextDisabled]);
    ImGui::TextWrapped(
        "Click a node to keep its details here. Hover for a quick look; drag to pan, "
        "wheel to zoom, double-click to fold, right-click for more.");
    ImGui::PopStyleColor();
  } else if (n->id == kRootNode) {
    ImGui::Text("Root: %s nodes, %s tokens cached", count(int64_t(model.size()) - 1).c_str(),
                count(pages().cached_tokens).c_str());
  } else {
    ImGui::TextWrapped(
        "#%u \xC2\xB7 %s tokens \xC2\xB7 %zu pages \xC2\xB7 lock_ref %u \xC2\xB7 pin_ref %u "
        "\xC2\xB7 hits %llu "
        "\xC2\xB7 last access tick %llu",
        n->id, count(int64_t(n->tokens.size())).c_str(), n->pages.size(), n->lock_ref, n->pin_ref,
        (unsigned long long)n->hits, (unsigned long long)n->last_access);
    if (ImGui::Button("Centre")) view.focus(n->id);
    flow(button_w("Fold / unfold"));
    if (ImGui::Button("Fold / unfold")) toggle_fold(n->id);
    flow(button_w("Conversations using this prefix"));
    if (ImGui::Button("Conversations using this prefix")) ask_conversations(n->id);
    if (conversations_for == n->id) {
      if (conversations_pending && conversation_titles.empty())
        ImGui::TextDisabled("(asking the chat list...)");
      else if (conversation_titles.empty())
        ImGui::TextDisabled("No saved conversation starts with this prefix.");
      for (const std::string& t : conversation_titles) ImGui::BulletText("%s", t.c_str());
    }
    ImGui::BeginChild("##text", ImVec2(0, 0), true);
    ImGui::TextDisabled("tokens %s-%s of the path:", count(n->depth_tokens).c_str(),
                        count(n->depth_tokens + int64_t(n->tokens.size())).c_str());
    ImGui::PushTextWrapPos(0);
    ImGui::TextUnformatted(label(*n).full.c_str());
    ImGui::PopTextWrapPos();
    ImGui::EndChild();
  }
}

// Hit rate, mean match and TTFT over time.
void CachePanelState::draw_plots_tab(double /*now*/) {
  const float ph =
      std::max((ImGui::GetContentRegionAvail().y - 3 * ImGui::GetStyle().ItemSpacing.y) / 3, 30.0f);
  auto plot = [&](const char* name, const std::vector<float>& v, float scale_max, const char* fmt,
                  float mul) {
    char overlay[64] = "";
    if (!v.empty()) std::snprintf(overlay, sizeof overlay, fmt, double(v.back() * mul));
    const float top =
        std::max(scale_max, v.empty() ? 1.0f : *std::max_element(v.begin(), v.end()) * 1.1f);
    ImGui::PlotLines(name, v.empty() ? nullptr : v.data(), int(v.size()), 0, overlay, 0.0f, top,
                     ImVec2(ImGui::GetContentRegionAvail().x - 130, ph));
  };
  if (history.points() == 0)
    ImGui::TextDisabled("One point per batch of finished requests; none yet.");
  plot("hit rate", history.hit_rate(), 1.0f, "%.0f%% of prompt tokens cached", 100.0f);
  plot("mean match", history.matched_len(), 1.0f, "%.0f tokens matched", 1.0f);
  if (has_requests) plot("TTFT (ms)", history.ttft_ms(), 1.0f, "%.0f ms to first token", 1.0f);
}

// The event log with kind and text filters.
void CachePanelState::draw_events_tab(double /*now*/) {
  for (size_t k = 0; k < panel::kEventKinds; ++k) {
    ImGui::PushStyleColor(ImGuiCol_Text, kind_colour(CacheEventKind(k)));
    ImGui::Checkbox(cache_event_kind_name(CacheEventKind(k)), &log.show[k]);
    ImGui::PopStyleColor();
    const float next = ImGui::GetItemRectMax().x + 90;
    if (k + 1 < panel::kEventKinds && next < ImGui::GetWindowPos().x + ImGui::GetWindowWidth())
      ImGui::SameLine();
  }
  ImGui::SameLine();
  ImGui::Checkbox("notes", &log.show_notes);
  char filter[128];
  std::snprintf(filter, sizeof filter, "%s", log.text_filter.c_str());
  ImGui::SetNextItemWidth(200);
  if (ImGui::InputTextWithHint("##filter", "filter text", filter, sizeof filter))
    log.text_filter = filter;
  ImGui::SameLine();
  if (ImGui::Button("Clear")) log.clear();
  ImGui::SameLine();
  ImGui::TextDisabled("%s lines", count(int64_t(log.total())).c_str());
  ImGui::BeginChild("##log", ImVec2(0, 0), true, ImGuiWindowFlags_HorizontalScrollbar);
  std::vector<const panel::LogEntry*> rows;
  rows.reserve(log.entries().size());
  for (const panel::LogEntry& e : log.entries())
    if (log.visible(e)) rows.push_back(&e);
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
        ImGui::TextColored(kind_colour(e.kind), "%s", e.text.c_str());
      }
    }
  }
  if (at_bottom) ImGui::SetScrollHereY(1.0f);
  ImGui::EndChild();
}

// Scripted chats that show sharing and eviction.
void CachePanelState::draw_demos_tab(double now) {
  rc::Engine* engine = feed_ ? feed_->engine() : nullptr;
  if (!engine) ImGui::TextDisabled("Demos need a model: they send scripted chats to the engine.");
  const auto& all = panel::demo_scenarios();
  for (size_t i = 0; i < all.size(); ++i) {
    ImGui::BeginDisabled(!engine);
    ImGui::PushID(int(i));
    if (ImGui::Button(all[i].name.c_str(), ImVec2(190, 0)))
      demo.start(i, engine, kCachePolicies[settings_policy], now);
    ImGui::PopID();
    ImGui::EndDisabled();
    flow(std::min(ImGui::CalcTextSize(all[i].summary.c_str()).x, 160.0f));
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyle().Colors[ImGuiCol_TextDisabled]);
    ImGui::TextWrapped("%s", all[i].summary.c_str());
    ImGui::PopStyleColor();
  }
  if (demo.running()) {
    if (ImGui::Button("Stop demo")) demo.stop(engine);
    ImGui::SameLine();
    ImGui::PushTextWrapPos(0);
    ImGui::TextUnformatted(demo.caption().c_str());
    const std::string reply = demo.reply();
    if (!reply.empty()) ImGui::TextDisabled("model: %s", panel::one_line(reply, 200).c_str());
    ImGui::PopTextWrapPos();
  }
}

// Cache policy and pool (restart the engine), level of detail, layout.
void CachePanelState::draw_cache_tab(double now) {
  ImGui::TextDisabled("Changing these restarts the engine with an empty cache.");
  ImGui::SetNextItemWidth(160);
  ImGui::Combo("policy", &settings_policy, kCachePolicies, 4);
  flow(160 + ImGui::CalcTextSize("pool tokens").x + 10);
  ImGui::SetNextItemWidth(160);
  const int64_t step = 1024, step_fast = 16384;
  ImGui::InputScalar("pool tokens", ImGuiDataType_S64, &settings_pool_tokens, &step, &step_fast);
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
  int budget = int(lod.max_visible), fan = int(lod.max_children), depth = lod.max_depth;
  ImGui::SetNextItemWidth(200);
  if (ImGui::SliderInt("boxes before folding", &budget, 50, 5000))
    lod.max_visible = size_t(budget), lod_changed();
  ImGui::SetNextItemWidth(200);
  if (ImGui::SliderInt("children per node", &fan, 4, 200))
    lod.max_children = size_t(fan), lod_changed();
  ImGui::SetNextItemWidth(200);
  if (ImGui::SliderInt("max depth (0: any)", &depth, 0, 64)) lod.max_depth = depth, lod_changed();
  const char* orientations[] = {"auto (by panel shape)", "left to right", "top to bottom"};
  ImGui::SetNextItemWidth(200);
  ImGui::Combo("layout", &orientation, orientations, 3);
  ImGui::Checkbox("animate", &view.animate);
  ImGui::SameLine();
  if (ImGui::Button("Unfold all")) {
    lod.collapsed.clear();
    lod.expanded.clear();
    lod_changed();
  }
  ImGui::SameLine();
  if (ImGui::Button("Resync from snapshot")) resync(now, "requested");
}

void CachePanelState::draw(double now) {
  const auto t0 = std::chrono::steady_clock::now();
  ImGuiIO& io = ImGui::GetIO();
  ImGui::SetNextWindowPos(ImVec2(0, 0));
  ImGui::SetNextWindowSize(io.DisplaySize);
  // No window background: the GL clear has the same colour, and with a
  // software rasterizer every full-screen layer costs real time.
  ImGui::Begin("##cache-panel", nullptr,
               ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove |
                   ImGuiWindowFlags_NoBackground | ImGuiWindowFlags_NoSavedSettings |
                   ImGuiWindowFlags_NoBringToFrontOnFocus | ImGuiWindowFlags_NoScrollWithMouse);
  draw_header(now);
  draw_memory_bar();
  draw_stats_line();
  draw_canvas(now);
  draw_banner();

  ImGui::PushStyleColor(ImGuiCol_ChildBg, IM_COL32(0, 0, 0, 0));
  ImGui::BeginChild("##bottom", ImVec2(0, 0), false);
  ImGui::PopStyleColor();
  if (ImGui::BeginTabBar("##tabs")) {
    struct Tab {
      const char* name;
      void (CachePanelState::*draw)(double);
    };
    static constexpr Tab kTabs[] = {
        {"Node", &CachePanelState::draw_node_tab},     {"Plots", &CachePanelState::draw_plots_tab},
        {"Events", &CachePanelState::draw_events_tab}, {"Demos", &CachePanelState::draw_demos_tab},
        {"Cache", &CachePanelState::draw_cache_tab},
    };
    for (const Tab& t : kTabs) {
      if (ImGui::BeginTabItem(t.name)) {
        (this->*t.draw)(now);
        ImGui::EndTabItem();
      }
    }
    ImGui::EndTabBar();
  }
  ImGui::EndChild();
  ImGui::End();
  last_draw_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace rc::ui
