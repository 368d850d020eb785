// A time-series plot for the panel's Plots tab, drawn with ImGui's draw
// list: a y axis with ticks in the series' unit, an x axis in seconds
// before now, a grid, the line, vertical markers where the cache policy or
// pool changed (labelled), and the value under the mouse in a tooltip.
// ImGui::PlotLines has neither axes nor units, and a teacher comparing
// radix with off needs both.
//
// GUI thread, inside an ImGui window; the plot is one item of `size`.
#pragma once

#include <imgui.h>

#include <string>
#include <vector>

#include "panel/stats-history.h"

namespace rc::ui::panel {

struct PlotSpec {
  const char* title = "";  // "hit rate"
  const char* unit = "";   // "%", "tok", "ms": after each tick label
  float scale = 1;         // value shown = stored value * scale
  float fixed_top = 0;     // > 0: the y axis always ends here (shown units)
  const char* value = "";  // printf of the latest value (shown units), e.g. "%.0f%%"
};

// Draws one plot. `t` and `y` are parallel (seconds, stored values).
void draw_time_plot(const char* id, const std::vector<double>& t, const std::vector<float>& y,
                    const std::vector<StatsHistory::Marker>& markers, const PlotSpec& spec,
                    ImVec2 size, double now);

// The smallest of 1, 2, 5 x 10^k at or above `v` (> 0); 1 for v <= 0.
float nice_ceiling(float v);

}  // namespace rc::ui::panel
