// The ImGui composition of the cache panel: header and toolbar, memory bar,
// stats line, the tree canvas with its caption banner, and the bottom tabs
// (selected node, plots, event log, demos, cache settings).
#include <imgui.h>
#include <imgui_internal.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

#include "panel/cache-panel-state.h"
#include "panel/label-text.h"
#include "panel/panel-fit.h"
#include "panel/panel-style.h"
#include "panel/panel-widgets.h"
#include "radixchat/engine.h"

namespace rc::ui {

using panel::button_w;
using panel::check_w;
using panel::flow;
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

struct Segment {
  const char* name;
  int64_t pages;
  ImU32 colour;
};

}  // namespace

// Title, what is running, and the toolbar (pause/step, fit, follow, fold).
void CachePanelState::draw_header(double now) {
  {
    // A recording made from KV events knows no pool: it says nothing of one.
    const int64_t pool = tree.model.total_pages() * tree.model.page_size();
    std::string about = !source.feed ? no_source_message
                        : source.feed->remote() || (replay_shown() && pool == 0)
                            ? source.feed->describe()
                            : source.feed->describe() + " \xC2\xB7 " +
                                  kCachePolicies[settings_policy] + " \xC2\xB7 " +
                                  std::to_string(pool) + "-token pool";
    // One row: the title, what is shown (cut to fit, whole in a tooltip) and
    // the text size at the right end, so the tree keeps the panel's height.
    const ImGuiStyle& style = ImGui::GetStyle();
    const float scale_w = text_scale_buttons_w();
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted("KV cache");
    ImGui::SameLine();
    const float about_room = ImGui::GetContentRegionAvail().x - scale_w - 2 * style.ItemSpacing.x;
    const std::string shown =
        panel::fit_text(ImGui::GetFont(), ImGui::GetFontSize(), panel::one_line(about, 400),
                        std::max(about_room, 0.0f));
    ImGui::PushStyleColor(ImGuiCol_Text, style.Colors[ImGuiCol_TextDisabled]);
    ImGui::TextUnformatted(about_room > ImGui::GetFontSize() ? shown.c_str() : "");
    ImGui::PopStyleColor();
    if (shown != about && ImGui::IsItemHovered()) panel::tooltip("%s", about.c_str());
    ImGui::SameLine(
        std::max(ImGui::GetWindowContentRegionMax().x - scale_w, ImGui::GetCursorPosX()));
    draw_text_scale_buttons();
  }
  // A narrow panel names its actions briefly (their tooltips say the rest):
  // one row of them instead of two.
  frame.narrow_toolbar = ImGui::GetContentRegionAvail().x < ImGui::GetFontSize() * 30;
  // A recording has its own Play and steps on the timeline: Pause and Step
  // show there only to leave a pause made before it opened.
  if (!replay_shown() || source.paused) {
    if (ImGui::Button(source.paused ? "Resume" : "Pause")) set_paused(!source.paused, now);
    if (ImGui::IsItemHovered())
      panel::tooltip(source.paused
                         ? "Apply every queued event and follow the cache live again"
                         : "Freeze the tree; new events queue up and Step applies them one "
                           "by one");
    char step_label[48];
    std::snprintf(step_label, sizeof step_label, "Step (%s)###step",
                  panel::thousands(int64_t(source.pending.size())).c_str());
    flow(button_w(step_label));
    ImGui::BeginDisabled(!source.paused || remote_shown());
    if (ImGui::Button(step_label)) step_one(now);
    ImGui::EndDisabled();
    if (remote_shown() && ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
      panel::tooltip("Step is unavailable from a remote cache: it sends blocks, not node events");
  }
  flow(button_w("Fit"));
  if (ImGui::Button("Fit")) tree.view.request_fit();
  flow(check_w("Follow"));
  ImGui::Checkbox("Follow", &tree.view.follow);
  if (ImGui::IsItemHovered())
    panel::tooltip("Keep new growth in view (a manual pan turns this off)");
  flow(check_w("Fold cold"));
  if (ImGui::Checkbox("Fold cold", &tree.lod.enabled)) tree.lod_changed();
  if (ImGui::IsItemHovered())
    panel::tooltip("Level of detail: beyond %zu boxes, fold the least recently used subtrees",
                   tree.lod.max_visible);
  // Attach and Record wait until the recording is closed.
  if (!replay_shown()) remote.draw(frame.narrow_toolbar);
  draw_recording_buttons(now);
  draw_recording_status();
}

// One bar split by page state, with the byte counts in a tooltip.
void CachePanelState::draw_memory_bar() {
  // A recording's timeline plots the cached tokens at every moment.
  if (replay_shown()) return;
  if (remote_shown()) {
    // A remote server sends blocks, not its pool size or locks.
    panel::flow_text((panel::plural(source.cache_stats.total_pages, "block") + " (" +
                      panel::thousands(source.cache_stats.cached_tokens) +
                      " tokens) cached \xC2\xB7 pool size and locks: unavailable from a remote "
                      "cache")
                         .c_str());
    return;
  }
  const panel::TreeModel::Pages& p = tree.pages();
  const int64_t total = std::max<int64_t>(tree.model.total_pages(), source.cache_stats.total_pages);
  const int64_t held = std::max<int64_t>(source.cache_stats.held_pages, 0);
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
  const int64_t bpp = source.cache_stats.bytes_per_page;
  char buf[160];
  // Tokens and bytes per token: an F16/BF16 pool holds twice the tokens of
  // an F32 one in the same bytes, and the bar says which.
  const int64_t page_tokens = std::max(tree.model.page_size(), 1);
  if (bpp > 0)
    std::snprintf(buf, sizeof buf, "%s of %s KV used  \xC2\xB7  %s tokens at %s/token",
                  bytes(used * bpp).c_str(), bytes(total * bpp).c_str(),
                  panel::thousands(total * page_tokens).c_str(), bytes(bpp / page_tokens).c_str());
  else
    std::snprintf(buf, sizeof buf, "%s of %s pages used", panel::thousands(used).c_str(),
                  panel::thousands(total).c_str());
  // A narrow bar gets the short form (never text cut at both ends).
  const char* text = buf;
  char brief[64];
  if (ImGui::CalcTextSize(buf).x > w - 8) {
    std::snprintf(brief, sizeof brief, "%s of %s",
                  bpp > 0 ? bytes(used * bpp).c_str() : panel::thousands(used).c_str(),
                  bpp > 0 ? bytes(total * bpp).c_str() : panel::thousands(total).c_str());
    text = ImGui::CalcTextSize(brief).x > w - 8 ? "" : brief;
  }
  const ImVec2 ts = ImGui::CalcTextSize(text);
  dl->AddText(ImVec2(b0.x + (w - ts.x) * 0.5f + 1, b0.y + (h - ts.y) * 0.5f + 1),
              IM_COL32(0, 0, 0, 160), text);
  dl->AddText(ImVec2(b0.x + (w - ts.x) * 0.5f, b0.y + (h - ts.y) * 0.5f), Palette::text, text);
  if (ImGui::IsItemHovered()) {
    panel::begin_tooltip();
    if (text != buf) ImGui::TextUnformatted(buf);
    for (const Segment& s : segs) {
      ImGui::ColorButton(s.name, ImGui::ColorConvertU32ToFloat4(s.colour),
                         ImGuiColorEditFlags_NoTooltip, ImVec2(10, 10));
      ImGui::SameLine();
      if (bpp > 0)
        ImGui::Text("%s: %s, %s", s.name, panel::plural(s.pages, "page").c_str(),
                    bytes(s.pages * bpp).c_str());
      else
        ImGui::Text("%s: %s", s.name, panel::plural(s.pages, "page").c_str());
    }
    panel::end_tooltip();
  }
}

std::string CachePanelState::tree_counts() const {
  return panel::plural(int64_t(tree.model.size()) - 1, "node") + " \xC2\xB7 " +
         panel::plural(int64_t(source.cache_stats.evictions), "eviction") + " \xC2\xB7 " +
         panel::plural(int64_t(source.cache_stats.splits), "split");
}

// Hit rate, mean match, TTFT and the tree counts, wrapping in a narrow panel.
void CachePanelState::draw_stats_line() {
  const CacheStats& cs = source.cache_stats;
  if (remote_shown()) {
    const std::string line = panel::plural(int64_t(tree.model.size()) - 1, "node") + " \xC2\xB7 " +
                             panel::plural(int64_t(cs.inserts), "stored event") + " \xC2\xB7 " +
                             panel::plural(int64_t(cs.evictions), "removed event") +
                             " \xC2\xB7 hit rate, TTFT: unavailable from a remote cache";
    panel::flow_text(line.c_str(), true);
    return;
  }
  // A recording's timeline says all of it at the cursor (tree_counts()).
  if (replay_shown()) return;
  char buf[4][96];
  std::snprintf(buf[0], sizeof buf[0], "hit rate %.1f%%", 100.0 * cs.hit_rate());
  std::snprintf(buf[1], sizeof buf[1], "mean match %.0f tok", cs.mean_match_tokens());
  std::snprintf(buf[2], sizeof buf[2], "TTFT %.0f ms", source.requests.ttft_ms_mean);
  std::snprintf(buf[3], sizeof buf[3], "%s", tree_counts().c_str());
  ImGui::TextUnformatted(buf[0]);
  flow(ImGui::CalcTextSize(buf[1]).x, 14);
  ImGui::TextUnformatted(buf[1]);
  if (source.has_requests && source.requests.finished > 0) {
    flow(ImGui::CalcTextSize(buf[2]).x, 14);
    ImGui::TextUnformatted(buf[2]);
  }
  const std::string drafts = draft_line();
  if (!drafts.empty()) {
    flow(ImGui::CalcTextSize(drafts.c_str()).x, 14);
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(panel::Palette::drafted));
    ImGui::TextWrapped("%s", drafts.c_str());
    ImGui::PopStyleColor();
    if (ImGui::IsItemHovered()) {
      const panel::TreeModel::DraftCounts& c = tree.model.draft_counts();
      panel::tooltip(
          "Drafted decoding guesses a reply's next tokens from the cache tree (%s) or the "
          "prompt (%s), and the model checks them in one pass: each kept token saved a decode "
          "step. %s drafted, %s kept, %s wasted.",
          panel::plural(int64_t(c.tree_drafts), "draft").c_str(),
          panel::plural(int64_t(c.drafts - c.tree_drafts), "draft").c_str(),
          panel::thousands(int64_t(c.drafted_tokens)).c_str(),
          panel::thousands(int64_t(c.accepted_tokens)).c_str(),
          panel::thousands(int64_t(c.wasted_tokens())).c_str());
    }
  }
  flow(ImGui::CalcTextSize(buf[3]).x, 14);
  // Wrapped: at a large text scale even one part can be wider than the panel.
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyle().Colors[ImGuiCol_TextDisabled]);
  ImGui::TextWrapped("%s", buf[3]);
  ImGui::PopStyleColor();
  if (source.has_tiers) {
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(panel::Palette::tier));
    ImGui::TextWrapped("tiers: %s", tier_line().c_str());
    ImGui::PopStyleColor();
  }
}

