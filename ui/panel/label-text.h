// Text of the tree view's labels and tooltips: ellipsised spans, grouped
// digits, page ranges. Pure functions; GUI thread (they use ImGui fonts).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <imgui.h>

#include "radixchat/cache-events.h"

namespace rc::ui::panel {

// Shortens `s` to at most `max_chars` code points with an ellipsis, and
// replaces line breaks and tabs so the text fits one line.
std::string one_line(const std::string& s, size_t max_chars);
// Cuts `text` (one line already) to fit `width` pixels at `size` with "…".
std::string fit_text(ImFont* font, float size, const std::string& text, float width);
// `text` on one line (one_line) with at most `keep` code points of its start
// and of its end, "…" between them when more was left out.
std::string line_ends(const std::string& text, size_t keep);
// fit_text, but a text too wide keeps its start and its end with "…"
// between them (a long node reads "You are a helpful … Assistant:").
std::string fit_text_middle(ImFont* font, float size, const std::string& text, float width);
// `text` cut with "…" to what fills at most `lines` lines of `per_line`
// code points, a line break ending a line early (a tooltip's quote).
std::string clip_lines(const std::string& text, size_t per_line, size_t lines);
// 1234567 -> "1,234,567".
std::string thousands(int64_t v);
// "page 7", "16 pages (32-47)" or "3 pages (4, ..., 90)".
std::string page_span(const std::vector<PageId>& pages);
// "1 node", "2 nodes", "1,024 tokens": `n` with digit groups and the noun
// in the singular for exactly one.
std::string plural(int64_t n, const char* singular, const char* plural_form = nullptr);
// Positions of a node's span on its root path, counted from 1 and
// inclusive: `depth` tokens come before it and it holds `n`. "tokens 2-35"
// for 34 tokens after one; "token 7" for one; "no tokens" for none.
std::string token_range(int64_t depth, int64_t n);
// A draft source's mark: "drafted 15 · kept 12" (tokens drafted from a node
// and accepted, tree-model.h).
std::string draft_text(uint64_t drafted, uint64_t kept);

}  // namespace rc::ui::panel
