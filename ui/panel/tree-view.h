// The tree canvas: draws a TreeLayout with ImGui's draw list and turns mouse
// input into pan (drag), zoom (wheel, around the cursor), hover, select
// (click), fold (double-click) and a context menu.
//
// What is drawn, and why:
//   box fill     state: locked (amber, protected), pinned (violet), else
//                evictable, blended cold slate -> hot teal by recency
//   gold         outline and edges of the path the latest request matched
//   green        outline and "new" tag on a freshly inserted suffix
//   white flash  a node that was just split or merged
//   red ghost    an evicted node fading out where it was
//   "+N"         a folded subtree (level of detail); "+N more" folded siblings
//   amber corner a sibling reads the same with other token ids; red ring:
//                where a context cut left the cached path (node-marks.h)
// Boxes outside the canvas are culled; text is dropped when it would be too
// small to read, and edges become straight lines when zoomed far out.
//
// Each node box is exactly one AddRectFilled (one quad of the node's size),
// so a test can count boxes in the draw data. GUI thread, inside an ImGui
// frame.
#pragma once

#include <imgui.h>

#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "panel/tree-lod.h"
#include "panel/tree-model.h"

namespace rc::ui::panel {

class SiblingDiffs;  // sibling-diff.h
struct ContextCut;   // context-cut.h

struct Camera {
  float x = 0, y = 0;  // world point at the canvas' top-left corner
  float zoom = 1;      // screen pixels per world unit
};

// The free part of a canvas of `size` pixels that Fit and Follow place the
// tree in: `left`, `right`, `top` and `bottom` pixels are kept clear (the
// zoom label, the caption banner, the legend).
struct FitArea {
  ImVec2 size{0, 0};
  float left = 0, right = 0, top = 0, bottom = 0;
};

// The zoom at which a node's label and token count stay at least 11 px
// tall (Fit never goes below it; Follow zooms out to it at most).
inline constexpr float kReadableZoom = 0.75f;

// Fit's camera (docs/architecture.md section 16): the tree, `tree` world
// units, centred in the free area at the zoom that shows it whole, at most
// 1.25 and never below kReadableZoom, where boxes would lose their text.
// Along an axis the tree overflows at that zoom, the view is centred on
// the root's box (`root`: its world centre) as far as the tree's extent
// allows, so the root shows and the user pans for the rest. Pure.
Camera fit_camera(ImVec2 tree, ImVec2 root, const FitArea& area);

struct NodeLabel {
  size_t n_tokens = 0;
  Token first = -1;
  Token parent_last = -1;  // the parent's last token: its tail may end a header here
  std::string full;    // decoded span
  std::string fitted;  // one line that fits the box at zoom 1
  std::string ends;    // one line: the span's start and end (long spans elided)
  float fitted_for = -1;
};

struct TreeViewInput {
  const TreeModel* model = nullptr;
  const TreeLayout* layout = nullptr;
  const NodeMetrics* metrics = nullptr;
  std::function<NodeLabel&(const TreeNode&)> label;
  NodeId selected = kNoNode;
  NodeId located = kNoNode;
  NodeId located_partial = kNoNode;
  double now = 0;
  uint64_t layout_generation = 0;  // changes whenever `layout` was recomputed
  // Explanation marks (node-marks.h): look-alike siblings and where the
  // latest context cut left the cached path; null draws neither.
  const SiblingDiffs* look_alikes = nullptr;
  const ContextCut* context_cut = nullptr;
  // A remote cache (KV events): no locks, hits or access ticks exist, so
  // boxes are coloured by data-parallel rank (rank_of, -1: none) and the
  // counts say blocks instead of hits.
  bool remote = false;
  std::vector<int> ranks;  // ranks present, when several
  std::function<int(NodeId)> rank_of;
  // Cache tiers below the pool: their names, fastest first ("host, disk";
  // empty: none). A node the tiers also hold gets a stripe and a tag named
  // after the lowest one (`sink_tier`); a demoted node's ghost sinks there
  // instead of vanishing; a node loaded back flashes "loaded".
  std::string tiers;
  std::string sink_tier;
};

// The fill of a remote cache's nodes on data-parallel rank `rank`.
ImU32 rank_colour(int rank);

struct TreeViewStats {
  int nodes_drawn = 0;  // boxes of real nodes (root included), on screen
  int folded_drawn = 0;
  int aggregates_drawn = 0;
  int ghosts_drawn = 0;
  int edges_drawn = 0;
  int labels_drawn = 0;
  int culled = 0;             // laid-out boxes skipped as off-screen
  int look_alikes_drawn = 0;  // boxes marked as a sibling's look-alike
  int cut_marks_drawn = 0;    // boxes marked as a context cut's branch point
  int tier_marks_drawn = 0;   // boxes the tiers below the pool also hold
  int draft_marks_drawn = 0;  // boxes a recent draft was read from
  int sunk_ghosts_drawn = 0;  // evicted nodes drawn as sunk to a tier
  // Where an empty tree's message was drawn (screen; both {0,0}: none):
  // below the root's box, never over it.
  ImVec2 empty_message_min{0, 0}, empty_message_max{0, 0};
};

struct TreeViewActions {
  NodeId hovered = kNoNode;
  NodeId clicked = kNoNode;
  bool clicked_background = false;
  NodeId toggle_fold = kNoNode;
  NodeId expand_children_of = kNoNode;  // a "+N more" box was clicked
  NodeId conversations = kNoNode;       // context menu: which chats use it
};

class TreeView {
 public:
  Camera cam;
  bool follow = true;         // keep the newest growth in view (off after a manual pan)
  bool animate = true;        // boxes glide to new places after a relayout
  bool smooth_camera = true;  // camera glides to fit/follow targets
  // Pixels at the canvas top covered by the owner's caption banner.
  float top_inset = 0;
  // Paint the canvas background (off when the host clears to Palette::canvas).
  bool fill_background = false;
  float font_size = 15;
  // Shown in the middle of a canvas with nothing but the root.
  std::string empty_message = "The cache is empty: send a message, or run a demo.";