// Asks the chat list which saved conversations start with the node's prefix.
void CachePanelState::ask_conversations(NodeId id) {
  tree.select(id);
  tree.conversations_for = id;
  tree.conversation_titles.clear();
  tree.conversations_pending = true;
  if (on_conversations) on_conversations(tree.model.path_tokens(id));
}

// The tree canvas, laid out for the panel's shape, and the clicks on it;
// the bottom tabs get what is left below it.
void CachePanelState::draw_canvas(double now) {
  const bool off = policy_off();
  if (off) draw_off_notice();
  tree.set_in_flight_only(off);
  // A remote cache is filled by its server, not by this chat or a demo.
  if (remote_shown() && tree.model.size() <= 1)
    tree.view.empty_message = "The remote cache is empty: its server has stored no blocks yet.";
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float spacing = ImGui::GetStyle().ItemSpacing.y;
  const float room = std::max(avail.y - panel::FrameState::kSplitHandlePx - 2 * spacing, 0.0f);
  // The tabs get their share of the room (the user's, once the bar was
  // dragged): never less than their strip and a few lines (two once the
  // user chose), while the tree keeps the zoom line, a row of boxes at a
  // readable zoom and two rows of legend, which grow with the text scale.
  const float fs = ImGui::GetFontSize();
  const int tab_lines = frame.user_split > 0 ? 2 : panel::FrameState::kTabLines;
  const float tabs_least = ImGui::GetFrameHeightWithSpacing() +
                           float(tab_lines) * ImGui::GetTextLineHeightWithSpacing() + 2 * spacing;
  const float tree_row = 28 + tree.metrics.height * 0.6f + 2 * (fs * 0.85f + 5) + 40;
  const float bottom_h = frame.tabs_height(room, std::max(80.0f, tree_row), tabs_least);
  const float canvas_h = std::max(room - bottom_h, 80.0f);
  // Chats grow chains (one node per turn): depth runs down unless the
  // canvas is clearly wide and holds three levels of the widest boxes at a
  // readable zoom (a 360 px canvas left to right showed two boxes and lost
  // the root).
  const float three_levels =
      3 * (tree.metrics.max_width + tree.metrics.level_gap) * panel::kReadableZoom;
  const bool wide = avail.x * 0.75f >= canvas_h && avail.x >= three_levels;
  const bool vertical = tree.orientation == 0 ? !wide : tree.orientation == 2;
  if (vertical != tree.lod.vertical) {
    tree.lod.vertical = vertical;
    tree.lod_changed();
    tree.view.request_fit();
  }
  const panel::TreeLayout& L = tree.layout(now);
  panel::TreeViewInput in;
  in.model = &tree.model;
  in.layout = &L;
  in.metrics = &tree.metrics;
  in.label = [this](const panel::TreeNode& n) -> panel::NodeLabel& { return tree.label(n); };
  in.look_alikes = &tree.look_alikes;
  in.context_cut = &tree.context_cut;
  in.selected = tree.selected;
  in.located = tree.located;
  in.located_partial = tree.located_partial;
  in.now = now;
  in.layout_generation = tree.layouts_computed;
  in.tiers = tier_names();
  in.sink_tier = sink_tier();
  if (remote_shown()) {
    in.remote = true;
    in.ranks = source.feed->ranks();
    if (!in.ranks.empty()) in.rank_of = [this](NodeId id) { return source.feed->node_rank(id); };
  }
  const panel::TreeViewActions act = tree.view.draw(in, ImVec2(avail.x, canvas_h));
  if (act.clicked != kNoNode) tree.select(act.clicked);
  if (act.clicked_background) tree.select(kNoNode);
  if (act.toggle_fold != kNoNode) tree.toggle_fold(act.toggle_fold);
  if (act.expand_children_of != kNoNode) tree.expand_children(act.expand_children_of);
  if (act.conversations != kNoNode) ask_conversations(act.conversations);
  draw_split_handle(room, bottom_h);
}

