// "Why did this request miss" drawn into the current ImGui window: one
// widget for a recording's Request tab and for a live chat message's
// prompt in the Node tab (miss-view.cpp), so both say the same things.
#pragma once

#include <string>

#include "panel/recording-source.h"

namespace rc::ui::panel {

// `against` names the tree the prompt was compared with, as it reads after
// "Against ": "the tree before event 120", "the cache now". Says the
// divergence token, the text before it, the prompt's and the cache's text
// there, whether the path realigned and what would have been reused; a
// full hit plainly; m.error when !m.ok.
void draw_miss_view(const MissView& m, const std::string& against);

}  // namespace rc::ui::panel
