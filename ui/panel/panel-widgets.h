// Small layout helpers shared by the panel's ImGui code (panel-frame.cpp,
// panel-tabs.cpp): wrapping rows of controls so nothing runs past the
// panel's right edge, widths that shrink with the panel, and the colour of
// each event kind. GUI thread, inside an ImGui window.
#pragma once

#include <imgui.h>

#include "radixchat/cache-events.h"

namespace rc::ui::panel {

// Continues the line if an item `w` pixels wide still fits, else wraps: the
// panel may be a narrow column beside the chat.
void flow(float w, float spacing = -1);
// Width of a button / checkbox with this label at the current font.
float button_w(const char* label);
float check_w(const char* label);
// `want` pixels, or less when the row has less room (never under `least`).
float fit_width(float want, float least = 60);
// The same for a widget whose `label` is drawn to its right (sliders,
// combos): the widget and its label together fit the row.
float fit_width(float want, const char* label, float least = 60);
// Colour of an event kind in the log and its filters.
ImVec4 kind_colour(CacheEventKind k);

}  // namespace rc::ui::panel