// Caption banner over the top of the canvas: the demo step, or the pause.
void CachePanelState::draw_banner() {
  std::string banner;
  ImU32 colour = IM_COL32(20, 70, 90, 230);
  const bool lesson = lesson_active();
  if (lesson) {
    banner = lesson_banner();  // caption, pause state, step card (lesson-panel.cpp)
    if (source.paused) colour = IM_COL32(96, 70, 20, 235);
  } else if (source.paused) {
    banner = "Paused: " + panel::thousands(int64_t(source.pending.size())) + " events queued.";
    if (!source.pending.empty())
      banner +=
          " Next: " + panel::EventLog::describe(
                          source.pending.front(), tree.model, [this](const std::vector<Token>& t) {
                            return source.feed ? source.feed->detokenize(t) : std::string();
                          });
    colour = IM_COL32(96, 70, 20, 235);
  } else if (std::string cut = tree.context_cut.banner(now_); !cut.empty()) {
    banner = std::move(cut);  // a few seconds after a context cut (context-cut.h)
    colour = panel::MarkColours::cut_banner;
  }
  if (!banner.empty()) {
    if (!lesson) banner = panel::one_line(banner, 400);
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const ImVec2 c0 = tree.view.canvas_min(), c1 = tree.view.canvas_max();
    const float wrap = c1.x - c0.x - 24;
    // A lesson's caption takes at most a fifth of the canvas (three lines
    // at least), so the nodes it describes have room below it; the whole
    // card is in the Demos tab and in the banner's tooltip.
    const std::string whole = banner;
    if (lesson) {
      const float line = ImGui::GetTextLineHeight();
      const size_t lines = size_t(std::max((c1.y - c0.y) * 0.2f / line, 3.0f));
      banner = panel::clip_lines(
          banner, size_t(std::max(wrap / (ImGui::GetFontSize() * 0.5f), 8.0f)), lines);
    }
    const ImVec2 ts = ImGui::CalcTextSize(banner.c_str(), nullptr, false, wrap);
    const float top = c0.y + 26;  // below the zoom label
    dl->AddRectFilled(ImVec2(c0.x + 6, top), ImVec2(c1.x - 6, top + ts.y + 12), colour, 5.0f);
    frame.caption_box = {"caption", ImVec2(c0.x + 6, top), ImVec2(c1.x - 6, top + ts.y + 12), 0,
                         true};
    dl->AddText(ImGui::GetFont(), ImGui::GetFontSize(), ImVec2(c0.x + 12, top + 6), Palette::text,
                banner.c_str(), nullptr, wrap);
    tree.view.top_inset = ts.y + 16;  // fit and follow keep boxes out from under it
    if (banner != whole && ImGui::IsMouseHoveringRect(frame.caption_box.min, frame.caption_box.max))
      panel::tooltip("%s", whole.c_str());
  } else {
    tree.view.top_inset = 0;
    frame.caption_box = {};
  }
}

