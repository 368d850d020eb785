#include "recording/tree-svg.h"

#include <algorithm>
#include <cstdio>
#include <unordered_map>

#include "radixchat/cache-text.h"

namespace rc::recording {

namespace {

constexpr double kColumn = 200, kRow = 26, kBoxW = 180, kBoxH = 20, kMargin = 16;

// Invalid UTF-8 (a label cut inside a byte-fallback character) becomes
// '?', so the document always parses.
std::string valid_utf8(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    const size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    bool ok = n > 0 && i + n <= s.size();
    for (size_t k = 1; ok && k < n; ++k) ok = (static_cast<unsigned char>(s[i + k]) & 0xC0) == 0x80;
    if (ok) {
      out.append(s, i, n);
      i += n;
    } else {
      out += '?';
      ++i;
    }
  }
  return out;
}

std::string xml_escape(const std::string& raw) {
  const std::string s = valid_utf8(raw);
  std::string out;
  for (unsigned char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        // XML 1.0 forbids most control characters even escaped.
        if (c < 0x20)
          out += ' ';
        else
          out += char(c);
    }
  }
  return out;
}

// Cuts at a character boundary so the label stays valid UTF-8.
std::string clip(const std::string& s, size_t n) {
  if (s.size() <= n) return s;
  size_t cut = n;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
  return s.substr(0, cut) + "...";
}

// What a node's box says: its text with nothing invisible. Line breaks and
// tabs always get a glyph; spaces only when they are all there is.
std::string visible_label(const CacheNodeInfo& n,
                          const std::function<std::string(const std::vector<int32_t>&)>& text,
                          int32_t bos) {
  if (!text) return std::to_string(n.tokens.size()) + " tokens";
  std::string out;
  std::vector<int32_t> rest = n.tokens;
  if (bos >= 0 && !rest.empty() && rest.front() == bos) {
    out = readable_control_tokens("<s>");
    rest.erase(rest.begin());
  }
  const std::string t = rest.empty() ? std::string() : readable_control_tokens(text(rest));
  const bool blank = t.find_first_not_of(" \t\r\n") == std::string::npos;
  std::string shown;
  for (char c : t) {
    if (c == '\n')
      shown += "\u21B5";
    else if (c == '\t')
      shown += "\u21E5";
    else if (c == ' ' && blank)
      shown += "\u2420";
    else if (c != '\r')
      shown += c;
  }
  if (shown.empty() && !rest.empty()) shown = "\u27E8special\u27E9";
  if (!out.empty() && !shown.empty()) out += ' ';
  return out + shown;
}

struct Layout {
  std::unordered_map<NodeId, std::vector<NodeId>> kids;
  std::unordered_map<NodeId, const CacheNodeInfo*> node;
  std::unordered_map<NodeId, std::pair<double, double>> pos;  // column, row
  std::vector<NodeId> order;                                  // drawn, preorder
  double rows = 0;
  int depth_max = 0;
  size_t budget = 0;

  double place(NodeId id, int depth) {
    order.push_back(id);
    depth_max = std::max(depth_max, depth);
    double first = -1, last = -1;
    for (NodeId c : kids[id]) {
      if (order.size() >= budget) break;
      const double r = place(c, depth + 1);
      if (first < 0) first = r;
      last = r;
    }
    const double row = first < 0 ? rows++ : (first + last) / 2;
    pos[id] = {double(depth), row};
    return row;
  }
};

}  // namespace

