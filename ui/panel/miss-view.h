// "Why did this request miss" drawn into the current ImGui window: one
// widget for a recording's Request tab and for a live chat message's
// prompt in the Node tab (miss-view.cpp), so both say the same things.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "panel/recording-access.h"

namespace rc::ui::panel {

// `against` names the tree the prompt was compared with, as it reads after
// "Against ": "the tree before event 120", "the cache now". Says the
// divergence token, the text before it, the prompt's and the cache's text
// there, whether the path realigned and what would have been reused; a
// full hit plainly; m.error when !m.ok.
void draw_miss_view(const MissView& m, const std::string& against);

// What the app knows of the request behind a located chat message (its
// reply's metrics): -1 when unknown.
struct LocatedRequest {
  int64_t prompt_tokens = -1;  // the request's prompt is the located tokens' first N
  int64_t cached_tokens = -1;  // of them served from the cache when it ran
};

// `tree` less what a request with this `prompt` added once its first
// `keep` tokens had matched: the node on the prompt's path that holds token
// `keep` is cut there (its part from `keep` on, and everything below it,
// leave). Nodes off that path stay. A live cache holds a finished request's
// own prompt, so against the tree as it is every request is a full hit;
// this is the tree it met, as far as the cache now can tell (later
// requests elsewhere stay in, and what it met but was evicted since is
// gone).
CacheSnapshot without_own_path(const CacheSnapshot& tree, const std::vector<Token>& prompt,
                               int64_t keep);

}  // namespace rc::ui::panel