// The selected node: counts, actions, conversations using it, its text.
void CachePanelState::draw_node_tab(double /*now*/) {
  const panel::TreeNode* n = tree.model.find(tree.selected);
  if (!n) {
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyle().Colors[ImGuiCol_TextDisabled]);
    ImGui::TextWrapped(
        "Click a node to keep its details here. Hover for a quick look; drag to pan, "
        "wheel to zoom, double-click to fold, right-click for more.");
    ImGui::PopStyleColor();
  } else if (n->id == kRootNode) {
    ImGui::Text("Root: %s, %s cached",
                panel::plural(int64_t(tree.model.size()) - 1, "node").c_str(),
                panel::plural(tree.pages().cached_tokens, "token").c_str());
    draw_node_marks_tab(*n);
    draw_live_miss();
  } else {
    if (remote_shown()) {
      // A remote cache sends blocks only: no locks, pins, hits or access ticks.
      const int rank = source.feed->node_rank(n->id);
      ImGui::TextWrapped("#%u \xC2\xB7 %s \xC2\xB7 %s%s", n->id,
                         panel::plural(int64_t(n->tokens.size()), "token").c_str(),
                         panel::plural(int64_t(n->pages.size()), "block").c_str(),
                         rank >= 0 ? (" \xC2\xB7 rank " + std::to_string(rank)).c_str() : "");
      ImGui::TextDisabled("Locks, hits and access times: not sent by a remote cache.");
    } else {
      ImGui::TextWrapped(
          "#%u \xC2\xB7 %s \xC2\xB7 %zu pages \xC2\xB7 lock_ref %u \xC2\xB7 pin_ref %u "
          "\xC2\xB7 hits %llu "
          "\xC2\xB7 last access tick %llu",
          n->id, panel::plural(int64_t(n->tokens.size()), "token").c_str(), n->pages.size(),
          n->lock_ref, n->pin_ref, (unsigned long long)n->hits, (unsigned long long)n->last_access);
    }
    draw_node_tiers(*n);
    draw_node_marks_tab(*n);
    draw_live_miss();
    if (ImGui::Button("Centre")) tree.view.focus(n->id);
    flow(button_w("Fold / unfold"));
    if (ImGui::Button("Fold / unfold")) tree.toggle_fold(n->id);
    // The saved chats are this computer's: they say nothing of a remote cache.
    if (!remote_shown()) {
      flow(button_w("Conversations using this prefix"));
      if (ImGui::Button("Conversations using this prefix")) ask_conversations(n->id);
    }
    if (tree.conversations_for == n->id && !remote_shown()) {
      if (tree.conversations_pending && tree.conversation_titles.empty())
        ImGui::TextDisabled("(asking the chat list...)");
      else if (tree.conversation_titles.empty())
        ImGui::TextDisabled("No saved conversation starts with this prefix.");
      for (const std::string& t : tree.conversation_titles) ImGui::BulletText("%s", t.c_str());
    }
    // The text scrolls in what the tab has left; with less than a few
    // lines left it follows the rest and the whole tab scrolls.
    const bool own_region =
        ImGui::GetContentRegionAvail().y >=
        float(panel::FrameState::kTabLines - 2) * ImGui::GetTextLineHeightWithSpacing();
    if (own_region) {
      ImGui::BeginChild("##text", ImVec2(0, 0), true);
    }
    frame.region_lines = panel::window_lines();  // the text's region or the tab's
    ImGui::TextDisabled("%s of the path:",
                        panel::token_range(n->depth_tokens, int64_t(n->tokens.size())).c_str());
    ImGui::PushTextWrapPos(0);
    ImGui::TextUnformatted(tree.label(*n).full.c_str());
    ImGui::PopTextWrapPos();
    if (own_region) ImGui::EndChild();
  }
}