std::string tree_svg(const CacheSnapshot& tree,
                     const std::function<std::string(const std::vector<int32_t>&)>& text,
                     const SvgOptions& o, size_t* drawn) {
  Layout l;
  l.budget = std::max<size_t>(1, o.max_nodes);
  for (const CacheNodeInfo& n : tree.nodes) {
    l.node[n.id] = &n;
    if (n.id != kRootNode) l.kids[n.parent].push_back(n.id);
  }
  if (l.node.count(kRootNode)) l.place(kRootNode, 0);
  const double w = kMargin * 2 + l.depth_max * kColumn + kBoxW;
  const double h = kMargin * 2 + std::max(1.0, l.rows) * kRow + 24;
  std::string out;
  char buf[512];
  std::snprintf(
      buf, sizeof buf,
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" "
      "width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" font-family=\"monospace\" "
      "font-size=\"11\">\n<rect width=\"100%%\" height=\"100%%\" fill=\"#ffffff\"/>\n",
      w, h, w, h);
  out += buf;
  const size_t left_out = tree.nodes.size() - l.order.size();
  std::string title = o.title.empty() ? "KV cache tree" : o.title;
  title += ": " + std::to_string(tree.nodes.size() - 1) + " nodes";
  if (left_out) title += " (" + std::to_string(left_out) + " not drawn)";
  out += "<text x=\"" + std::to_string(int(kMargin)) + "\" y=\"14\" font-size=\"12\">" +
         xml_escape(title) + "</text>\n";
  auto x_of = [&](NodeId id) { return kMargin + l.pos[id].first * kColumn; };
  auto y_of = [&](NodeId id) { return kMargin + 24 + l.pos[id].second * kRow; };
  out += "<g stroke=\"#888888\" fill=\"none\">\n";
  for (NodeId id : l.order) {
    if (id == kRootNode || !l.pos.count(l.node[id]->parent)) continue;
    const NodeId p = l.node[id]->parent;
    const double x0 = x_of(p) + kBoxW, y0 = y_of(p) + kBoxH / 2;
    const double x1 = x_of(id), y1 = y_of(id) + kBoxH / 2;
    std::snprintf(buf, sizeof buf,
                  "<path class=\"edge\" d=\"M%.1f %.1f C%.1f %.1f %.1f %.1f %.1f %.1f\"/>\n", x0,
                  y0, (x0 + x1) / 2, y0, (x0 + x1) / 2, y1, x1, y1);
    out += buf;
  }
  out += "</g>\n";
  for (NodeId id : l.order) {
    const CacheNodeInfo& n = *l.node[id];
    const char* fill = n.lock_ref ? "#ffd9a8" : n.pin_ref ? "#cfe3ff" : "#e8f3e8";
    std::string label =
        id == kRootNode ? std::string("root") : clip(visible_label(n, text, o.bos), o.label_chars);
    const auto run = o.blocks.find(id);
    if (run != o.blocks.end()) label = std::to_string(run->second) + " blocks: " + label;
    std::snprintf(buf, sizeof buf,
                  "<g class=\"node\" data-id=\"%u\" data-tokens=\"%zu\" data-hits=\"%llu\">"
                  "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.0f\" height=\"%.0f\" rx=\"4\" fill=\"%s\" "
                  "stroke=\"#556655\"/><text x=\"%.1f\" y=\"%.1f\">",
                  id, n.tokens.size(), (unsigned long long)n.hits, x_of(id), y_of(id), kBoxW, kBoxH,
                  fill, x_of(id) + 4, y_of(id) + 14);
    out += buf;
    out += xml_escape(label) + "</text>";
    if (id != kRootNode) {
      std::snprintf(buf, sizeof buf,
                    "<text class=\"count\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" "
                    "fill=\"#556655\">%zu</text>",
                    x_of(id) + kBoxW - 4, y_of(id) + 14, n.tokens.size());
      out += buf;
    }
    out += "<title>" +
           (run != o.blocks.end() ? std::to_string(run->second) + " blocks, " : std::string()) +
           std::to_string(n.tokens.size()) + " tokens, " + std::to_string(n.hits) + " hits, lock " +
           std::to_string(n.lock_ref) + "</title></g>\n";
  }
  out += "</svg>\n";
  if (drawn) *drawn = l.order.size();
  return out;
}

}  // namespace rc::recording
