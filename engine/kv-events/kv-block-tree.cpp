// BlockTree (radixchat/kv-block-tree.h): the remote cache rebuilt from its
// events. Blocks live in one hash map keyed by rank and hash; children,
// roots and depths are derived on demand, since the text view and the
// statistics are read far less often than events arrive.
#include <algorithm>
#include <map>

#include "radixchat/kv-block-tree.h"

namespace rc::kv_events {

std::string BlockTree::key(int rank, const BlockHash& hash) {
  return std::to_string(rank) + ":" + hash;
}

const Block* BlockTree::find(int rank, const BlockHash& hash) const {
  auto it = blocks_.find(key(rank, hash));
  return it == blocks_.end() ? nullptr : &it->second;
}

void BlockTree::apply(const Batch& batch) {
  counts_.unknown_events += static_cast<uint64_t>(batch.unknown_events);
  for (const Event& ev : batch.events) {
    if (ev.kind == EventKind::cleared) {
      ++counts_.cleared_events;
      std::erase_if(blocks_, [&](const auto& kv) { return kv.second.rank == batch.rank; });
      continue;
    }
    if (ev.kind == EventKind::removed) {
      ++counts_.removed_events;
      for (const BlockHash& h : ev.block_hashes)
        if (blocks_.erase(key(batch.rank, h)) == 0) ++counts_.removed_unknown_blocks;
      continue;
    }
    ++counts_.stored_events;
    const size_t n = ev.block_hashes.size();
    // Tokens per block: as sent, or an even split when the server left it out.
    size_t bs = static_cast<size_t>(ev.block_size);
    if (bs == 0 && n > 0) bs = ev.token_ids.size() / n;
    std::optional<BlockHash> parent = ev.parent;
    for (size_t i = 0; i < n; ++i) {
      Block b;
      b.rank = batch.rank;
      b.hash = ev.block_hashes[i];
      b.parent = parent;
      const size_t lo = std::min(i * bs, ev.token_ids.size());
      const size_t hi = (i + 1 == n) ? ev.token_ids.size() : std::min(lo + bs, ev.token_ids.size());
      b.token_ids.assign(ev.token_ids.begin() + static_cast<ptrdiff_t>(lo),
                         ev.token_ids.begin() + static_cast<ptrdiff_t>(hi));
      b.lora_id = ev.lora_id;
      b.medium = ev.medium;
      parent = b.hash;
      blocks_[key(b.rank, b.hash)] = std::move(b);
    }
  }
}

bool BlockTree::has_unknown_parent(const Block& b) const {
  return b.parent && !blocks_.count(key(b.rank, *b.parent));
}

std::vector<std::pair<const Block*, int>> BlockTree::walk() const {
  // Children by parent key, in (rank, hash) order so output is stable.
  std::map<std::string, std::vector<const Block*>> children;
  std::vector<const Block*> roots;
  for (const auto& [k, b] : blocks_) {
    if (b.parent && blocks_.count(key(b.rank, *b.parent)))
      children[key(b.rank, *b.parent)].push_back(&b);
    else
      roots.push_back(&b);
  }
  auto order = [](const Block* a, const Block* b) {
    return a->rank != b->rank ? a->rank < b->rank : a->hash < b->hash;
  };
  std::sort(roots.begin(), roots.end(), [&](const Block* a, const Block* b) {
    if (a->rank != b->rank) return a->rank < b->rank;
    if (a->parent.has_value() != b->parent.has_value()) return !a->parent.has_value();
    return a->hash < b->hash;
  });
  for (auto& [k, v] : children) std::sort(v.begin(), v.end(), order);
  // Iterative depth-first walk: chains can be as long as a context (page
  // size 1), too deep for recursion. A cycle (a forged parent link) cannot
  // be reached from a root, so such blocks are simply not walked.
  std::vector<std::pair<const Block*, int>> out;
  std::vector<std::pair<const Block*, int>> stack;
  for (auto it = roots.rbegin(); it != roots.rend(); ++it) stack.emplace_back(*it, 1);
  while (!stack.empty()) {
    auto [b, depth] = stack.back();
    stack.pop_back();
    out.emplace_back(b, depth);
    auto c = children.find(key(b->rank, b->hash));
    if (c == children.end()) continue;
    for (auto it = c->second.rbegin(); it != c->second.rend(); ++it)
      stack.emplace_back(*it, depth + 1);
  }
  return out;
}

TreeStats BlockTree::stats() const {
  TreeStats s = counts_;
  s.blocks = blocks_.size();
  s.roots = 0;
  s.max_depth_blocks = 0;
  bool under_unknown = false;  // the current root's subtree hangs from an unknown parent
  for (const auto& [b, depth] : walk()) {
    if (depth == 1) {
      ++s.roots;
      under_unknown = b->parent.has_value();
      if (under_unknown) ++s.unknown_parent_roots;
    }
    if (under_unknown) ++s.unknown_parent_blocks;
    s.max_depth_blocks = std::max<uint64_t>(s.max_depth_blocks, static_cast<uint64_t>(depth));
  }
  return s;
}

namespace {

// One line's token text, quoted, control characters escaped, cut at `limit`
// bytes (on a UTF-8 boundary) so a long span stays one readable line.
std::string quoted(const std::string& text, size_t limit) {
  std::string out = " \"";
  size_t i = 0;
  for (; i < text.size() && out.size() < limit + 2; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '\n') {
      out += "\\n";
    } else if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      out += ' ';
    } else {
      out += static_cast<char>(c);
    }
  }
  while (i < text.size() && (static_cast<unsigned char>(text[i]) & 0xC0) == 0x80) out += text[i++];
  out += '"';
  if (i < text.size()) out += " ...";
  return out;
}

}  // namespace