void CachePanelState::draw(double now) {
  const auto t0 = std::chrono::steady_clock::now();
  ImGuiIO& io = ImGui::GetIO();
  handle_text_scale_keys();
  io.FontGlobalScale = frame.text_scale / frame.font_atlas_scale;
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
  draw_timeline_section(now);
  draw_canvas(now);
  draw_banner();

  ImGui::PushStyleColor(ImGuiCol_ChildBg, IM_COL32(0, 0, 0, 0));
  ImGui::BeginChild("##bottom", ImVec2(0, 0), false);
  ImGui::PopStyleColor();
  struct Tab {
    const char* name;
    void (CachePanelState::*draw)(double);
  };
  static constexpr Tab kTabs[] = {
      {"Node", &CachePanelState::draw_node_tab},     {"Plots", &CachePanelState::draw_plots_tab},
      {"Events", &CachePanelState::draw_events_tab}, {"Demos", &CachePanelState::draw_demos_tab},
      {"Cache", &CachePanelState::draw_cache_tab},
  };
  static constexpr Tab kRecordingTabs[] = {
      {"Request", &CachePanelState::draw_request_tab},
      {"Advisor", &CachePanelState::draw_advisor_tab},
  };
  std::vector<Tab> tabs(std::begin(kTabs), std::end(kTabs));
  if (replay_shown())
    tabs.insert(tabs.begin() + 1, std::begin(kRecordingTabs), std::end(kRecordingTabs));
  // Tabs keep their whole labels (never "No… Re… Ad…"): as many as fit are
  // shown, the one on screen (or asked for) always among them, and the rest
  // are one click away under "More".
  const ImGuiStyle& style = ImGui::GetStyle();
  auto tab_w = [&](const char* s) {
    return ImGui::CalcTextSize(s).x + style.FramePadding.x * 2 + style.ItemInnerSpacing.x;
  };
  static constexpr const char* kMore = "More \xC2\xBB";
  const std::string wanted = !frame.select_tab.empty() ? frame.select_tab : frame.current_tab;
  const float avail = ImGui::GetContentRegionAvail().x - 2 * style.ItemInnerSpacing.x;
  float total = 0;
  for (const Tab& t : tabs) total += tab_w(t.name);
  std::vector<bool> shown(tabs.size(), true);
  frame.hidden_tabs.clear();
  if (total > avail) {
    float used = tab_w(kMore);
    for (const Tab& t : tabs)
      if (wanted == t.name) used += tab_w(t.name);
    for (size_t i = 0; i < tabs.size(); ++i) {
      if (wanted == tabs[i].name) continue;
      if (used + tab_w(tabs[i].name) <= avail) {
        used += tab_w(tabs[i].name);
      } else {
        shown[i] = false;
        frame.hidden_tabs.push_back(tabs[i].name);
      }
    }
  }
  std::string pick_next;
  if (ImGui::BeginTabBar("##tabs", ImGuiTabBarFlags_FittingPolicyScroll)) {
    frame.tab_boxes.clear();
    for (size_t i = 0; i < tabs.size(); ++i) {
      if (!shown[i]) continue;
      const Tab& t = tabs[i];
      const bool pick = frame.select_tab == t.name;
      const bool open =
          ImGui::BeginTabItem(t.name, nullptr, pick ? ImGuiTabItemFlags_SetSelected : 0);
      frame.tab_boxes.push_back({t.name, ImGui::GetItemRectMin(), ImGui::GetItemRectMax(),
                                 ImGui::CalcTextSize(t.name).x, ImGui::IsItemVisible()});
      if (open) {
        frame.current_tab = t.name;
        // The tab's content scrolls in its own child, so the strip above
        // stays where a click meant for a tab expects it.
        ImGui::BeginChild("##tab-body", ImVec2(0, 0), false);
        frame.tab_body_h = ImGui::GetContentRegionAvail().y;
        frame.region_lines = 0;  // a tab with a scrolling region sets it
        (this->*t.draw)(now);
        ImGui::EndChild();
        ImGui::EndTabItem();
      }
    }
    if (!frame.hidden_tabs.empty()) {
      if (ImGui::TabItemButton(kMore, ImGuiTabItemFlags_Trailing)) ImGui::OpenPopup("##more-tabs");
      if (ImGui::IsItemHovered()) panel::tooltip("The tabs that do not fit");
      if (ImGui::BeginPopup("##more-tabs")) {
        for (const std::string& name : frame.hidden_tabs)
          if (ImGui::Selectable(name.c_str())) pick_next = name;
        ImGui::EndPopup();
      }
    }
    ImGui::EndTabBar();
    // Should the strip still scroll, its tabs past the edge are reached by
    // its arrows, not by scrolling this child: the layout ends at its edge.
    ImGuiWindow* w = ImGui::GetCurrentWindow();
    w->DC.CursorMaxPos.x = std::min(w->DC.CursorMaxPos.x, w->WorkRect.Max.x);
  }
  // A tab asked for stays asked for until it is on screen (ImGui selects
  // it a frame later, and until then it must stay among the shown ones),
  // unless this mode has no such tab.
  bool exists = false;
  for (const Tab& t : tabs) exists = exists || frame.select_tab == t.name;
  if (!pick_next.empty())
    frame.select_tab = pick_next;
  else if (!exists || frame.select_tab == frame.current_tab)
    frame.select_tab.clear();
  ImGui::EndChild();
  ImGui::End();
  frame.last_fit = panel::measure_panel_fit();
  frame.last_draw_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace rc::ui
