#include "radixchat/cache-text.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <vector>

namespace rc {
namespace {

std::string default_format(std::span<const Token> tokens) {
  std::string s;
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (i) s += ' ';
    s += std::to_string(tokens[i]);
  }
  return s;
}

// Cut in the middle, counting UTF-8 code points so a multi-byte character is
// never split.
std::string shorten(const std::string& s, size_t max_chars) {
  std::vector<size_t> starts;
  for (size_t i = 0; i < s.size(); ++i)
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80) starts.push_back(i);
  if (starts.size() <= max_chars || max_chars < 5) return s;
  size_t head = (max_chars - 1) / 2, tail = max_chars - 1 - head;
  return s.substr(0, starts[head]) + "…" + s.substr(starts[starts.size() - tail]);
}

std::string page_range(const std::vector<PageId>& pages) {
  if (pages.empty()) return "";
  bool contiguous = true;
  for (size_t i = 1; i < pages.size(); ++i) contiguous &= pages[i] == pages[i - 1] + 1;
  if (pages.size() == 1) return "page " + std::to_string(pages[0]);
  if (contiguous)
    return "pages " + std::to_string(pages.front()) + "-" + std::to_string(pages.back());
  return "pages " + std::to_string(pages.front()) + ",…," + std::to_string(pages.back()) + " (" +
         std::to_string(pages.size()) + ")";
}

}  // namespace

std::string readable_control_tokens(std::string_view text) {
  static constexpr std::pair<std::string_view, std::string_view> kMarks[] = {
      {"<s>", "BOS"},
      {"<|begin_of_text|>", "BOS"},
      {"</s>", "EOS"},
      {"<|end|>", "\u23CE end"},
      {"<|eot_id|>", "\u23CE end"},
      {"<|im_end|>", "\u23CE end"},
      {"<|endoftext|>", "\u23CE end"},
      {"<|im_start|>", "\u25B8"},
      {"<|start_header_id|>", "\u25B8"},
      {"<|end_header_id|>", ""},
  };
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    if (text[i] != '<') {
      out += text[i++];
      continue;
    }
    bool done = false;
    for (const auto& [from, to] : kMarks) {
      if (text.substr(i, from.size()) == from) {
        out += to;
        i += from.size();
        done = true;
        break;
      }
    }
    if (done) continue;
    // Any other "<|name|>" of letters and underscores is a role marker.
    if (text.substr(i, 2) == "<|") {
      const size_t close = text.find("|>", i + 2);
      const std::string_view name =
          close == std::string_view::npos ? std::string_view() : text.substr(i + 2, close - i - 2);
      const bool word = !name.empty() && name.size() <= 24 &&
                        std::all_of(name.begin(), name.end(),
                                    [](char c) { return std::isalpha(uint8_t(c)) || c == '_'; });
      if (word) {
        out += "\u25B8";
        out += name;
        i = close + 2;
        continue;
      }
    }
    out += text[i++];
  }
  return out;
}

std::string render_cache_tree(const CacheSnapshot& snap, const TreeTextOptions& opt) {
  auto fmt = opt.format_tokens ? opt.format_tokens : default_format;
  std::map<NodeId, const CacheNodeInfo*> by_id;
  std::map<NodeId, std::vector<const CacheNodeInfo*>> kids;
  for (const CacheNodeInfo& n : snap.nodes) by_id[n.id] = &n;
  std::vector<const CacheNodeInfo*> orphans;  // hash blocks whose parent was evicted
  for (const CacheNodeInfo& n : snap.nodes) {
    if (n.id == kRootNode) continue;
    if (by_id.count(n.parent))
      kids[n.parent].push_back(&n);
    else
      orphans.push_back(&n);
  }
  for (auto& [id, v] : kids)
    std::sort(v.begin(), v.end(), [](auto* a, auto* b) { return a->tokens < b->tokens; });

  std::string out = "(root)  " + std::to_string(snap.stats.nodes) + " nodes, " +
                    std::to_string(snap.stats.cached_tokens) + " tokens cached\n";
  struct Item {
    const CacheNodeInfo* node;
    std::string prefix;
    bool last;
  };
  std::vector<Item> stack;
  auto push_children = [&](NodeId id, const std::string& prefix) {
    auto it = kids.find(id);
    if (it == kids.end()) return;
    for (size_t i = it->second.size(); i-- > 0;)
      stack.push_back({it->second[i], prefix, i + 1 == it->second.size()});
  };
  push_children(kRootNode, "");
  while (!stack.empty()) {
    Item item = stack.back();
    stack.pop_back();
    const CacheNodeInfo& n = *item.node;
    out += item.prefix + (item.last ? "└─ " : "├─ ");
    out += '"';  // appended piecewise: GCC 12 warns falsely on "\"" + string
    out += shorten(fmt(n.tokens), opt.max_span_chars);
    out += '"';
    out += "  [" + std::to_string(n.tokens.size()) + " tok";
    if (opt.show_pages && !n.pages.empty()) out += ", " + page_range(n.pages);
    out += ", hits " + std::to_string(n.hits) + ", t" + std::to_string(n.last_access);
    if (n.lock_ref) out += ", locked x" + std::to_string(n.lock_ref);
    if (n.pin_ref) out += ", pinned";
    out += "]\n";
    push_children(n.id, item.prefix + (item.last ? "   " : "│  "));
  }
  for (const CacheNodeInfo* n : orphans)
    out += "(orphan) \"" + shorten(fmt(n->tokens), opt.max_span_chars) + "\"\n";
  return out;
}

}  // namespace rc
