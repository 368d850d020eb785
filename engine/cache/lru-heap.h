// LruHeap: indexed binary min-heap of eviction candidates.
//
// Why a heap and not a list: a parent that loses its last child becomes a
// candidate with an *old* access tick, so candidates do not arrive in tick
// order and an intrusive LRU list would need a sorted insert. The heap gives
// O(log n) push/pop/update/remove and the position of each node is stored
// back into the node (via the `pos` vector indexed by node id) for O(1)
// lookup. Items sort by (key, tie, node id): the key is the priority class
// (pinned nodes sort after every unpinned one) and the eviction priority
// (the tick for LRU; section 4's gdsf: its priority, with the tick as the
// tie), and the id makes the eviction order deterministic.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "rc-assert.h"

namespace rc {

class LruHeap {
 public:
  static constexpr uint32_t kAbsent = UINT32_MAX;

  struct Item {
    uint64_t key;  // (pinned << 63) | priority
    uint64_t tie;
    uint32_t node;
  };

  // priority < 2^63.
  static uint64_t make_key(bool pinned, uint64_t priority) {
    return (uint64_t(pinned) << 63) | priority;
  }

  bool empty() const { return items_.empty(); }
  size_t size() const { return items_.size(); }
  bool contains(uint32_t node) const { return node < pos_.size() && pos_[node] != kAbsent; }
  const Item& top() const { return items_.front(); }
  const std::vector<Item>& items() const { return items_; }

  void push(uint32_t node, uint64_t key, uint64_t tie = 0) {
    if (node >= pos_.size()) pos_.resize(size_t(node) + 1 + pos_.size() / 2, kAbsent);
    RC_ASSERT(pos_[node] == kAbsent);
    items_.push_back({key, tie, node});
    pos_[node] = uint32_t(items_.size() - 1);
    sift_up(items_.size() - 1);
  }

  uint32_t pop() {
    uint32_t node = items_.front().node;
    remove(node);
    return node;
  }

  void remove(uint32_t node) {
    size_t i = pos_[node];
    RC_ASSERT(i != kAbsent);
    pos_[node] = kAbsent;
    Item last = items_.back();
    items_.pop_back();
    if (i == items_.size()) return;
    items_[i] = last;
    pos_[last.node] = uint32_t(i);
    sift_down(sift_up(i));
  }

  void update(uint32_t node, uint64_t key, uint64_t tie = 0) {
    size_t i = pos_[node];
    RC_ASSERT(i != kAbsent);
    items_[i].key = key;
    items_[i].tie = tie;
    sift_down(sift_up(i));
  }

  void clear() {
    for (const Item& it : items_) pos_[it.node] = kAbsent;
    items_.clear();
  }

 private:
  static bool less(const Item& a, const Item& b) {
    if (a.key != b.key) return a.key < b.key;
    if (a.tie != b.tie) return a.tie < b.tie;
    return a.node < b.node;
  }

  size_t sift_up(size_t i) {
    Item it = items_[i];
    while (i > 0) {
      size_t p = (i - 1) / 2;
      if (!less(it, items_[p])) break;
      items_[i] = items_[p];
      pos_[items_[i].node] = uint32_t(i);
      i = p;
    }
    items_[i] = it;
    pos_[it.node] = uint32_t(i);
    return i;
  }

  void sift_down(size_t i) {
    Item it = items_[i];
    size_t n = items_.size();
    for (;;) {
      size_t c = 2 * i + 1;
      if (c >= n) break;
      if (c + 1 < n && less(items_[c + 1], items_[c])) ++c;
      if (!less(items_[c], it)) break;
      items_[i] = items_[c];
      pos_[items_[i].node] = uint32_t(i);
      i = c;
    }
    items_[i] = it;
    pos_[it.node] = uint32_t(i);
  }

  std::vector<Item> items_;
  std::vector<uint32_t> pos_;  // node id -> index in items_, or kAbsent
};

}  // namespace rc
