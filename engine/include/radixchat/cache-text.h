// Plain-text views of a cache snapshot, for terminals and logs (the GUI
// panel draws the same snapshot graphically).
#pragma once

#include <functional>
#include <span>
#include <string>

#include "radixchat/cache.h"

namespace rc {

struct TreeTextOptions {
  // Renders a node's span; default: ids joined by spaces.
  std::function<std::string(std::span<const Token>)> format_tokens;
  size_t max_span_chars = 48;  // longer spans are cut in the middle with "…"
  bool show_pages = true;
};

// One line per node, indented with box-drawing guides, children ordered by
// their first token. Pure function of the snapshot; any thread.
std::string render_cache_tree(const CacheSnapshot& snapshot, const TreeTextOptions& options = {});

}  // namespace rc
