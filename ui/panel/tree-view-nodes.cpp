// The tree view's node boxes: fill by state and heat, highlights, text,
// tags, and the "+N more" boxes of folded siblings.
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>

#include "panel/event-log.h"
#include "panel/label-text.h"
#include "panel/panel-fit.h"
#include "panel/panel-style.h"
#include "panel/tree-view-frame.h"
#include "panel/tree-view.h"

namespace rc::ui::panel {

// A "+N more" box standing for folded siblings.
void TreeView::draw_aggregate(const Frame& f, const LaidNode& ln, ImVec2 p0, ImVec2 p1,
                              bool under_mouse) {
  const float z = f.z;
  f.dl->AddRectFilled(p0, p1, Palette::rgba(38, 43, 54), 8.0f * z);
  f.dl->AddRect(p0, p1, under_mouse ? Palette::text_dim : Palette::edge, 8.0f * z, 0, 1.0f);
  if (f.text1) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "+%s more", thousands(ln.folded_children).c_str());
    f.dl->AddText(f.font, f.fs, p0 + ImVec2(8 * z, 3 * z), Palette::text_dim, buf);
  }
  if (under_mouse)
    tooltip("%s folded here (%s): click to show them all",
            plural(ln.folded_children, "more branch", "more branches").c_str(),
            plural(ln.hidden, "node").c_str());
  ++stats_.aggregates_drawn;
}

ImU32 rank_colour(int rank) {
  // Muted hues that keep white text readable; they repeat after eight ranks.
  static constexpr ImU32 kRanks[] = {Palette::rgba(30, 136, 168), Palette::rgba(184, 108, 40),
                                     Palette::rgba(128, 92, 196), Palette::rgba(58, 146, 88),
                                     Palette::rgba(178, 70, 84),  Palette::rgba(146, 136, 46),
                                     Palette::rgba(64, 92, 186),  Palette::rgba(172, 78, 146)};
  return kRanks[static_cast<size_t>(std::max(rank, 0)) % std::size(kRanks)];
}

ImU32 TreeView::node_fill(const Frame& f, const TreeNode& n) const {
  if (n.id == kRootNode) return Palette::root;
  if (f.in.remote) {  // no locks or recency: the rank, when there are several
    const int rank = f.in.rank_of ? f.in.rank_of(n.id) : -1;
    return rank >= 0 ? rank_colour(rank) : Palette::hot;
  }
  if (n.lock_ref > 0) return Palette::locked;
  if (n.pin_ref > 0) return Palette::pinned;
  const float heat = std::exp(-float(newest_ - std::min(newest_, n.last_access)) / f.tau);
  return mix(Palette::cold, Palette::hot, heat);
}

// Highlights around a node box, outermost last so the most important shows.
void TreeView::draw_highlights(const Frame& f, const TreeNode& n, ImVec2 p0, ImVec2 p1) const {
  auto outline = [&](ImU32 c, float grow, float th) {
    const ImVec2 g(grow, grow);
    f.dl->AddRect(p0 - g, p1 + g, c, 2.0f, 0, th);
  };
  const double new_age = f.in.now - n.inserted_at;
  if (new_age < kNewGlow)
    outline(with_alpha(Palette::inserted, float(1.0 - new_age / kNewGlow)), 1.5f, 2.0f);
  if (f.on_match(&n) && n.id != kRootNode)
    outline(with_alpha(Palette::matched, f.match_glow), 1.5f, 2.5f);
  const double flash_age = f.in.now - n.flashed_at;
  if (flash_age < kFlash) {
    const float pulse = 0.5f + 0.5f * std::cos(float(flash_age) * 9.0f);
    outline(with_alpha(Palette::flash, float(1.0 - flash_age / kFlash) * pulse), 4.0f, 2.0f);
  }
  const double loaded_age = f.in.now - n.promoted_at;
  if (loaded_age < kLoadedGlow)
    outline(with_alpha(Palette::loaded, float(1.0 - loaded_age / kLoadedGlow)), 2.5f, 2.5f);
  if (n.id == f.in.located || n.id == f.in.located_partial) outline(Palette::located, 4.0f, 2.5f);
  if (n.id == f.in.selected) outline(Palette::selected, 3.0f, 2.5f);
}

