// Colours, fonts and the ImGui style of the cache panel, in one place so the
// tree, the memory bar and the legend agree on what each colour means.
#pragma once

#include <imgui.h>

namespace rc::ui::panel {

constexpr ImU32 rgba(int r, int g, int b, int a = 255) { return IM_COL32(r, g, b, a); }

struct Palette {
  static constexpr ImU32 rgba(int r, int g, int b, int a = 255) { return panel::rgba(r, g, b, a); }

  // Node states (fills). Evictable nodes blend cold -> hot by recency.
  static constexpr ImU32 cold = panel::rgba(52, 60, 76);
  static constexpr ImU32 hot = panel::rgba(30, 136, 168);
  static constexpr ImU32 locked = panel::rgba(196, 122, 30);  // protected: a request reads it
  static constexpr ImU32 pinned = panel::rgba(122, 88, 196);  // priority prefix
  static constexpr ImU32 root = panel::rgba(64, 70, 86);
  static constexpr ImU32 held = panel::rgba(232, 176, 96);  // pages of requests in flight
  static constexpr ImU32 free_pages = panel::rgba(44, 48, 58);
  static constexpr ImU32 ghost = panel::rgba(214, 64, 64);
  // Cache tiers below the pool: held there (stripe, tag), sunk there (an
  // evicted node whose KV was kept), loaded back from there.
  static constexpr ImU32 tier = panel::rgba(112, 150, 232);
  static constexpr ImU32 sunk = panel::rgba(70, 96, 170);
  static constexpr ImU32 loaded = panel::rgba(120, 230, 236);
  // Drafted decoding: the node a verified draft was read from.
  static constexpr ImU32 drafted = panel::rgba(196, 236, 84);

  // Highlights (outlines and badges).
  static constexpr ImU32 matched = panel::rgba(255, 206, 84);
  static constexpr ImU32 inserted = panel::rgba(86, 214, 120);
  static constexpr ImU32 flash = panel::rgba(255, 255, 255);
  static constexpr ImU32 selected = panel::rgba(240, 244, 255);
  static constexpr ImU32 located = panel::rgba(236, 92, 170);

  // Canvas.
  static constexpr ImU32 canvas = panel::rgba(22, 25, 32);
  static constexpr ImU32 grid = panel::rgba(40, 45, 56);
  static constexpr ImU32 edge = panel::rgba(96, 106, 126);
  static constexpr ImU32 text = panel::rgba(236, 239, 244);
  static constexpr ImU32 text_dim = panel::rgba(170, 178, 194);
  static constexpr ImU32 border = panel::rgba(255, 255, 255, 40);
};

// Linear blend of two colours (t in 0..1), alpha included.
ImU32 mix(ImU32 a, ImU32 b, float t);
ImU32 with_alpha(ImU32 c, float alpha);  // alpha scaled by `alpha` (0..1)

// Dark style with the panel's accents. Safe to call once per context.
void apply_panel_style(ImGuiStyle& style);

// Loads DejaVu Sans (Latin, arrows, punctuation) at `size_px` when present,
// else ImGui's default font; returns the font to use. Before the atlas is
// built (before the first NewFrame or GetTexDataAs*).
ImFont* load_panel_font(ImGuiIO& io, float size_px);

}  // namespace rc::ui::panel