  void request_fit() { fit_requested_ = true; }
  // Puts the camera exactly at `c`, as it was on a canvas of `canvas` pixels
  // (canvas_size() then; {0,0}: unknown), and drops any fit, focus or glide
  // in progress (a saved view coming back). A canvas of another size since
  // keeps the same centre, as a resize does.
  void set_camera(const Camera& c, ImVec2 canvas = {0, 0}) {
    cam = c;
    fit_requested_ = has_target_ = false;
    focus_ = kNoNode;
    if (canvas.x > 0) last_size_ = canvas;
  }
  ImVec2 canvas_size() const { return last_size_; }
  // Pans (smoothly) so that `id` is in the middle of the canvas.
  void focus(NodeId id) { focus_ = id; }

  // Draws at the current cursor position, `size` pixels, inside the current
  // window, and consumes the mouse over it.
  TreeViewActions draw(const TreeViewInput& in, ImVec2 size);
  const TreeViewStats& stats() const { return stats_; }
  // The camera is still moving (a fit, focus or follow in progress).
  bool busy() const { return has_target_ || fit_requested_ || focus_ != kNoNode; }

  // Where a node is drawn now (world units); false when not laid out.
  bool world_box(NodeId id, const TreeLayout& layout, float* x, float* y, float* w, float* h) const;
  // Screen rectangle of the canvas in the latest frame.
  ImVec2 canvas_min() const { return canvas_min_; }
  ImVec2 canvas_max() const { return canvas_max_; }
  // Screen y range nodes are drawn in: below the caption, above the legend.
  float tree_area_top() const { return tree_top(); }
  float tree_area_bottom() const { return canvas_max_.y - legend_h_; }
  // Screen position of a world point with the current camera.
  ImVec2 to_screen(float wx, float wy) const {
    return ImVec2(canvas_min_.x + (wx - cam.x) * cam.zoom, canvas_min_.y + (wy - cam.y) * cam.zoom);
  }
  // Forget a node's animated position (its id was reused by a new node).
  void forget(NodeId id) { pos_.erase(id); }