// The node's text (first line) and its counts (second line), clipped to it.
void TreeView::draw_node_text(const Frame& f, const LaidNode& ln, const TreeNode& n, ImVec2 p0,
                              ImVec2 p1) {
  const float z = f.z;
  const bool is_root = n.id == kRootNode;
  const ImVec4 clip(p0.x + 1, p0.y + 1, p1.x - 1, p1.y - 1);
  const char* line1 = "";
  if (is_root) {
    line1 = "root";
  } else if (f.in.label) {
    NodeLabel& lab = f.in.label(n);
    // Fitted for the box width at the text size in world units (text can
    // be relatively larger than the box when zoomed out a little).
    const float world_fs = std::round(f.fs / z * 4) / 4;
    const float key = ln.w + world_fs * 10000;
    if (lab.fitted_for != key) {
      // Start and end of a long node, the middle elided; only a few hundred
      // characters of each end are ever measured.
      if (lab.ends.empty()) lab.ends = line_ends(lab.full, 200);
      lab.fitted = fit_text_middle(f.font, world_fs, lab.ends, ln.w - 10);
      lab.fitted_for = key;
    }
    line1 = lab.fitted.c_str();
  }
  f.dl->AddText(f.font, f.fs, p0 + ImVec2(6 * z, 2 + 1 * z), Palette::text, line1, nullptr, 0,
                &clip);
  ++stats_.labels_drawn;
  if (!f.text2) return;
  char buf[96];
  if (is_root)
    std::snprintf(buf, sizeof buf, "%s", plural(int64_t(f.m.size()) - 1, "node").c_str());
  else if (f.in.remote && !f.in.ranks.empty() && n.parent == kRootNode)
    std::snprintf(buf, sizeof buf, "data-parallel rank");  // a rank's own node
  else if (f.in.remote)  // a remote cache sends no hits or locks: say what it has
    std::snprintf(buf, sizeof buf, "%s tok \xC2\xB7 %s",
                  thousands(int64_t(n.tokens.size())).c_str(),
                  plural(int64_t(n.pages.size()), "block").c_str());
  else
    std::snprintf(buf, sizeof buf, "%s tok \xC2\xB7 %llu hits%s%s",
                  thousands(int64_t(n.tokens.size())).c_str(), (unsigned long long)n.hits,
                  n.lock_ref ? " \xC2\xB7 locked" : "", n.pin_ref ? " \xC2\xB7 pinned" : "");
  const float fs2 = z >= kReadableZoom ? std::max(f.fs_scaled * 0.86f, 11.0f)
                    : z >= 0.5f        ? std::max(f.fs_scaled * 0.86f, 9.5f)
                                       : f.fs_scaled * 0.86f;
  f.dl->AddText(f.font, fs2, ImVec2(p0.x + 6 * z, p1.y - fs2 - 3 * z), Palette::text_dim, buf,
                nullptr, 0, &clip);
}

// "+N" (folded subtree) on the right edge and "new" on the top edge.
void TreeView::draw_node_tags(const Frame& f, const LaidNode& ln, const TreeNode& n, ImVec2 p0,
                              ImVec2 p1) const {
  const float z = f.z;
  if (ln.folded) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "+%s", thousands(ln.hidden).c_str());
    const ImVec2 ts = f.font->CalcTextSizeA(f.fs * 0.8f, FLT_MAX, 0, buf);
    const ImVec2 t0(p1.x - ts.x - 8 * z, p0.y - ts.y * 0.6f);
    f.dl->AddRectFilled(t0 - ImVec2(3 * z, 1 * z), t0 + ts + ImVec2(3 * z, 1 * z),
                        Palette::rgba(90, 98, 118), 6 * z);
    f.dl->AddText(f.font, f.fs * 0.8f, t0, Palette::text, buf);
  }
  const double new_age = f.in.now - n.inserted_at;
  if (new_age < kNewGlow) {
    const float a = float(1.0 - new_age / kNewGlow);
    const ImVec2 ts = f.font->CalcTextSizeA(f.fs * 0.72f, FLT_MAX, 0, "new");
    const ImVec2 t0(p0.x + 6 * z, p0.y - ts.y * 0.65f);
    f.dl->AddRectFilled(t0 - ImVec2(3 * z, 0), t0 + ts + ImVec2(3 * z, 0),
                        with_alpha(Palette::inserted, a), 5 * z);
    f.dl->AddText(f.font, f.fs * 0.72f, t0, with_alpha(Palette::rgba(10, 30, 16), a), "new");
  }
}