std::string BlockTree::to_text(size_t max_tokens, const TokenText& text) const {
  const auto nodes = walk();
  std::map<std::string, int> child_count;
  for (const auto& [b, d] : nodes)
    if (d > 1 && b->parent) ++child_count[key(b->rank, *b->parent)];
  // Per rank, the unknown-parent group's counts, for its heading line.
  std::map<int, std::pair<uint64_t, uint64_t>> unknown;  // rank -> (roots, blocks)
  bool under_unknown = false;
  for (const auto& [b, d] : nodes) {
    if (d == 1) under_unknown = b->parent.has_value();
    if (!under_unknown) continue;
    if (d == 1) ++unknown[b->rank].first;
    ++unknown[b->rank].second;
  }
  std::map<std::string, int> line_level;  // last block of a line -> its indent
  std::string out;
  int last_rank = -1;
  int base = 1;  // indent of a root line: one deeper inside the unknown-parent group
  for (size_t i = 0; i < nodes.size();) {
    const Block* first = nodes[i].first;
    const int depth = nodes[i].second;
    if (first->rank != last_rank) {
      out += "rank ";
      out += std::to_string(first->rank);
      out += '\n';
      last_rank = first->rank;
      base = 1;
    }
    if (depth == 1 && first->parent && base == 1) {
      const auto& [roots, blocks] = unknown[first->rank];
      out += "  (stored before you attached: " + std::to_string(blocks) + " blocks under " +
             std::to_string(roots) + " parents never seen)\n";
      base = 2;
    }
    // Fold the run: while this block has exactly one child, the next node in
    // the walk is that child.
    std::vector<int64_t> tokens = first->token_ids;
    size_t blocks = 1;
    size_t j = i;
    while (child_count[key(nodes[j].first->rank, nodes[j].first->hash)] == 1 &&
           j + 1 < nodes.size()) {
      ++j;
      ++blocks;
      tokens.insert(tokens.end(), nodes[j].first->token_ids.begin(),
                    nodes[j].first->token_ids.end());
    }
    // Indent by folded lines, not blocks: a folded run's children sit one
    // level below the run's line.
    int level = base;
    if (depth > 1 && first->parent) {
      auto p = line_level.find(key(first->rank, *first->parent));
      if (p != line_level.end()) level = p->second + 1;
    }
    line_level[key(nodes[j].first->rank, nodes[j].first->hash)] = level;
    out.append(2 * static_cast<size_t>(level), ' ');
    out += format_hash(first->hash);
    out += " blocks=";
    out += std::to_string(blocks);
    out += " tokens=";
    out += std::to_string(tokens.size());
    out += ':';
    if (text) {
      out += quoted(text(tokens), 4 * max_tokens);
    } else {
      for (size_t t = 0; t < tokens.size() && t < max_tokens; ++t) {
        out += ' ';
        out += std::to_string(tokens[t]);
      }
      if (tokens.size() > max_tokens) out += " ...";
    }
    out += "\n";
    i = j + 1;
  }
  return out;
}

}  // namespace rc::kv_events
