// CacheBlockMapper (radixchat/kv-cache-blocks.h): the mirror of RadixChat's
// tree that turns cache events into KV events, one block per page.
#include <xxhash.h>

#include <cstring>
#include <deque>
#include <map>

#include "radixchat/kv-cache-blocks.h"

namespace rc::kv_events {
namespace {

// Stands in for the parent hash of a path's first block (vLLM hashes a
// NONE_HASH seed there for the same reason: a first block still chains).
constexpr uint64_t kRootSeed = 0x52616469784368ULL;  // "RadixCh"

uint64_t hash_value(const BlockHash& h) {
  uint64_t v = 0;
  for (size_t i = 1; i < h.size() && i < 9; ++i) v = (v << 8) | static_cast<unsigned char>(h[i]);
  return v;
}

BlockHash integer_hash(uint64_t v) {
  BlockHash h(9, 'i');
  for (int i = 0; i < 8; ++i) h[8 - i] = static_cast<char>((v >> (8 * i)) & 0xff);
  return h;
}

}  // namespace

BlockHash CacheBlockMapper::block_hash(const std::optional<BlockHash>& parent,
                                       std::span<const Token> tokens) {
  const uint64_t seed = parent ? hash_value(*parent) : kRootSeed;
  return integer_hash(XXH3_64bits_withSeed(tokens.data(), tokens.size_bytes(), seed));
}

std::optional<BlockHash> CacheBlockMapper::tail_hash(NodeId id) const {
  // A node without blocks of its own (the root) chains from its parent's.
  for (;;) {
    auto it = nodes_.find(id);
    if (it == nodes_.end()) return std::nullopt;
    if (!it->second.hashes.empty()) return it->second.hashes.back();
    id = it->second.parent;
  }
}

bool CacheBlockMapper::add_node(NodeId id, NodeId parent, const std::vector<Token>& tokens,
                                Event* stored) {
  const size_t ps = static_cast<size_t>(page_size_);
  if (!nodes_.count(parent) || nodes_.count(id) || tokens.size() % ps != 0) return false;
  Node n;
  n.parent = parent;
  n.tokens = tokens;
  std::optional<BlockHash> prev = tail_hash(parent);
  stored->kind = EventKind::stored;
  stored->parent = prev;
  stored->block_size = page_size_;
  stored->token_ids.assign(tokens.begin(), tokens.end());
  for (size_t at = 0; at < tokens.size(); at += ps) {
    prev = block_hash(prev, std::span<const Token>(tokens).subspan(at, ps));
    n.hashes.push_back(*prev);
  }
  stored->block_hashes = n.hashes;
  blocks_ += n.hashes.size();
  nodes_[id] = std::move(n);
  return true;
}

std::vector<Event> CacheBlockMapper::reset(const CacheSnapshot& snap) {
  page_size_ = snap.page_size > 0 ? snap.page_size : 1;
  nodes_.clear();
  blocks_ = 0;
  std::vector<Event> out(1);  // AllBlocksCleared
  out[0].kind = EventKind::cleared;
  nodes_[kRootNode] = Node{};
  // Parents first: ids do not give that order (a split's upper half gets a
  // new, higher id than the node below it).
  std::map<NodeId, std::vector<const CacheNodeInfo*>> children;
  for (const CacheNodeInfo& n : snap.nodes)
    if (n.id != kRootNode) children[n.parent].push_back(&n);
  std::deque<NodeId> todo{kRootNode};
  while (!todo.empty()) {
    const NodeId id = todo.front();
    todo.pop_front();
    auto c = children.find(id);
    if (c == children.end()) continue;
    for (const CacheNodeInfo* n : c->second) {
      Event ev;
      // A span that is not whole pages cannot be published as blocks; the
      // radix cache only inserts page-aligned keys, so this is not expected.
      if (!add_node(n->id, id, n->tokens, &ev)) continue;
      if (!ev.block_hashes.empty()) out.push_back(std::move(ev));
      todo.push_back(n->id);
    }
  }
  // Blocks not reachable from the root (a hash-policy block whose parent was
  // evicted first) are left out: their hash chain cannot be computed.
  return out;
}

bool CacheBlockMapper::apply(const CacheEvent& ev, std::vector<Event>& out) {
  const size_t ps = static_cast<size_t>(page_size_);
  switch (ev.kind) {
    case CacheEventKind::insert: {
      if (ev.token_count == 0) return nodes_.count(ev.node) > 0;
      if (ev.tokens.size() != ev.token_count) return false;
      Event stored;
      if (!add_node(ev.node, ev.parent, ev.tokens, &stored)) return false;
      out.push_back(std::move(stored));
      return true;
    }
    case CacheEventKind::split: {
      // `other` keeps its id and becomes the lower half under the new `node`.
      auto it = nodes_.find(ev.other);
      if (it == nodes_.end() || nodes_.count(ev.node) || ev.token_count % ps != 0 ||
          ev.token_count >= it->second.tokens.size())
        return false;
      Node& lower = it->second;
      Node upper;
      upper.parent = lower.parent;
      const size_t pages = ev.token_count / ps;
      upper.tokens.assign(lower.tokens.begin(), lower.tokens.begin() + ev.token_count);
      upper.hashes.assign(lower.hashes.begin(), lower.hashes.begin() + pages);
      lower.tokens.erase(lower.tokens.begin(), lower.tokens.begin() + ev.token_count);
      lower.hashes.erase(lower.hashes.begin(), lower.hashes.begin() + pages);
      lower.parent = ev.node;
      nodes_[ev.node] = std::move(upper);
      return true;
    }
    case CacheEventKind::merge: {
      // `node` (the child) absorbs `other` (its parent), which goes away.
      auto child = nodes_.find(ev.node);
      auto absorbed = nodes_.find(ev.other);
      if (child == nodes_.end() || absorbed == nodes_.end() || ev.other == kRootNode) return false;
      Node& c = child->second;
      Node& a = absorbed->second;
      c.tokens.insert(c.tokens.begin(), a.tokens.begin(), a.tokens.end());
      c.hashes.insert(c.hashes.begin(), a.hashes.begin(), a.hashes.end());
      c.parent = a.parent;
      nodes_.erase(absorbed);
      return true;
    }
    case CacheEventKind::evict: {
      auto it = nodes_.find(ev.node);
      if (it == nodes_.end() || ev.node == kRootNode) return false;
      if (!it->second.hashes.empty()) {
        Event removed;
        removed.kind = EventKind::removed;
        removed.block_hashes = std::move(it->second.hashes);
        blocks_ -= removed.block_hashes.size();
        out.push_back(std::move(removed));
      }
      nodes_.erase(it);
      return true;
    }
    case CacheEventKind::reset: {
      nodes_.clear();
      nodes_[kRootNode] = Node{};
      blocks_ = 0;
      Event cleared;
      cleared.kind = EventKind::cleared;
      out.push_back(std::move(cleared));
      return true;
    }
    default:  // match, lock, unlock, pin, unpin, demote, promote, draft: no block changes
      return true;
  }
}

}  // namespace rc::kv_events