void TreeView::draw_node(const Frame& f, const LaidNode& ln, const TreeNode& n, ImVec2 p0,
                         ImVec2 p1, bool under_mouse) {
  const float z = f.z;
  const ImU32 fill = node_fill(f, n);
  if (ln.folded) {  // a stack of cards: more is hidden behind
    const ImVec2 off(4 * z, -4 * z);
    f.dl->AddRectFilled(p0 + off + off, p1 + off + off - ImVec2(0, 3 * z),
                        mix(fill, Palette::canvas, 0.6f));
    f.dl->AddRectFilled(p0 + off, p1 + off - ImVec2(0, 2 * z), mix(fill, Palette::canvas, 0.35f));
  }
  f.dl->AddRectFilled(p0, p1, fill);  // the node box: exactly one quad
  ++stats_.nodes_drawn;
  if (ln.folded) ++stats_.folded_drawn;
  f.dl->AddRect(p0, p1, under_mouse ? Palette::rgba(255, 255, 255, 120) : Palette::border, 0, 0,
                1.0f);
  draw_highlights(f, n, p0, p1);
  draw_node_marks(f, n, p0, p1);
  draw_tier_marks(f, n, p0, p1);
  draw_draft_mark(f, n, p0, p1);
  if (!f.text1) return;
  draw_node_text(f, ln, n, p0, p1);
  draw_node_tags(f, ln, n, p0, p1);
}

// Every laid-out box in view; returns what is under the mouse.
TreeView::Hover TreeView::draw_nodes(const Frame& f, bool canvas_hovered) {
  Hover h;
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  for (const LaidNode& ln : f.L.nodes) {
    ImVec2 p0, p1;
    box_of(ln, f.z, &p0, &p1);
    if (!overlaps(p0, p1, canvas_min_, canvas_max_)) {
      ++stats_.culled;
      continue;
    }
    const bool under_mouse = canvas_hovered && mouse.y >= tree_top() &&
                             mouse.y < canvas_max_.y - legend_h_ && mouse.x >= p0.x &&
                             mouse.x < p1.x && mouse.y >= p0.y && mouse.y < p1.y;
    if (ln.aggregate) {
      draw_aggregate(f, ln, p0, p1, under_mouse);
      if (under_mouse) h.aggregate_parent = f.L.nodes[size_t(ln.parent)].id;
      continue;
    }
    const TreeNode* n = f.m.find(ln.id);
    if (!n) continue;
    if (under_mouse) h.node = n->id;
    draw_node(f, ln, *n, p0, p1, under_mouse);
  }
  if (f.L.empty() && f.m.ghosts().empty()) {
    // Below the root's box wherever the camera put it, wrapped to the canvas.
    float y = (canvas_min_.y + canvas_max_.y) * 0.5f + 30;
    if (const LaidNode* root = f.L.find(kRootNode)) {
      ImVec2 p0, p1;
      box_of(*root, f.z, &p0, &p1);
      y = std::max(y, p1.y + 12);
    }
    const float wrap = std::max(canvas_max_.x - canvas_min_.x - 24, 40.0f);
    const ImVec2 ts = ImGui::CalcTextSize(empty_message.c_str(), nullptr, false, wrap);
    const ImVec2 at((canvas_min_.x + canvas_max_.x - ts.x) * 0.5f, y);
    f.dl->AddText(ImGui::GetFont(), ImGui::GetFontSize(), at, Palette::text_dim,
                  empty_message.c_str(), nullptr, wrap);
    stats_.empty_message_min = at;
    stats_.empty_message_max = at + ts;
  }
  return h;
}

}  // namespace rc::ui::panel
