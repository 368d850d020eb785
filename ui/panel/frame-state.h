// The cache panel's frame around whatever tree it shows: the text scale,
// how the height is shared between the tree and the tabs, which tab is
// open, and where the latest frame drew what a user must reach (tests
// assert those are inside the panel, whole).
//
// GUI thread only. Owned by CachePanelState; the same for every tree.
#pragma once

#include <imgui.h>

#include <string>
#include <vector>

#include "panel/panel-fit.h"

namespace rc::ui::panel {

struct FrameState {
  // Text scale for projectors: every ImGui text, the tree's labels and its
  // boxes grow together. The GL host rebuilds the font atlas at
  // kBaseFontPx * text_scale and records that in font_atlas_scale; without
  // it (tests) ImGui scales the base atlas.
  static constexpr float kBaseFontPx = 15.0f;
  static constexpr float kMinTextScale = 0.75f, kMaxTextScale = 2.5f, kTextScaleStep = 1.15f;
  float text_scale = 1.0f;
  float font_atlas_scale = 1.0f;

  // Share of the panel's height below the tree (the tabs); the bar between
  // them drags it.
  float bottom_frac = 0.35f;
  float events_frac = 0.5f;  // the Events tab's share: a log needs lines
  float bottom_share() const { return current_tab == "Events" ? events_frac : bottom_frac; }
  // The tabs' share once the user has dragged the bar (0: not yet): it
  // holds for every tab and tree, as long as the tree keeps a row of boxes
  // and the tabs their strip. The app saves it across launches.
  float user_split = 0;
  static constexpr float kSplitHandlePx = 7.0f;
  // Lines of text a tab keeps below its strip whenever the tree can spare
  // them (a list, a log, a node's text: docs/architecture.md section 16).
  static constexpr int kTabLines = 5;
  // The tabs' height out of `room` pixels: room * the share, within what
  // each side cannot do without. The tree keeps `tree_least` whatever the
  // share; the tabs `tabs_least` while that leaves the tree its least. Pure.
  float tabs_height(float room, float tree_least, float tabs_least) const;

  // Measured in the latest frame for tests: the height of the open tab's
  // content below its strip, and the lines of text its scrolling region
  // (the Events log, the Demos list, the Node tab's text) shows at once.
  float tab_body_h = 0;
  int region_lines = 0;

  // Tabs by name: the one shown in the latest frame, and one to switch to
  // in the next (tests, and controls that open a tab).
  std::string current_tab;
  std::string select_tab;
  struct ItemBox {
    std::string label;
    ImVec2 min{0, 0}, max{0, 0};
    float label_w = 0;  // the label's text width: a tab narrower than it is cut
    bool visible = false;
  };
  std::vector<ItemBox> tab_boxes;        // the tabs shown
  std::vector<std::string> hidden_tabs;  // the rest, under "More"
  ItemBox next_step_box;
  ItemBox split_box;    // the bar between the tree and the tabs
  ItemBox caption_box;  // the caption banner over the tree (visible: drawn)
  // Set by the header: the panel is too narrow for the actions' full names.
  bool narrow_toolbar = false;

  // Whether the latest frame fit the display (panel-fit.h): every window
  // inside it and every item inside its window.
  PanelFit last_fit;
  double last_draw_ms = 0;  // CPU time of the latest draw() (UI build)
};

}  // namespace rc::ui::panel
