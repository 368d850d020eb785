#include "recording/block-recording.h"

#include <algorithm>

namespace rc::recording {

BlockRecording::BlockRecording(Recorder& recorder) : recorder_(recorder) {
  CacheSnapshot s = header();
  CacheNodeInfo root;
  root.id = kRootNode;
  s.nodes.push_back(root);
  tree_.reset(s);
  recorder_.snapshot(std::move(s), "cache-watch");
  recorder_.set_meta("remote_events",
                     "KV-event blocks: one node per block, parents as the block tree links "
                     "them (app/recording/block-recording.h)");
}

std::string BlockRecording::key(int rank, const std::string& hash) {
  return std::to_string(rank) + ":" + hash;
}

CacheSnapshot BlockRecording::header() const {
  CacheSnapshot s;
  s.policy = CachePolicy::radix;
  s.page_size = block_size_ > 0 ? block_size_ : 1;
  s.total_pages = int64_t(held_.size());
  s.stats.total_pages = s.total_pages;
  s.stats.nodes = int64_t(held_.size());
  for (const auto& [k, h] : held_) s.stats.cached_tokens += int64_t(h.tokens.size());
  return s;
}

void BlockRecording::push_event(CacheEvent e) {
  e.seq = tree_.next_seq();
  e.tick = ++tick_;
  // The mapping keeps the tree consistent by construction; a refusal here
  // is a bug in it, and the event would not replay, so it is not written.
  if (!tree_.apply(e).empty()) return;
  pending_.push_back(std::move(e));
}

void BlockRecording::apply(const kv_events::Batch& batch) {
  ranks_.insert(batch.rank);
  for (const kv_events::Event& ev : batch.events) {
    if (ev.kind == kv_events::EventKind::cleared) {
      clear_rank(batch.rank);
    } else if (ev.kind == kv_events::EventKind::removed) {
      for (const auto& h : ev.block_hashes) remove(key(batch.rank, h));
    } else {
      // Split as BlockTree::apply does: block_size tokens each (or an even
      // share when it was left out), the last block taking the rest.
      const size_t n = ev.block_hashes.size();
      size_t bs = size_t(std::max<int64_t>(ev.block_size, 0));
      if (bs == 0 && n > 0) bs = ev.token_ids.size() / n;
      std::optional<std::string> parent = ev.parent;
      for (size_t i = 0; i < n; ++i) {
        const size_t lo = std::min(i * bs, ev.token_ids.size());
        const size_t hi =
            (i + 1 == n) ? ev.token_ids.size() : std::min(lo + bs, ev.token_ids.size());
        std::vector<Token> tokens;
        for (size_t t = lo; t < hi; ++t) tokens.push_back(Token(ev.token_ids[t]));
        if (block_size_ == 0 && !tokens.empty()) {
          block_size_ = int(tokens.size());
          recorder_.set_meta("page_size", std::to_string(block_size_));
        }
        store(batch.rank, ev.block_hashes[i], parent, std::move(tokens));
        parent = ev.block_hashes[i];
      }
    }
  }
  if (ranks_.size() > 1 || batch.rank != 0) {
    std::string list;
    for (int r : ranks_) list += (list.empty() ? "" : ",") + std::to_string(r);
    recorder_.set_meta("ranks", list);
  }
  if (!pending_.empty()) recorder_.events(std::move(pending_));
  pending_.clear();
}

void BlockRecording::store(int rank, const std::string& hash,
                           const std::optional<std::string>& parent, std::vector<Token> tokens) {
  const std::string k = key(rank, hash);
  const std::optional<std::string> pk =
      parent ? std::optional<std::string>(key(rank, *parent)) : std::nullopt;
  auto old = held_.find(k);
  if (old != held_.end()) {
    if (old->second.parent_key == pk && old->second.tokens == tokens) return;
    remove(k);  // stored again differently: the block tree replaces it
  }
  // An insert event needs tokens: a block sent without any is not drawn
  // (blocks naming it stay at the root).
  if (tokens.empty()) return;
  Held& h = held_[k];
  h.rank = rank;
  h.parent_key = pk;
  h.tokens = std::move(tokens);
  place(k);
  insert_subtree(k);  // the block alone: nothing is placed under it yet
  // Blocks that named this one before it arrived move under it.
  auto w = waiting_.find(k);
  if (w == waiting_.end()) return;
  std::set<std::string> orphans = std::move(w->second);
  waiting_.erase(w);
  std::set<std::string> ancestors;  // a forged parent cycle stays at the root
  for (std::optional<std::string> a = k; a && held_.count(*a);) {
    if (!ancestors.insert(*a).second) break;
    const Held& ah = held_.at(*a);
    a = (ah.parent_key && held_.count(*ah.parent_key) && held_.at(*ah.parent_key).kids.count(*a))
            ? ah.parent_key
            : std::nullopt;
  }
  for (const std::string& o : orphans) {
    if (!held_.count(o) || ancestors.count(o)) {
      if (held_.count(o)) waiting_[k].insert(o);
      continue;
    }
    evict_subtree(o);
    unplace(o);
    held_.at(k).kids.insert(o);
    insert_subtree(o);
    reinserted_ += subtree(o).size();
  }
}

void BlockRecording::remove(const std::string& k) {
  auto it = held_.find(k);
  if (it == held_.end()) return;  // BlockTree counts it as unknown
  const std::set<std::string> kids = it->second.kids;
  evict_subtree(k);
  unplace(k);
  held_.erase(k);
  // Its children are roots now, waiting for it to come back.
  for (const std::string& c : kids) {
    waiting_[k].insert(c);
    insert_subtree(c);
    reinserted_ += subtree(c).size();
  }
}

void BlockRecording::clear_rank(int rank) {
  bool others = false;
  std::vector<std::string> roots;
  for (const auto& [k, h] : held_) {
    if (h.rank != rank)
      others = true;
    else if (!h.parent_key || !held_.count(*h.parent_key) || !held_.at(*h.parent_key).kids.count(k))
      roots.push_back(k);
  }
  if (!others) {
    CacheEvent e;
    e.kind = CacheEventKind::reset;
    push_event(std::move(e));
  } else {
    for (const std::string& r : roots) evict_subtree(r);
  }
  std::erase_if(held_, [&](const auto& kv) { return kv.second.rank == rank; });
  std::erase_if(waiting_, [&](const auto& kv) { return kv.first.rfind(key(rank, ""), 0) == 0; });
}

void BlockRecording::place(const std::string& k) {
  Held& h = held_.at(k);
  if (h.parent_key && *h.parent_key != k && held_.count(*h.parent_key))
    held_.at(*h.parent_key).kids.insert(k);
  else if (h.parent_key)
    waiting_[*h.parent_key].insert(k);
}

void BlockRecording::unplace(const std::string& k) {
  const Held& h = held_.at(k);
  if (!h.parent_key) return;
  auto p = held_.find(*h.parent_key);
  if (p != held_.end() && p->second.kids.erase(k)) return;
  auto w = waiting_.find(*h.parent_key);
  if (w == waiting_.end()) return;
  w->second.erase(k);
  if (w->second.empty()) waiting_.erase(w);
}

std::vector<std::string> BlockRecording::subtree(const std::string& k) const {
  std::vector<std::string> out{k};
  for (size_t i = 0; i < out.size(); ++i)
    for (const std::string& c : held_.at(out[i]).kids) out.push_back(c);
  return out;
}

void BlockRecording::evict_subtree(const std::string& k) {
  const std::vector<std::string> order = subtree(k);
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    Held& h = held_.at(*it);
    CacheEvent e;
    e.kind = CacheEventKind::evict;
    e.node = h.node;
    e.parent = parent_node(*it);
    h.node = kNoNode;
    push_event(std::move(e));
  }
}

NodeId BlockRecording::parent_node(const std::string& k) const {
  const Held& h = held_.at(k);
  if (!h.parent_key) return kRootNode;
  auto p = held_.find(*h.parent_key);
  return p != held_.end() && p->second.kids.count(k) ? p->second.node : kRootNode;
}

void BlockRecording::insert_subtree(const std::string& k) {
  const std::vector<std::string> order = subtree(k);
  for (const std::string& b : order) {
    Held& h = held_.at(b);
    CacheEvent e;
    e.kind = CacheEventKind::insert;
    e.node = h.node = next_node_++;
    e.parent = parent_node(b);
    e.tokens = h.tokens;
    e.pages = {next_page_++};
    e.token_count = uint32_t(e.tokens.size());
    e.page_count = 1;
    push_event(std::move(e));
  }
}

void BlockRecording::finish() {
  if (!pending_.empty()) recorder_.events(std::move(pending_));
  pending_.clear();
  recorder_.snapshot(tree_.to_snapshot(header()), "cache-watch");
}

}  // namespace rc::recording
