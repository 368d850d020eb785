// make_remote_feed (remote-feed.h): a BlockTree folded into radix nodes.
#include "panel/remote-feed.h"

#include <map>
#include <set>

#include "radixchat/vocabulary.h"

namespace rc::ui::panel {
namespace {

class RemoteFeed final : public CacheFeed {
 public:
  RemoteFeed(std::unique_ptr<RemoteBlockSource> s, std::shared_ptr<const Vocabulary> v)
      : src_(std::move(s)), vocab_(std::move(v)) {}

  CacheSnapshot snapshot() override {
    seen_ = fingerprint();
    return fold();
  }

  // The remote stream is block events, not the node events the panel's
  // model replays: any change is delivered as a fresh snapshot of the folded
  // tree (ids are stable, so the drawing does not jump).
  std::vector<CacheEvent> drain(bool* overflowed) override {
    src_->poll();
    if (fingerprint() != seen_) *overflowed = true;
    return {};
  }

  CacheStats cache_stats() override {
    CacheStats s;
    const auto t = src_->tree().stats();
    s.total_pages = static_cast<int64_t>(t.blocks);
    s.evictable_pages = s.total_pages;
    s.nodes = static_cast<int64_t>(nodes_);
    s.cached_tokens = tokens_;
    s.inserts = t.stored_events;
    s.evictions = t.removed_events;
    return s;
  }

  std::string detokenize(const std::vector<Token>& tokens) override {
    if (tokens.size() == 1 && tokens[0] <= kRankLabelToken0)
      return "rank " + std::to_string(kRankLabelToken0 - tokens[0]);
    if (tokens.size() == 1 && tokens[0] == kUnknownPrefixToken)
      return "unknown prefix (stored before you attached)";
    std::vector<int64_t> ids(tokens.begin(), tokens.end());
    if (vocab_) return vocab_->text(ids);
    std::string out;
    for (int64_t id : ids) out += (out.empty() ? "" : " ") + std::to_string(id);
    return out;
  }

  std::string cache_setting() override { return "remote"; }
  int64_t pool_tokens() override { return 0; }
  std::string describe() override { return src_->describe() + " - " + src_->status(); }
  bool remote() const override { return true; }
  std::vector<int> ranks() const override { return ranks_; }
  int node_rank(NodeId id) const override {
    auto it = rank_of_.find(id);
    return it == rank_of_.end() ? -1 : it->second;
  }

 private:
  // Changes whenever the tree does (events only ever add to the counts).
  std::tuple<uint64_t, uint64_t, uint64_t, size_t> fingerprint() const {
    const auto& t = src_->tree();
    const auto s = t.stats();
    return {s.stored_events, s.removed_events, s.cleared_events, t.size()};
  }

  NodeId id_for(const std::string& key) {
    auto [it, fresh] = ids_.try_emplace(key, next_id_);
    if (fresh) ++next_id_;
    return it->second;
  }

  CacheSnapshot fold();

  std::unique_ptr<RemoteBlockSource> src_;
  std::shared_ptr<const Vocabulary> vocab_;
  std::tuple<uint64_t, uint64_t, uint64_t, size_t> seen_{};
  std::map<std::string, NodeId> ids_;
  NodeId next_id_ = 1;
  std::vector<int> ranks_;           // with several ranks only
  std::map<NodeId, int> rank_of_;    // node -> rank, with several ranks only
  size_t nodes_ = 0;
  int64_t tokens_ = 0;
};

CacheSnapshot RemoteFeed::fold() {
  const kv_events::BlockTree& tree = src_->tree();
  const auto walk = tree.walk();  // parents before children, runs contiguous
  CacheSnapshot snap;
  snap.policy = CachePolicy::radix;
  CacheNodeInfo root;
  root.id = kRootNode;
  snap.nodes.push_back(root);
  std::set<int> ranks;
  std::map<std::string, int> children;  // "rank:hash" -> child blocks held
  auto key = [](int rank, const kv_events::BlockHash& h) { return std::to_string(rank) + ":" + h; };
  for (const auto& [b, depth] : walk) {
    ranks.insert(b->rank);
    if (depth > 1 && b->parent) ++children[key(b->rank, *b->parent)];
  }
  const bool per_rank = ranks.size() > 1;
  ranks_.clear();
  rank_of_.clear();
  if (per_rank) ranks_.assign(ranks.begin(), ranks.end());
  std::map<int, NodeId> rank_node;
  if (per_rank) {
    for (int r : ranks) {
      CacheNodeInfo n;
      n.id = id_for("rank:" + std::to_string(r));
      n.parent = kRootNode;
      n.tokens = {kRankLabelToken0 - r};
      n.pages = {0};
      rank_node[r] = n.id;
      rank_of_[n.id] = r;
      snap.nodes.push_back(n);
    }
  }
  // Blocks whose parent this tree never held hang, per rank, under one
  // "unknown prefix" node: their prefix is not the root's.
  std::map<int, NodeId> unknown_node;
  auto unknown_prefix = [&](int rank) {
    auto it = unknown_node.find(rank);
    if (it != unknown_node.end()) return it->second;
    CacheNodeInfo n;
    n.id = id_for("unknown:" + std::to_string(rank));
    n.parent = per_rank ? rank_node[rank] : kRootNode;
    n.tokens = {kUnknownPrefixToken};
    n.pages = {0};
    if (per_rank) rank_of_[n.id] = rank;
    snap.nodes.push_back(n);
    return unknown_node[rank] = n.id;
  };
  std::map<std::string, NodeId> node_of_block;  // last block of a run -> node
  int32_t page = 0;
  int page_size = 0;
  tokens_ = 0;
  for (size_t i = 0; i < walk.size();) {
    const kv_events::Block* first = walk[i].first;
    CacheNodeInfo n;
    n.id = id_for(key(first->rank, first->hash));
    n.parent = per_rank ? rank_node[first->rank] : kRootNode;
    if (walk[i].second > 1 && first->parent) {
      auto p = node_of_block.find(key(first->rank, *first->parent));
      if (p != node_of_block.end()) n.parent = p->second;
    } else if (tree.has_unknown_parent(*first)) {
      n.parent = unknown_prefix(first->rank);
    }
    size_t j = i;
    for (;;) {
      const kv_events::Block* b = walk[j].first;
      if (page_size == 0 && !b->token_ids.empty()) page_size = int(b->token_ids.size());
      for (int64_t t : b->token_ids) n.tokens.push_back(static_cast<Token>(t));
      n.pages.push_back(page++);
      if (children[key(b->rank, b->hash)] != 1 || j + 1 >= walk.size()) break;
      ++j;  // the single child follows its parent in the walk
    }
    node_of_block[key(walk[j].first->rank, walk[j].first->hash)] = n.id;
    if (per_rank) rank_of_[n.id] = first->rank;
    tokens_ += static_cast<int64_t>(n.tokens.size());
    snap.nodes.push_back(std::move(n));
    i = j + 1;
  }
  snap.page_size = page_size > 0 ? page_size : 1;
  snap.total_pages = page;
  nodes_ = snap.nodes.size() - 1;
  std::sort(snap.nodes.begin(), snap.nodes.end(),
            [](const CacheNodeInfo& a, const CacheNodeInfo& b) { return a.id < b.id; });
  snap.stats = cache_stats();
  return snap;
}

}  // namespace

std::unique_ptr<CacheFeed> make_remote_feed(std::unique_ptr<RemoteBlockSource> source,
                                            std::shared_ptr<const Vocabulary> vocab) {
  return std::make_unique<RemoteFeed>(std::move(source), std::move(vocab));
}

}  // namespace rc::ui::panel
