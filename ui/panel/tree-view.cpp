#include "panel/tree-view.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "panel/event-log.h"
#include "panel/label-text.h"
#include "panel/panel-fit.h"
#include "panel/panel-style.h"
#include "panel/tree-view-frame.h"

namespace rc::ui::panel {

bool TreeView::world_box(NodeId id, const TreeLayout& layout, float* x, float* y, float* w,
                         float* h) const {
  const LaidNode* ln = layout.find(id);
  if (!ln) return false;
  auto it = pos_.find(id);
  *x = it == pos_.end() ? ln->x : it->second.x;
  *y = it == pos_.end() ? ln->y : it->second.y;
  *w = ln->w;
  *h = ln->h;
  return true;
}

void TreeView::update_positions(const TreeViewInput& in, float dt) {
  const TreeLayout& L = *in.layout;
  if (!animate || L.nodes.size() > 4000) {
    pos_.clear();  // boxes sit at their layout places (and lookups stay cheap)
    return;
  }
  const bool snap = false;
  const float k = 1.0f - std::exp(-dt * 12.0f);
  for (const LaidNode& ln : L.nodes) {
    if (ln.id == kNoNode) continue;
    auto it = pos_.find(ln.id);
    if (it == pos_.end()) {
      ImVec2 start(ln.x, ln.y);
      if (!snap && ln.parent >= 0) {
        auto p = pos_.find(L.nodes[size_t(ln.parent)].id);
        if (p != pos_.end()) start = p->second;  // grow out of the parent
      }
      it = pos_.emplace(ln.id, start).first;
    }
    ImVec2& p = it->second;
    p.x += (ln.x - p.x) * k;
    p.y += (ln.y - p.y) * k;
    if (std::fabs(ln.x - p.x) < 0.25f && std::fabs(ln.y - p.y) < 0.25f) p = ImVec2(ln.x, ln.y);
  }
}

void TreeView::update_camera(const TreeViewInput& in, ImVec2 size, float dt) {
  const TreeLayout& L = *in.layout;
  const TreeModel& m = *in.model;
  // The free area: the zoom label sits at the top, the legend at the bottom.
  const FitArea area{size, 20, 20, 28 + top_inset, legend_h_ + 14};
  const float margin = 28;
  const LaidNode* root = L.find(kRootNode);
  const ImVec2 root_c =
      root ? ImVec2(root->x + root->w * 0.5f, root->y + root->h * 0.5f) : ImVec2(0, 0);
  auto center_on = [&](float wx, float wy, float zoom) {
    target_.zoom = zoom;
    target_.x = wx - (area.left + (size.x - area.left - area.right) * 0.5f) / zoom;
    target_.y = wy - (area.top + (size.y - area.top - area.bottom) * 0.5f) / zoom;
    has_target_ = true;
  };
  if (fit_requested_) {
    fit_requested_ = false;
    target_ = fit_camera(ImVec2(L.width, L.height), root_c, area);
    has_target_ = true;
  }
  if (focus_ != kNoNode) {
    float x, y, w, h;
    if (world_box(focus_, L, &x, &y, &w, &h))
      center_on(x + w * 0.5f, y + h * 0.5f, std::max(cam.zoom, 0.8f));
    focus_ = kNoNode;
  }
  // Follow growth: on every relayout, or a new insert, keep it in view.
  // A caption that grew or shrank (a lesson's next step) moves the free
  // area: followed boxes must not stay under it.
  const bool grew = in.layout_generation != seen_generation_ ||
                    m.last_insert_node() != seen_insert_ || std::fabs(top_inset - seen_inset_) > 1;
  seen_generation_ = in.layout_generation;
  seen_insert_ = m.last_insert_node();
  seen_inset_ = top_inset;
  if (follow && grew && !L.nodes.empty()) {  // the root alone too: it is recentred
    // Fit's view, capped at 1: the whole tree, or from the root at a
    // readable zoom; then moved as little as brings the newest node in, so
    // the root and the shared prefix stay in view while they can.
    Camera c = fit_camera(ImVec2(L.width, L.height), root_c, area);
    if (c.zoom > 1.0f) {
      center_on(L.width * 0.5f, L.height * 0.5f, 1.0f);
      c = target_;
    }
    NodeId watch = m.last_insert_node() != kNoNode ? m.last_insert_node() : m.last_match_node();
    // Where the node is going (its layout box), not where its glide is now.
    const LaidNode* t = watch != kNoNode ? L.find(watch) : nullptr;
    if (t) {
      const float z = c.zoom, pad = margin / z, view = size.x / z;
      if (t->x + t->w + pad > c.x + view) {
        c.x = t->x + t->w + pad - view;
        // Left to right, a node that does not fit whole beside the root is
        // known by its start: the root stays at the left edge while the
        // node's first 60% (at most half a view) is in view with it.
        const float root_edge = root ? root->x - area.left / z : 0.0f;
        const float start = t->x + std::min(t->w * 0.6f, view * 0.5f) + pad - view;
        if (!L.vertical && c.x > root_edge && start <= root_edge) c.x = root_edge;
      }
      if (t->x - pad < c.x) c.x = t->x - pad;
      if (t->y + t->h + area.bottom / z > c.y + size.y / z)
        c.y = t->y + t->h + area.bottom / z - size.y / z;
      if (t->y - area.top / z < c.y) c.y = t->y - area.top / z;
    }
    target_ = c;
    has_target_ = true;
  }
  if (has_target_) {
    const float k = smooth_camera ? 1.0f - std::exp(-dt * 9.0f) : 1.0f;
    // Zoom about the canvas centre so the glide does not swing sideways.
    const float cx0 = cam.x + size.x * 0.5f / cam.zoom, cy0 = cam.y + size.y * 0.5f / cam.zoom;
    const float cx1 = target_.x + size.x * 0.5f / target_.zoom;
    const float cy1 = target_.y + size.y * 0.5f / target_.zoom;
    const float z =
        std::exp(std::log(cam.zoom) + (std::log(target_.zoom) - std::log(cam.zoom)) * k);
    const float cx = cx0 + (cx1 - cx0) * k, cy = cy0 + (cy1 - cy0) * k;
    cam = Camera{cx - size.x * 0.5f / z, cy - size.y * 0.5f / z, z};
    if (k >= 1.0f || (std::fabs(cx - cx1) * z < 0.5f && std::fabs(cy - cy1) * z < 0.5f &&
                      std::fabs(z - target_.zoom) < 1e-3f)) {
      cam = target_;
      has_target_ = false;
    }
  }
}

void TreeView::handle_input(const TreeViewInput& in, ImVec2 size, TreeViewActions& act) {
  (void)in;
  (void)size;
  (void)act;
  ImGuiIO& io = ImGui::GetIO();
  if (ImGui::IsItemActivated()) {
    dragging_ = false;
    press_pos_ = io.MousePos;
  }
  if (ImGui::IsItemActive()) {
    const ImVec2 d = io.MousePos - press_pos_;
    if (dragging_ || d.x * d.x + d.y * d.y > 16) {
      dragging_ = true;
      cam.x -= io.MouseDelta.x / cam.zoom;
      cam.y -= io.MouseDelta.y / cam.zoom;
      follow = false;
      has_target_ = false;
    }
  }
  if (ImGui::IsItemHovered() && io.MouseWheel != 0) {
    const float z0 = cam.zoom;
    const float z1 = std::clamp(z0 * std::pow(1.15f, io.MouseWheel), kMinZoom, kMaxZoom);
    const ImVec2 m = io.MousePos - canvas_min_;
    cam.x += m.x / z0 - m.x / z1;  // the world point under the cursor stays put
    cam.y += m.y / z0 - m.y / z1;
    cam.zoom = z1;
    follow = false;
    has_target_ = false;
  }
}

void TreeView::draw_tooltip(const TreeViewInput& in, const TreeNode& n) {
  const TreeModel& m = *in.model;
  begin_tooltip();
  if (n.id == kRootNode) {
    ImGui::TextUnformatted("Root of the radix tree");
    ImGui::TextDisabled("%s below, tick %llu", plural(int64_t(m.size()) - 1, "node").c_str(),
                        (unsigned long long)m.tick());
    draw_marks_tooltip(in, n);
  } else {
    // The quote takes at most about half the display's height, so the
    // counts below it stay inside the tooltip.
    const size_t per_line = size_t(tooltip_wrap_width() / (ImGui::GetFontSize() * 0.5f));
    const size_t lines = size_t(std::max(
        ImGui::GetIO().DisplaySize.y * 0.45f / ImGui::GetTextLineHeightWithSpacing(), 2.0f));
    const std::string text = clip_lines(in.label ? in.label(n).full : std::string(),
                                        std::max<size_t>(per_line, 8), lines);
    ImGui::TextColored(ImVec4(1.0f, 0.86f, 0.55f, 1.0f), "\"%s\"", text.c_str());
    ImGui::Separator();
    ImGui::Text("#%u  %s, %s", n.id, plural(int64_t(n.tokens.size()), "token").c_str(),
                page_span(n.pages).c_str());
    ImGui::Text("%s of the prompt path",
                token_range(n.depth_tokens, int64_t(n.tokens.size())).c_str());
    draw_marks_tooltip(in, n);
    if (in.remote) {
      const int rank = in.rank_of ? in.rank_of(n.id) : -1;
      if (rank >= 0) ImGui::Text("data-parallel rank %d", rank);
      ImGui::TextDisabled("locks, hits and access times: not sent by a remote cache");
      ImGui::TextDisabled("children %zu - click to select, double-click to fold",
                          n.children.size());
      end_tooltip();
      return;
    }
    if (n.lock_ref)
      ImGui::Text("lock_ref %u: protected, a running request reads it", n.lock_ref);
    else if (n.pin_ref)
      ImGui::Text("lock_ref 0, pinned (pin_ref %u): evicted last", n.pin_ref);
    else
      ImGui::Text("lock_ref 0: evictable");
    const uint64_t ago = m.tick() >= n.last_access ? m.tick() - n.last_access : 0;
    ImGui::Text("last access: tick %llu (%llu ago)   hits: %llu", (unsigned long long)n.last_access,
                (unsigned long long)ago, (unsigned long long)n.hits);
    ImGui::TextDisabled(
        "children %zu - click to select, double-click to fold, right-click for more",
        n.children.size());
  }
  end_tooltip();
}

void TreeView::box_of(const LaidNode& ln, float z, ImVec2* p0, ImVec2* p1) const {
  ImVec2 w(ln.x, ln.y);
  if (ln.id != kNoNode) {
    auto it = pos_.find(ln.id);
    if (it != pos_.end()) w = it->second;
  }
  *p0 = to_screen(w.x, w.y);
  *p1 = *p0 + ImVec2(ln.w * z, ln.h * z);
}

// Oldest and newest access tick among the nodes, recomputed when the model
// changes: the heat colour is relative to them.
void TreeView::update_heat(const TreeModel& m) {
  if (m.version() == heat_version_) return;
  heat_version_ = m.version();
  oldest_ = UINT64_MAX;
  newest_ = 0;
  for (const auto& [id, n] : m.nodes()) {
    if (id == kRootNode) continue;
    oldest_ = std::min(oldest_, n.last_access);
    newest_ = std::max(newest_, n.last_access);
  }
}

void TreeView::draw_background(ImDrawList* dl) const {
  // No fill: the host clears to the canvas colour (a full-canvas quad is a
  // real cost for a software rasterizer); an outline marks the canvas.
  if (fill_background) dl->AddRectFilled(canvas_min_, canvas_max_, Palette::canvas, 4.0f);
  dl->AddRect(canvas_min_, canvas_max_, Palette::rgba(255, 255, 255, 22), 4.0f);
  // Faint grid: shows panning and zoom even over an empty area.
  const float step = 80 * cam.zoom;
  if (step < 18) return;
  for (float x = canvas_min_.x - std::fmod(cam.x * cam.zoom, step); x < canvas_max_.x; x += step)
    dl->AddLine(ImVec2(x, canvas_min_.y), ImVec2(x, canvas_max_.y), Palette::grid);
  for (float y = canvas_min_.y - std::fmod(cam.y * cam.zoom, step); y < canvas_max_.y; y += step)
    dl->AddLine(ImVec2(canvas_min_.x, y), ImVec2(canvas_max_.x, y), Palette::grid);
}

// Edges: parent's right (vertical: bottom) middle to the child's left
// (top) middle.
void TreeView::draw_edges(const Frame& f) {
  const float z = f.z;
  for (const LaidNode& ln : f.L.nodes) {
    if (ln.parent < 0) continue;
    const LaidNode& pn = f.L.nodes[size_t(ln.parent)];
    ImVec2 a0, a1, b0, b1;
    box_of(pn, z, &a0, &a1);
    box_of(ln, z, &b0, &b1);
    const bool vert = f.L.vertical;
    const ImVec2 a = vert ? ImVec2((a0.x + a1.x) * 0.5f, a1.y) : ImVec2(a1.x, (a0.y + a1.y) * 0.5f);
    const ImVec2 b = vert ? ImVec2((b0.x + b1.x) * 0.5f, b0.y) : ImVec2(b0.x, (b0.y + b1.y) * 0.5f);
    if (!overlaps(ImVec2(std::min(a.x, b.x), std::min(a.y, b.y)),
                  ImVec2(std::max(a.x, b.x), std::max(a.y, b.y)), canvas_min_, canvas_max_))
      continue;
    const TreeNode* child = ln.id == kNoNode ? nullptr : f.m.find(ln.id);
    const bool hot = f.on_match(child);
    const ImU32 col = hot ? with_alpha(Palette::matched, f.match_glow) : Palette::edge;
    const float th = hot ? 2.5f : std::clamp(1.4f * z, 1.0f, 2.0f);
    if (z < 0.3f) {
      f.dl->AddLine(a, b, col, th);
    } else {
      const ImVec2 t = vert ? ImVec2(0, (b.y - a.y) * 0.5f) : ImVec2((b.x - a.x) * 0.5f, 0);
      const int segs = std::clamp(int((std::fabs(b.x - a.x) + std::fabs(b.y - a.y)) / 12), 4, 24);
      f.dl->AddBezierCubic(a, a + t, b - t, b, col, th, segs);
    }
    ++stats_.edges_drawn;
  }
}

// Ghosts of evicted nodes, fading out where they were.
void TreeView::draw_ghosts(const Frame& f) {
  const float z = f.z;
  for (const Ghost& g : f.m.ghosts()) {
    const float age = float(f.in.now - g.died_at);
    if (!g.placed || age > kGhostLife) continue;
    const ImVec2 p0 = to_screen(g.x, g.y), p1 = p0 + ImVec2(g.w * z, g.h * z);
    if (!overlaps(p0, p1, canvas_min_, canvas_max_)) continue;
    const float a = 1.0f - age / float(kGhostLife);
    // Demoted just before its eviction (a demote is always followed by its
    // node's evict): its KV lives on in a tier below, so it sinks (slides
    // down, in the tier's colour) rather than dying.
    const bool sunk = g.node.demoted_at != kNever;
    const ImU32 c = sunk ? Palette::sunk : Palette::ghost;
    const ImVec2 drop(0, sunk ? age * 10.0f * z : 0.0f);
    f.dl->AddRectFilled(p0 + drop, p1 + drop, with_alpha(c, 0.55f * a), 3.0f * z);
    f.dl->AddRect(p0 + drop, p1 + drop, with_alpha(c, a), 3.0f * z, 0, 1.5f);
    if (f.text1) {
      const std::string text =
          sunk ? "sunk to " + (f.in.sink_tier.empty() ? std::string("a tier") : f.in.sink_tier)
               : std::string("evicted");
      f.dl->AddText(f.font, f.fs, p0 + drop + ImVec2(6 * z, 4 * z), with_alpha(Palette::text, a),
                    text.c_str());
    }
    ++stats_.ghosts_drawn;
    if (sunk) ++stats_.sunk_ghosts_drawn;
  }
}

namespace {
struct LegendItem {
  ImU32 c;
  std::string t;
  bool outline;
};

// A local cache: node states. A remote one: its ranks' colours (states and
// recency are not sent).
std::vector<LegendItem> legend_items(bool remote, const std::vector<int>& ranks,
                                     const std::string& sink, bool drafts) {
  if (!remote) {
    std::vector<LegendItem> v = {
        {Palette::locked, "locked", false},  {Palette::hot, "hot", false},
        {Palette::cold, "cold", false},      {Palette::pinned, "pinned", false},
        {Palette::matched, "matched", true}, {Palette::inserted, "new", true},
        {Palette::ghost, "evicted", false}};
    if (!sink.empty()) {
      v.push_back({Palette::tier, "also in " + sink, false});
      v.push_back({Palette::sunk, "sunk to " + sink, false});
      v.push_back({Palette::loaded, "loaded from " + sink, true});
    }
    if (drafts) v.push_back({Palette::drafted, "drafted from", true});
    return v;
  }
  if (ranks.empty()) return {{Palette::hot, "cached blocks (remote)", false}};
  std::vector<LegendItem> out;
  for (int r : ranks) out.push_back({rank_colour(r), "rank " + std::to_string(r), false});
  return out;
}
}  // namespace

// The legend's rows for the canvas width: a strip along the bottom that the
// tree is clipped above, so it never covers a node (Follow keeps the newest
// one inside the free area).
void TreeView::layout_legend(ImFont* font) {
  const float s = ImGui::GetFontSize() * 0.85f;
  const float left = canvas_min_.x + 10, right = canvas_max_.x - 10;
  legend_.clear();
  float x = left, row = 0;
  for (const LegendItem& it :
       legend_items(legend_remote_, legend_ranks_, legend_sink_, legend_drafts_)) {
    const float w = s + 3 + font->CalcTextSizeA(s, FLT_MAX, 0, it.t.c_str()).x;
    if (x > left && x + w > right) {
      x = left;
      row += 1;
    }
    legend_.push_back(ImVec2(x, row));
    x += w + 10;
  }
  legend_h_ = (row + 1) * (s + 5) + 8;
}

float TreeView::tree_top() const { return canvas_min_.y + (top_inset > 0 ? top_inset + 22 : 0); }

// Legend (the bottom strip) and zoom/scale (top right).
void TreeView::draw_legend(const Frame& f) {
  const float s = ImGui::GetFontSize() * 0.85f;
  const float line = s + 5;
  const float top = canvas_max_.y - legend_h_ + 4;
  f.dl->AddRectFilled(ImVec2(canvas_min_.x + 1, canvas_max_.y - legend_h_),
                      ImVec2(canvas_max_.x - 1, canvas_max_.y - 1), Palette::rgba(16, 18, 24, 235),
                      4.0f, ImDrawFlags_RoundCornersBottom);
  f.dl->AddLine(ImVec2(canvas_min_.x + 1, canvas_max_.y - legend_h_),
                ImVec2(canvas_max_.x - 1, canvas_max_.y - legend_h_), Palette::border);
  const std::vector<LegendItem> items =
      legend_items(legend_remote_, legend_ranks_, legend_sink_, legend_drafts_);
  for (size_t i = 0; i < legend_.size() && i < items.size(); ++i) {
    const ImVec2 at = legend_[i];
    const LegendItem* it = &items[i];
    const ImVec2 p(at.x, top + at.y * line);
    if (it->outline)
      f.dl->AddRect(p + ImVec2(0, 2), p + ImVec2(s - 2, s), it->c, 2.0f, 0, 2.0f);
    else
      f.dl->AddRectFilled(p + ImVec2(0, 2), p + ImVec2(s - 2, s), it->c, 2.0f);
    f.dl->AddText(f.font, s, p + ImVec2(s + 3, 0), Palette::text_dim, it->t.c_str());
  }
  char buf[96];
  std::snprintf(buf, sizeof buf, "%d%%  %s/%s shown", int(std::lround(f.z * 100)),
                thousands(int64_t(f.L.nodes.size())).c_str(),
                thousands(int64_t(f.L.model_nodes)).c_str());
  const ImVec2 ts = f.font->CalcTextSizeA(s, FLT_MAX, 0, buf);
  f.dl->AddText(f.font, s, ImVec2(canvas_max_.x - ts.x - 10, canvas_min_.y + 8), Palette::text_dim,
                buf);
}

// Clicks (a press and release without a drag), double-clicks, the context
// menu and the hover tooltip.
void TreeView::handle_clicks(const TreeViewInput& in, bool released, bool canvas_hovered,
                             const Hover& h, TreeViewActions& act) {
  const ImGuiIO& io = ImGui::GetIO();
  const TreeModel& m = *in.model;
  hovered_ = h.node;
  if (released && !dragging_) {
    if (io.MouseReleased[0]) {
      if (h.node != kNoNode)
        act.clicked = h.node;
      else if (h.aggregate_parent != kNoNode)
        act.expand_children_of = h.aggregate_parent;
      else
        act.clicked_background = true;
    } else if (io.MouseReleased[1] && h.node != kNoNode) {
      context_node_ = h.node;
      ImGui::OpenPopup("##tree-node-menu");
    }
  }
  if (canvas_hovered && ImGui::IsMouseDoubleClicked(0) && h.node != kNoNode && h.node != kRootNode)
    act.toggle_fold = h.node;
  if (ImGui::BeginPopup("##tree-node-menu")) {
    const TreeNode* n = m.find(context_node_);
    if (!n) {
      ImGui::CloseCurrentPopup();
    } else {
      ImGui::TextDisabled("#%u, %zu tokens", n->id, n->tokens.size());
      ImGui::Separator();
      if (ImGui::MenuItem("Select")) act.clicked = n->id;
      if (ImGui::MenuItem("Fold / unfold subtree", nullptr, false, !n->children.empty()))
        act.toggle_fold = n->id;
      if (ImGui::MenuItem("Centre on it")) focus(n->id);
      if (ImGui::MenuItem("Conversations using this prefix...", nullptr, false, n->id != kRootNode))
        act.conversations = n->id;
    }
    ImGui::EndPopup();
  }
  act.hovered = h.node;
  if (h.node != kNoNode && !dragging_ && !ImGui::IsPopupOpen("##tree-node-menu")) {
    if (const TreeNode* n = m.find(h.node)) draw_tooltip(in, *n);
  }
}

// A resize keeps what was in the middle in the middle; with Follow on, the
// next camera update refits the tree to the new shape instead.
void TreeView::keep_centre_on_resize(ImVec2 size) {
  const ImVec2 old = last_size_;
  last_size_ = size;
  if (old.x <= 0 || (std::fabs(size.x - old.x) < 0.5f && std::fabs(size.y - old.y) < 0.5f)) return;
  if (follow) {
    seen_generation_ = UINT64_MAX - 1;  // counts as growth: follow re-centres
    return;
  }
  auto shift = [&](Camera& c) {
    c.x += (old.x - size.x) * 0.5f / c.zoom;
    c.y += (old.y - size.y) * 0.5f / c.zoom;
  };
  shift(cam);
  if (has_target_) shift(target_);
}

TreeViewActions TreeView::draw(const TreeViewInput& in, ImVec2 size) {
  stats_ = {};
  TreeViewActions act;
  const TreeLayout& L = *in.layout;
  const TreeModel& m = *in.model;
  const float dt = last_now_ < 0 ? 1.0f / 60 : float(std::clamp(in.now - last_now_, 0.0, 0.1));
  last_now_ = in.now;
  size.x = std::max(size.x, 60.0f);
  size.y = std::max(size.y, 60.0f);
  canvas_min_ = ImGui::GetCursorScreenPos();
  canvas_max_ = canvas_min_ + size;
  ImGui::InvisibleButton("##tree-canvas", size,
                         ImGuiButtonFlags_MouseButtonLeft | ImGuiButtonFlags_MouseButtonRight |
                             ImGuiButtonFlags_MouseButtonMiddle);
  const bool canvas_hovered = ImGui::IsItemHovered();
  const bool released = ImGui::IsItemDeactivated();
  handle_input(in, size, act);
  keep_centre_on_resize(size);
  legend_remote_ = in.remote;
  legend_ranks_ = in.ranks;
  legend_sink_ = in.sink_tier;
  legend_drafts_ = m.draft_counts().tree_drafts > 0;
  layout_legend(ImGui::GetFont());

  if (in.layout_generation != seen_generation_) {
    // Drop animated positions of nodes that left the layout.
    for (auto it = pos_.begin(); it != pos_.end();)
      it = L.index.count(it->first) ? std::next(it) : pos_.erase(it);
  }
  update_camera(in, size, dt);
  update_positions(in, dt);
  update_heat(m);

  const float z = cam.zoom;
  // Text shrinks with the boxes, but not below a readable size while the
  // boxes still have room for it (it is clipped to its box).
  const float fs_scaled = font_size * z;
  const float fs = z >= 0.5f ? std::max(fs_scaled, std::min(font_size, 11.5f)) : fs_scaled;
  const double match_at = m.last_match_at();
  const Frame f{
      in,
      L,
      m,
      ImGui::GetWindowDrawList(),
      ImGui::GetFont(),
      z,
      fs_scaled,
      fs,
      fs >= 6.0f,
      fs >= 7.5f,
      match_at,
      match_at == kNever ? 0.0f : float(std::max(0.35, 1.0 - (in.now - match_at) / kMatchGlow)),
      std::max(3.0f, float(newest_ - std::min(oldest_, newest_)) * 0.15f)};

  f.dl->PushClipRect(canvas_min_, canvas_max_, true);
  draw_background(f.dl);
  // The tree is clipped to the area between the caption and the legend.
  f.dl->PushClipRect(ImVec2(canvas_min_.x, tree_top()),
                     ImVec2(canvas_max_.x, canvas_max_.y - legend_h_), true);
  draw_edges(f);
  const Hover hover = draw_nodes(f, canvas_hovered);
  draw_ghosts(f);  // on top: an eviction must be seen, not covered
  f.dl->PopClipRect();
  draw_legend(f);
  f.dl->PopClipRect();
  handle_clicks(in, released, canvas_hovered, hover, act);
  return act;
}

}  // namespace rc::ui::panel
