#include "recording/replay-tree.h"

#include <algorithm>

namespace rc::recording {

void ReplayTree::reset(const CacheSnapshot& snap) {
  nodes_.clear();
  for (const CacheNodeInfo& n : snap.nodes) nodes_[n.id] = n;
  if (!nodes_.count(kRootNode)) {
    CacheNodeInfo root;
    root.id = kRootNode;
    nodes_[kRootNode] = root;
  }
  next_seq_ = snap.next_seq;
  tick_ = snap.tick;
  valid_ = true;
}

CacheNodeInfo* ReplayTree::find(NodeId id) {
  auto it = nodes_.find(id);
  return it == nodes_.end() ? nullptr : &it->second;
}

void ReplayTree::touch_to_root(NodeId id, uint64_t tick, bool count_hit) {
  // Bounded by the node count, so a parent cycle in bad input cannot hang.
  for (size_t steps = 0; steps <= nodes_.size(); ++steps) {
    CacheNodeInfo* n = find(id);
    if (!n) return;
    n->last_access = tick;
    if (count_hit) ++n->hits;
    if (id == kRootNode) return;
    id = n->parent;
  }
}

void ReplayTree::add_ref_to_root(NodeId id, bool pin, int delta) {
  for (size_t steps = 0; steps <= nodes_.size() && id != kRootNode; ++steps) {
    CacheNodeInfo* n = find(id);
    if (!n) return;
    uint32_t& ref = pin ? n->pin_ref : n->lock_ref;
    ref = static_cast<uint32_t>(int64_t(ref) + delta);
    id = n->parent;
  }
}

std::string ReplayTree::apply(const CacheEvent& e) {
  if (!valid_) return "no snapshot to start from";
  if (e.seq < next_seq_) return "old";
  if (e.seq > next_seq_)
    return "gap: expected seq " + std::to_string(next_seq_) + ", got " + std::to_string(e.seq);
  auto unknown = [&](NodeId id) {
    return "event " + std::to_string(e.seq) + " names unknown node " + std::to_string(id);
  };
  switch (e.kind) {
    case CacheEventKind::insert: {
      if (e.token_count > 0) {
        if (nodes_.count(e.node))
          return "event " + std::to_string(e.seq) + " inserts existing node";
        if (!find(e.parent)) return unknown(e.parent);
        if (e.tokens.size() != e.token_count) return "insert event without its tokens";
        CacheNodeInfo n;
        n.id = e.node;
        n.parent = e.parent;
        n.tokens = e.tokens;
        n.pages = e.pages;
        nodes_[e.node] = std::move(n);
      } else if (!find(e.node)) {
        return unknown(e.node);
      }
      touch_to_root(e.node, e.tick, false);
      break;
    }
    case CacheEventKind::split: {
      CacheNodeInfo* low = find(e.other);
      if (!low) return unknown(e.other);
      if (nodes_.count(e.node) || e.token_count >= low->tokens.size() ||
          e.page_count > low->pages.size())
        return "event " + std::to_string(e.seq) + " is an impossible split";
      CacheNodeInfo up;
      up.id = e.node;
      up.parent = low->parent;
      up.tokens.assign(low->tokens.begin(), low->tokens.begin() + e.token_count);
      up.pages.assign(low->pages.begin(), low->pages.begin() + e.page_count);
      up.lock_ref = low->lock_ref;
      up.pin_ref = low->pin_ref;
      up.hits = low->hits;
      up.last_access = e.tick;
      low->tokens.erase(low->tokens.begin(), low->tokens.begin() + e.token_count);
      low->pages.erase(low->pages.begin(), low->pages.begin() + e.page_count);
      low->parent = e.node;
      low->last_access = e.tick;
      nodes_[e.node] = std::move(up);
      break;
    }
    case CacheEventKind::merge: {
      CacheNodeInfo* child = find(e.node);
      CacheNodeInfo* gone = find(e.other);
      if (!child || !gone) return unknown(child ? e.other : e.node);
      child->tokens.insert(child->tokens.begin(), gone->tokens.begin(), gone->tokens.end());
      child->pages.insert(child->pages.begin(), gone->pages.begin(), gone->pages.end());
      child->hits = std::max(child->hits, gone->hits);
      child->parent = e.parent;
      nodes_.erase(e.other);
      break;
    }
    case CacheEventKind::match:
      if (!find(e.node)) return unknown(e.node);
      touch_to_root(e.node, e.tick, true);
      break;
    case CacheEventKind::lock:
    case CacheEventKind::unlock:
    case CacheEventKind::pin:
    case CacheEventKind::unpin: {
      if (!find(e.node)) return unknown(e.node);
      const bool pin = e.kind == CacheEventKind::pin || e.kind == CacheEventKind::unpin;
      const bool up = e.kind == CacheEventKind::lock || e.kind == CacheEventKind::pin;
      add_ref_to_root(e.node, pin, up ? 1 : -1);
      break;
    }
    case CacheEventKind::demote:
    case CacheEventKind::promote:  // tier notes: the node set does not change
      if (!find(e.node)) return unknown(e.node);
      break;
    case CacheEventKind::draft:  // a verified draft: names its source node, if any
      if (e.node != kNoNode && !find(e.node)) return unknown(e.node);
      break;
    case CacheEventKind::evict:
      if (e.node == kRootNode || !find(e.node)) return unknown(e.node);
      nodes_.erase(e.node);
      break;
    case CacheEventKind::reset: {
      CacheNodeInfo root = nodes_[kRootNode];
      nodes_.clear();
      root.last_access = e.tick;
      nodes_[kRootNode] = std::move(root);
      break;
    }
    default:
      return "event " + std::to_string(e.seq) + " has an unknown kind";
  }
  tick_ = std::max(tick_, e.tick);
  ++next_seq_;
  return {};
}

std::vector<CacheNodeInfo> ReplayTree::nodes() const {
  std::vector<CacheNodeInfo> out;
  out.reserve(nodes_.size());
  for (const auto& [id, n] : nodes_) out.push_back(n);
  std::sort(out.begin(), out.end(),
            [](const CacheNodeInfo& a, const CacheNodeInfo& b) { return a.id < b.id; });
  return out;
}

CacheSnapshot ReplayTree::to_snapshot(const CacheSnapshot& header) const {
  CacheSnapshot s;
  s.policy = header.policy;
  s.page_size = header.page_size;
  s.total_pages = header.total_pages;
  s.stats = header.stats;
  s.tick = tick_;
  s.next_seq = next_seq_;
  s.nodes = nodes();
  return s;
}

std::vector<Token> ReplayTree::path_tokens(NodeId id) const {
  std::vector<const CacheNodeInfo*> chain;
  for (size_t steps = 0; steps <= nodes_.size() && id != kRootNode; ++steps) {
    auto it = nodes_.find(id);
    if (it == nodes_.end()) return {};
    chain.push_back(&it->second);
    id = it->second.parent;
  }
  std::vector<Token> out;
  for (auto it = chain.rbegin(); it != chain.rend(); ++it)
    out.insert(out.end(), (*it)->tokens.begin(), (*it)->tokens.end());
  return out;
}

}  // namespace rc::recording
