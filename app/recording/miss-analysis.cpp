#include "recording/miss-analysis.h"

#include <algorithm>
#include <cstdlib>
#include <unordered_map>

namespace rc::recording {

namespace {

struct Index {
  std::unordered_map<NodeId, const CacheNodeInfo*> node;
  std::unordered_map<NodeId, std::vector<NodeId>> children;
  explicit Index(const CacheSnapshot& t) {
    for (const CacheNodeInfo& n : t.nodes) {
      node[n.id] = &n;
      if (n.id != kRootNode) children[n.parent].push_back(n.id);
    }
  }
  const std::vector<NodeId>& kids(NodeId id) const {
    static const std::vector<NodeId> none;
    auto it = children.find(id);
    return it == children.end() ? none : it->second;
  }
};

size_t common(const std::vector<Token>& a, size_t ai, const std::vector<int32_t>& b, size_t bi) {
  size_t n = 0;
  while (ai + n < a.size() && bi + n < b.size() && a[ai + n] == b[bi + n]) ++n;
  return n;
}

// Collects up to `limit` root-ward-anchored continuations below a point:
// `head` (the rest of a node cut mid-span) followed by each path down to a
// leaf, each cut at `max_len` tokens.
void collect(const Index& ix, NodeId id, std::vector<Token>& path, size_t max_len,
             std::vector<std::vector<Token>>& out, size_t limit) {
  if (out.size() >= limit) return;
  const auto& kids = ix.kids(id);
  if (kids.empty() || path.size() >= max_len) {
    out.push_back(path);
    return;
  }
  for (NodeId c : kids) {
    const size_t before = path.size();
    const auto& t = ix.node.at(c)->tokens;
    path.insert(path.end(), t.begin(), t.begin() + std::min(t.size(), max_len - before));
    collect(ix, c, path, max_len, out, limit);
    path.resize(before);
    if (out.size() >= limit) return;
  }
}

}  // namespace

MissExplanation explain_miss(const CacheSnapshot& tree, const std::vector<int32_t>& prompt,
                             const MissOptions& o) {
  MissExplanation x;
  x.prompt_tokens = int64_t(prompt.size());
  Index ix(tree);
  // Walk down as far as the prompt matches.
  NodeId at = kRootNode;
  size_t d = 0;
  std::vector<Token> head;   // rest of a node the walk stopped inside
  NodeId below = kRootNode;  // the node whose children continue the path
  for (;;) {
    NodeId best = kNoNode;
    size_t best_len = 0;
    for (NodeId c : ix.kids(at)) {
      const size_t len = common(ix.node.at(c)->tokens, 0, prompt, d);
      if (len > best_len) best = c, best_len = len;
    }
    if (best == kNoNode) {
      below = at;
      break;
    }
    const auto& t = ix.node.at(best)->tokens;
    d += best_len;
    if (best_len < t.size()) {
      head.assign(t.begin() + best_len, t.end());
      below = best;
      break;
    }
    at = best;
  }
  x.divergence = int64_t(d);
  x.would_reuse = x.divergence;
  if (d >= prompt.size()) return x;

  const size_t rest = prompt.size() - d;
  const size_t max_len = rest + size_t(o.window);
  std::vector<std::vector<Token>> paths;
  if (!head.empty()) {
    std::vector<Token> path = head;
    collect(ix, below, path, max_len, paths, size_t(o.max_paths));
  } else {
    std::vector<Token> path;
    collect(ix, below, path, max_len, paths, size_t(o.max_paths));
  }
  // Anchor positions of the prompt after d: the first i at which each
  // anchor-long window starts (a window within `window` tokens).
  const size_t k = std::min<size_t>(size_t(o.anchor), rest);
  auto key = [&](const auto& v, size_t at) {
    uint64_t h = 1469598103934665603ull;
    for (size_t t = 0; t < k; ++t) h = (h ^ uint32_t(v[at + t])) * 1099511628211ull;
    return h;
  };
  std::unordered_map<uint64_t, size_t> first_at;
  for (size_t i = 0; i <= size_t(o.window) && d + i + k <= prompt.size(); ++i)
    first_at.emplace(key(prompt, d + i), i);
  size_t best_run = 0, best_i = 0, best_j = 0;
  const std::vector<Token>* best_path = nullptr;
  for (const auto& p : paths) {
    if (!best_path) best_path = &p;
    for (size_t j = 0; j <= size_t(o.window) && j + k <= p.size(); ++j) {
      auto it = first_at.find(key(p, j));
      if (it == first_at.end()) continue;
      const size_t i = it->second;
      if (i == 0 && j == 0) continue;  // cannot be: d was the first difference
      const size_t run = common(p, j, prompt, d + i);
      if (run < k) continue;  // a hash collision
      // Only the template's closing agrees: the user's text did not.
      if (d + i + run == prompt.size() && run <= size_t(std::max(o.closing_tokens, 0))) continue;
      if (run > best_run || (run == best_run && i + j < best_i + best_j))
        best_run = run, best_i = i, best_j = j, best_path = &p;
      break;  // the earliest realignment on this path
    }
  }
  if (best_path)
    x.cached_next.assign(best_path->begin(),
                         best_path->begin() + std::min<size_t>(best_path->size(), 16));
  if (best_run == 0) return x;
  x.realigned = true;
  x.prompt_span.assign(prompt.begin() + d, prompt.begin() + d + best_i);
  x.cached_span.assign(best_path->begin(), best_path->begin() + best_j);
  x.run_after = int64_t(best_run);
  x.would_reuse = int64_t(d + best_i + best_run);
  return x;
}

int template_closing_tokens(const Engine& engine) {
  // Two user texts sharing no character at either end.
  auto a = engine.render_chat({{"user", "apple"}});
  auto b = engine.render_chat({{"user", "Why? 42"}});
  if (!a.ok() || !b.ok()) return 0;
  const std::vector<int32_t>&x = a.value(), &y = b.value();
  size_t n = 0;
  while (n < x.size() && n < y.size() && x[x.size() - 1 - n] == y[y.size() - 1 - n]) ++n;
  return int(n);
}

int recorded_closing_tokens(const std::map<std::string, std::string>& meta, int otherwise) {
  auto it = meta.find(kClosingTokensMeta);
  if (it == meta.end()) return otherwise;
  char* end = nullptr;
  const long n = std::strtol(it->second.c_str(), &end, 10);
  return end != it->second.c_str() && *end == '\0' && n >= 0 && n < 4096 ? int(n) : otherwise;
}

}  // namespace rc::recording
