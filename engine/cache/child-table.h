// ChildTable: one flat open-addressing map (parent node, child key) -> child
// node for the whole radix tree, instead of a map per node.
//
// Why: per-node hash maps cost an allocation per node and a cache miss per
// level; one table with linear probing keeps a lookup at one or two cache
// lines. Deletion shifts entries back (no tombstones), so the table never
// degrades under the insert/evict churn of a long-running server.
//
// The child key is the first token (page_size 1) or a 64-bit hash of the
// first page; callers verify the page itself, so a hash collision is a cache
// miss, never a wrong hit. Single-threaded, like its owner.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace rc {

class ChildTable {
 public:
  static constexpr uint32_t kNone = UINT32_MAX;

  ChildTable() { rehash(64); }

  uint32_t find(uint32_t parent, uint64_t key) const {
    size_t i = slot(parent, key);
    for (;;) {
      const Entry& e = slots_[i];
      if (e.child == kNone) return kNone;
      if (e.parent == parent && e.key == key) return e.child;
      i = (i + 1) & mask_;
    }
  }

  // Inserts or overwrites.
  void put(uint32_t parent, uint64_t key, uint32_t child) {
    if ((size_ + 1) * 2 > slots_.size()) rehash(slots_.size() * 2);
    size_t i = slot(parent, key);
    for (;;) {
      Entry& e = slots_[i];
      if (e.child == kNone) {
        e = {key, parent, child};
        ++size_;
        return;
      }
      if (e.parent == parent && e.key == key) {
        e.child = child;
        return;
      }
      i = (i + 1) & mask_;
    }
  }

  // Removes the entry if present (backward-shift deletion).
  void erase(uint32_t parent, uint64_t key) {
    size_t i = slot(parent, key);
    for (;;) {
      Entry& e = slots_[i];
      if (e.child == kNone) return;
      if (e.parent == parent && e.key == key) break;
      i = (i + 1) & mask_;
    }
    --size_;
    size_t hole = i;
    for (size_t j = (hole + 1) & mask_;; j = (j + 1) & mask_) {
      Entry& e = slots_[j];
      if (e.child == kNone) break;
      size_t home = slot(e.parent, e.key);
      // Move e into the hole unless its home lies cyclically in (hole, j].
      bool stays = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
      if (!stays) {
        slots_[hole] = e;
        hole = j;
      }
    }
    slots_[hole].child = kNone;
  }

  void clear() {
    slots_.assign(64, Entry{});
    mask_ = 63;
    size_ = 0;
  }
  size_t size() const { return size_; }

 private:
  struct Entry {
    uint64_t key = 0;
    uint32_t parent = 0;
    uint32_t child = kNone;
  };

  size_t slot(uint32_t parent, uint64_t key) const {
    uint64_t h = key ^ (uint64_t(parent) * 0x9E3779B97F4A7C15ull);
    h ^= h >> 31;  // splitmix64 finaliser: token ids are small and dense
    h *= 0xBF58476D1CE4E5B9ull;
    h ^= h >> 29;
    return size_t(h) & mask_;
  }

  void rehash(size_t n) {
    std::vector<Entry> old;
    old.swap(slots_);
    slots_.assign(n, Entry{});
    mask_ = n - 1;
    size_ = 0;
    for (const Entry& e : old)
      if (e.child != kNone) put(e.parent, e.key, e.child);
  }

  std::vector<Entry> slots_;
  size_t mask_ = 0;
  size_t size_ = 0;
};

}  // namespace rc
