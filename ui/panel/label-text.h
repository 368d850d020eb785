// Text of the tree view's labels and tooltips: ellipsised spans, grouped
// digits, page ranges. Pure functions; GUI thread (they use ImGui fonts).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <imgui.h>

#include "radixchat/cache-events.h"

namespace rc::ui::panel {

// Cuts `text` (one line already) to fit `width` pixels at `size` with "…".
std::string fit_text(ImFont* font, float size, const std::string& text, float width);
// 1234567 -> "1,234,567".
std::string thousands(int64_t v);
// "page 7", "16 pages (32-47)" or "3 pages (4, ..., 90)".
std::string page_span(const std::vector<PageId>& pages);

}  // namespace rc::ui::panel
