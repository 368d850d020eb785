// Random cache workloads for the panel's tests and benchmark: requests that
// share prefixes (so matches split nodes), locks held across steps, pins,
// evictions (which merge), resets, all through the public KvCache API and the
// request protocol of radixchat/cache.h. No model needed.
#pragma once

#include <algorithm>
#include <memory>
#include <random>
#include <vector>

#include "radixchat/cache.h"

namespace rc::test {

inline std::unique_ptr<KvCache> make_panel_cache(int page_size, int64_t pool_tokens,
                                                 size_t event_capacity = 1 << 16) {
  CacheConfig cfg;
  cfg.policy = CachePolicy::radix;
  cfg.page_size = page_size;
  cfg.total_pages = pool_tokens / page_size;
  cfg.event_capacity = event_capacity;
  cfg.shape = KvShape{4, 2, 16, 2};
  return std::move(make_kv_cache(cfg)).value();
}

class PanelWorkload {
 public:
  PanelWorkload(KvCache& c, uint32_t seed, int alphabet = 4)
      : c_(c), rng_(seed), alphabet_(alphabet) {}

  // One random operation.
  void step() {
    const int r = pick(100);
    if (r < 40) {
      request(pick(2) == 0);
    } else if (r < 60) {
      finish_one();
    } else if (r < 72) {
      read_only_match();
    } else if (r < 80) {
      c_.evict(int64_t(1 + pick(40)));
    } else if (r < 86) {
      pin_one();
    } else if (r < 90) {
      unpin_one();
    } else if (r < 91 && active_.empty() && pinned_.empty()) {
      (void)c_.reset();
    } else {
      request(false);
    }
  }

  // Runs one request to the end (match, lock, alloc, insert, unlock).
  bool request(bool keep_lock) {
    const std::vector<Token> key = random_key();
    const int64_t ps = c_.config().page_size;
    MatchResult m = c_.match_prefix(key);
    if (!c_.lock(m.node).ok()) return false;
    const int64_t need = (int64_t(key.size()) - m.tokens + ps - 1) / ps;
    std::vector<PageId> table = m.pages;
    if (!c_.alloc_pages(need, table).ok()) {
      (void)c_.unlock(m.node);
      return false;
    }
    const size_t aligned = key.size() / size_t(ps) * size_t(ps);
    auto ins =
        c_.insert(std::span(key.data(), aligned), std::span(table.data(), aligned / size_t(ps)));
    if (table.size() > aligned / size_t(ps))
      (void)c_.free_pages(std::span(table).subspan(aligned / size_t(ps)));
    if (ins.ok() && aligned > 0) {
      (void)c_.lock(ins->node);
      if (keep_lock)
        active_.push_back(ins->node);
      else
        (void)c_.unlock(ins->node);
    }
    (void)c_.unlock(m.node);
    history_.push_back(key);
    if (history_.size() > 64) history_.erase(history_.begin());
    return ins.ok();
  }

  std::vector<Token> random_key() {
    std::vector<Token> key;
    if (!history_.empty() && pick(10) < 7) {
      const auto& h = history_[pick(history_.size())];
      key.assign(h.begin(), h.begin() + ptrdiff_t(pick(h.size() + 1)));
    }
    const size_t ps = size_t(c_.config().page_size);
    const size_t len = key.size() + ps * (1 + pick(3)) + pick(ps * 2 + 4);
    while (key.size() < len) key.push_back(Token('a' + pick(size_t(alphabet_))));
    return key;
  }

  // A verified draft as the scheduler reports one: the tree's continuation
  // of a cached prefix with some of it kept, else a prompt-lookup draft (no
  // node); now and then a draft whose node went meanwhile (a stale handle).
  void draft() {
    NodeHandle from{kNoNode, 0};
    uint64_t n = 1 + pick(8);
    if (pick(4) == 0) {
      from = stale_;
    } else if (!history_.empty()) {
      const auto& h = history_[pick(history_.size())];
      const std::vector<Token> key(h.begin(), h.begin() + ptrdiff_t(1 + pick(h.size())));
      Continuation c = c_.peek_continuation(key, n);
      if (!c.tokens.empty()) {
        from = stale_ = c.node;
        n = c.tokens.size();
      }
    }
    const uint64_t kept = pick(n + 1);
    c_.note_draft(from, int64_t(n), int64_t(kept));
    drafts.drafted_tokens += n;
    drafts.accepted_tokens += kept;
    ++drafts.drafts;
  }
  struct Drafts {
    uint64_t drafts = 0, drafted_tokens = 0, accepted_tokens = 0;
  } drafts;

  size_t active() const { return active_.size(); }

 private:
  size_t pick(size_t n) {
    return n == 0 ? 0 : std::uniform_int_distribution<size_t>(0, n - 1)(rng_);
  }

  void finish_one() {
    if (active_.empty()) return;
    const size_t i = pick(active_.size());
    (void)c_.unlock(active_[i]);
    active_.erase(active_.begin() + ptrdiff_t(i));
  }
  void read_only_match() {
    if (history_.empty()) return;
    const auto& h = history_[pick(history_.size())];
    std::vector<Token> key(h.begin(), h.begin() + ptrdiff_t(pick(h.size() + 1)));
    MatchResult m = c_.match_prefix(key);
    (void)c_.lock(m.node);
    (void)c_.unlock(m.node);
  }
  void pin_one() {
    if (active_.empty()) return;
    const NodeHandle h = active_[pick(active_.size())];
    if (c_.pin(h).ok()) pinned_.push_back(h);
  }
  void unpin_one() {
    if (pinned_.empty()) return;
    const size_t i = pick(pinned_.size());
    (void)c_.unpin(pinned_[i]);  // may be stale after eviction: refused, fine
    pinned_.erase(pinned_.begin() + ptrdiff_t(i));
  }

  KvCache& c_;
  std::mt19937 rng_;
  int alphabet_;
  std::vector<std::vector<Token>> history_;
  std::vector<NodeHandle> active_, pinned_;
  NodeHandle stale_{kNoNode, 0};  // the latest draft's node, maybe gone by now
};

// Grows a tree of at least `nodes` nodes (no eviction: the pool must be big
// enough), with prefixes shared at every depth like chat traffic.
inline void grow_tree(KvCache& c, size_t nodes, uint32_t seed) {
  PanelWorkload w(c, seed, 6);
  while (size_t(c.node_count()) < nodes) w.request(false);
}

}  // namespace rc::test
