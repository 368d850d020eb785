// Plain-text views of a cache snapshot, for terminals and logs (the GUI
// panel draws the same snapshot graphically).
#pragma once

#include <functional>
#include <span>
#include <string>
#include <string_view>

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

// `text` (a span as the tokenizer spells it) with the chat templates'
// control tokens drawn as short marks a reader follows, for node boxes,
// recordings and exports: "<s>" and "<|begin_of_text|>" read "BOS", "</s>"
// "EOS", an end of turn ("<|end|>", "<|eot_id|>", "<|im_end|>",
// "<|endoftext|>") "⏎ end", a role marker "<|user|>" "▸user", and the role
// openers "<|im_start|>" and "<|start_header_id|>" "▸" (their role follows
// as text; "<|end_header_id|>" goes). Other text is unchanged. Pure.
std::string readable_control_tokens(std::string_view text);

}  // namespace rc
