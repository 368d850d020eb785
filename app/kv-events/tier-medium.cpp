#include "tier-medium.h"

#include <algorithm>

namespace rc::kv_events {

std::string pool_medium(const ModelInfo& info) { return info.backend == "cuda" ? "GPU" : "CPU"; }

std::string tier_medium(const TierStats& tiers, const std::string& pool) {
  if (!tiers.enabled) return "";
  for (const TierInfo& t : tiers.tiers) {
    if (t.state != "up") continue;
    if (t.name == "host") return pool == "GPU" ? "CPU" : "HOST";
    if (t.name == "disk") return "DISK";
    if (t.name == "redis") return "REDIS";
  }
  return tiers.tiers.empty() ? "" : "DISK";
}

TieredBlockMapper::TieredBlockMapper(std::string pool_medium, std::string lower_medium)
    : pool_(std::move(pool_medium)), lower_(std::move(lower_medium)) {}

std::vector<Event> TieredBlockMapper::reset(const CacheSnapshot& snap) {
  nodes_.clear();
  demoted_.clear();
  for (const CacheNodeInfo& n : snap.nodes) nodes_[n.id] = Node{n.parent, n.tokens};
  nodes_[kRootNode].parent = kNoNode;
  std::vector<Event> out = mapper_.reset(snap);
  for (Event& e : out)
    if (e.kind != EventKind::cleared) e.medium = pool_;
  return out;
}

std::vector<Token> TieredBlockMapper::path_tokens(NodeId id) const {
  std::vector<const Node*> chain;
  for (auto it = nodes_.find(id); it != nodes_.end() && id != kRootNode;
       it = nodes_.find(id = it->second.parent))
    chain.push_back(&it->second);
  std::vector<Token> out;
  for (auto c = chain.rbegin(); c != chain.rend(); ++c)
    out.insert(out.end(), (*c)->tokens.begin(), (*c)->tokens.end());
  return out;
}

bool TieredBlockMapper::mirror(const CacheEvent& ev) {
  switch (ev.kind) {
    case CacheEventKind::insert:
      if (ev.token_count == 0) return true;
      nodes_[ev.node] = Node{ev.parent, ev.tokens};
      return true;
    case CacheEventKind::split: {
      auto low = nodes_.find(ev.other);
      if (low == nodes_.end() || ev.token_count > low->second.tokens.size()) return false;
      Node up{low->second.parent, {}};
      auto& t = low->second.tokens;
      up.tokens.assign(t.begin(), t.begin() + ev.token_count);
      t.erase(t.begin(), t.begin() + ev.token_count);
      low->second.parent = ev.node;
      nodes_[ev.node] = std::move(up);
      return true;
    }
    case CacheEventKind::merge: {
      auto child = nodes_.find(ev.node);
      auto gone = nodes_.find(ev.other);
      if (child == nodes_.end() || gone == nodes_.end()) return false;
      auto& t = child->second.tokens;
      t.insert(t.begin(), gone->second.tokens.begin(), gone->second.tokens.end());
      child->second.parent = gone->second.parent;
      nodes_.erase(gone);
      return true;
    }
    case CacheEventKind::evict:
      nodes_.erase(ev.node);
      demoted_.erase(ev.node);
      return true;
    case CacheEventKind::reset:
      nodes_.clear();
      demoted_.clear();
      nodes_[kRootNode] = Node{};
      return true;
    default:
      return true;
  }
}

bool TieredBlockMapper::apply(const CacheEvent& ev, std::vector<Event>& out) {
  if (ev.kind == CacheEventKind::demote) {
    if (!nodes_.count(ev.node)) return false;
    demoted_[ev.node] = ev.token_count;
    return true;
  }
  // What the tiers keep of an evicted leaf, read before the mirror drops it.
  Event sunk;
  if (ev.kind == CacheEventKind::evict && !lower_.empty()) {
    auto d = demoted_.find(ev.node);
    auto n = nodes_.find(ev.node);
    if (d != demoted_.end() && n != nodes_.end()) {
      const size_t ps = size_t(std::max(mapper_.page_size(), 1));
      const size_t held = std::min<size_t>(d->second, n->second.tokens.size()) / ps * ps;
      if (held > 0) {
        // The chain up to the leaf gives the parent hash its first block
        // hangs from, as CacheBlockMapper computed it when it was stored.
        const std::vector<Token> before = path_tokens(n->second.parent);
        std::optional<BlockHash> prev;
        for (size_t at = 0; at + ps <= before.size(); at += ps)
          prev = CacheBlockMapper::block_hash(prev, std::span<const Token>(before).subspan(at, ps));
        sunk.kind = EventKind::stored;
        sunk.parent = prev;
        sunk.block_size = int64_t(ps);
        sunk.medium = lower_;
        const std::vector<Token>& t = n->second.tokens;
        sunk.token_ids.assign(t.begin(), t.begin() + ptrdiff_t(held));
        for (size_t at = 0; at < held; at += ps) {
          prev = CacheBlockMapper::block_hash(prev, std::span<const Token>(t).subspan(at, ps));
          sunk.block_hashes.push_back(*prev);
        }
      }
    }
  }
  const size_t first = out.size();
  if (!mapper_.apply(ev, out) || !mirror(ev)) return false;
  for (size_t i = first; i < out.size(); ++i)
    if (out[i].kind != EventKind::cleared) out[i].medium = pool_;
  if (!sunk.block_hashes.empty()) out.push_back(std::move(sunk));
  return true;
}

}  // namespace rc::kv_events