 private:
  struct Frame;  // one frame's shared drawing state (tree-view.cpp)
  struct Hover {
    NodeId node = kNoNode;              // the node box under the mouse
    NodeId aggregate_parent = kNoNode;  // or a "+N more" box: its parent
  };
  // draw()'s steps, in order.
  void update_heat(const TreeModel& m);
  void draw_background(ImDrawList* dl) const;
  void draw_edges(const Frame& f);
  void draw_ghosts(const Frame& f);
  Hover draw_nodes(const Frame& f, bool canvas_hovered);
  void draw_aggregate(const Frame& f, const LaidNode& ln, ImVec2 p0, ImVec2 p1, bool under_mouse);
  void draw_node(const Frame& f, const LaidNode& ln, const TreeNode& n, ImVec2 p0, ImVec2 p1,
                 bool under_mouse);
  ImU32 node_fill(const Frame& f, const TreeNode& n) const;
  void draw_highlights(const Frame& f, const TreeNode& n, ImVec2 p0, ImVec2 p1) const;
  void draw_node_text(const Frame& f, const LaidNode& ln, const TreeNode& n, ImVec2 p0, ImVec2 p1);
  void draw_node_tags(const Frame& f, const LaidNode& ln, const TreeNode& n, ImVec2 p0,
                      ImVec2 p1) const;
  void layout_legend(ImFont* font);
  void draw_legend(const Frame& f);
  float tree_top() const;  // top of the area nodes are drawn in (below the caption)
  void keep_centre_on_resize(ImVec2 size);
  void handle_clicks(const TreeViewInput& in, bool released, bool canvas_hovered, const Hover& h,
                     TreeViewActions& act);
  // A laid-out box on screen (at its animated place, if any).
  void box_of(const LaidNode& ln, float z, ImVec2* p0, ImVec2* p1) const;

  void update_positions(const TreeViewInput& in, float dt);
  void update_camera(const TreeViewInput& in, ImVec2 size, float dt);
  void handle_input(const TreeViewInput& in, ImVec2 size, TreeViewActions& act);
  void draw_tooltip(const TreeViewInput& in, const TreeNode& n);
  // tree-view-marks.cpp
  void draw_node_marks(const Frame& f, const TreeNode& n, ImVec2 p0, ImVec2 p1);
  void draw_marks_tooltip(const TreeViewInput& in, const TreeNode& n) const;
  void draw_tier_marks(const Frame& f, const TreeNode& n, ImVec2 p0, ImVec2 p1);
  void draw_draft_mark(const Frame& f, const TreeNode& n, ImVec2 p0, ImVec2 p1);

  TreeViewStats stats_;
  ImVec2 canvas_min_{0, 0}, canvas_max_{0, 0};
  std::unordered_map<NodeId, ImVec2> pos_;  // animated world positions
  uint64_t seen_generation_ = UINT64_MAX;
  NodeId seen_insert_ = kNoNode;
  float seen_inset_ = 0;  // top_inset when the camera last followed
  bool fit_requested_ = true;
  NodeId focus_ = kNoNode;
  bool has_target_ = false;
  Camera target_;
  double last_now_ = -1;
  bool dragging_ = false;
  ImVec2 press_pos_{0, 0};
  NodeId hovered_ = kNoNode;
  NodeId context_node_ = kNoNode;
  // Heat scale: newest and oldest last_access, refreshed per model version.
  uint64_t heat_version_ = UINT64_MAX;
  uint64_t oldest_ = 0, newest_ = 0;
  float legend_h_ = 30;         // height of the legend strip at the canvas bottom
  std::vector<ImVec2> legend_;  // per legend item: x (screen) and row
  bool legend_remote_ = false;  // the legend shows ranks (remote) or node states
  std::vector<int> legend_ranks_;
  std::string legend_sink_;     // a tier below the pool (its legend entries), or empty
  bool legend_drafts_ = false;  // a draft came from the tree: its mark is explained
  ImVec2 last_size_{0, 0};      // canvas size of the previous frame
};

}  // namespace rc::ui::panel
