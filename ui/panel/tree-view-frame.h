// Private to the tree view's drawing (tree-view.cpp, tree-view-nodes.cpp):
// its constants, small vector helpers and the per-frame drawing state.
#pragma once

#include <imgui.h>

#include "panel/tree-view.h"

namespace rc::ui::panel {

constexpr double kMatchGlow = 4.0;   // seconds a match path stays bright
constexpr double kNewGlow = 6.0;     // seconds a new suffix is marked
constexpr double kFlash = 1.6;       // seconds a split/merge flashes
constexpr double kGhostLife = 3.0;   // seconds an evicted node fades out
constexpr double kLoadedGlow = 8.0;  // seconds a node loaded from a tier is marked
constexpr float kMinZoom = 0.03f, kMaxZoom = 3.0f;

inline ImVec2 operator+(ImVec2 a, ImVec2 b) { return ImVec2(a.x + b.x, a.y + b.y); }
inline ImVec2 operator-(ImVec2 a, ImVec2 b) { return ImVec2(a.x - b.x, a.y - b.y); }

inline bool overlaps(ImVec2 a0, ImVec2 a1, ImVec2 b0, ImVec2 b1) {
  return a0.x <= b1.x && a1.x >= b0.x && a0.y <= b1.y && a1.y >= b0.y;
}

// What every drawing step of one frame shares: the inputs, the draw list,
// the zoom and the text sizes it implies, the latest match and the heat scale.
struct TreeView::Frame {
  const TreeViewInput& in;
  const TreeLayout& L;
  const TreeModel& m;
  ImDrawList* dl;
  ImFont* font;
  float z;          // camera zoom
  float fs_scaled;  // font size scaled with the boxes
  float fs;         // font size drawn (kept readable while boxes have room)
  bool text1, text2;
  double match_at;
  float match_glow;
  float tau;  // heat: ticks over which a node cools from hot to cold

  bool on_match(const TreeNode* n) const {
    return n && match_at != kNever && n->matched_at == match_at;
  }
};

}  // namespace rc::ui::panel
