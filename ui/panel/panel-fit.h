// Does the panel fit its window? Measured from ImGui's own bookkeeping after
// a frame, so tests (and the GUI test at 1024x700) check geometry instead of
// screenshots: for every window drawn this frame (the panel, its child
// windows, tooltips and popups), the window must lie inside the display,
// and the items laid out in it must end inside it, unless it scrolls that
// way (a child with a scrollbar may hold more than it shows).
//
// Also the helpers that keep tooltips inside the window: text wraps at a
// width the display can hold, so ImGui's placement (which flips and clamps
// a tooltip to the display) always finds room. GUI thread, ImGui context.
#pragma once

#include <imgui.h>

#include <string>

namespace rc::ui::panel {

struct PanelFit {
  ImVec2 display{0, 0};
  // Largest right / bottom edge of any item in a window that does not
  // scroll that way, and of any window (screen coordinates).
  ImVec2 items_max{0, 0};
  ImVec2 windows_max{0, 0};
  int windows = 0;  // windows measured
  int tooltips = 0;
  // Empty when everything fits; else what does not, e.g.
  // "##cache-panel/##bottom: items end 42 px right of the window".
  std::string overflow;
  bool fits() const { return overflow.empty(); }
};

// After the frame's windows have ended (before or after Render).
PanelFit measure_panel_fit();

// Where a window of `size` at `pos` goes so it lies inside a display of
// `display` pixels less `pad` on each side; larger than that room, it
// starts at the room's top-left corner. Pure.
ImVec2 keep_inside(ImVec2 pos, ImVec2 size, ImVec2 display, ImVec2 pad);
// The largest a tooltip may be on `display`: the room keep_inside leaves.
ImVec2 tooltip_max_size(ImVec2 display, ImVec2 pad);

// Widest a tooltip's text may be so that the tooltip fits the display.
float tooltip_wrap_width();
// BeginTooltip + a wrap width that fits the display, at most
// tooltip_max_size and kept inside the display (keep_inside) whatever its
// text; pair with end_tooltip.
void begin_tooltip();
void end_tooltip();
// SetTooltip with wrapping (printf-style).
void tooltip(const char* fmt, ...) IM_FMTARGS(1);

}  // namespace rc::ui::panel
