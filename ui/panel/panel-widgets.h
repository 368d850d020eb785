// Small layout helpers shared by the panel's ImGui code (panel-frame.cpp,
// panel-tabs.cpp): wrapping rows of controls so nothing runs past the
// panel's right edge, widths that shrink with the panel, and the colour of
// each event kind. GUI thread, inside an ImGui window.
#pragma once

#include <imgui.h>

#include <string>

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
// For a widget with its label on the right: sets the next item's width so
// both fit the row and returns the label to pass. When even `least` pixels
// and the label do not fit, the label goes on a line of its own above and
// the returned label is hidden ("##label").
std::string fit_labelled(const char* label, float want, float least = 60);
// Text after flow(): wraps instead of running past the edge. `first_w`:
// room it needs to stay on the current line (default: its whole width).
void flow_text(const char* text, bool dim = false, float first_w = -1);
// Lines of text the current window shows at once (its inner height).
int window_lines();
// Colour of an event kind in the log and its filters.
ImVec4 kind_colour(CacheEventKind k);

}  // namespace rc::ui::panel
