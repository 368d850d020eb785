// PagePool: the free list of KV page indices, O(1) alloc and free.
//
// It owns indices only; the runtime owns the memory they address. Each page
// is in exactly one state, which is what lets the caches check ownership:
//   free    on the free list
//   held    handed to a caller by alloc(), not yet given to the tree
//   cached  owned by a cache node (or a hash block)
// Single-threaded: owned by one KvCache on the engine thread.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "radixchat/cache.h"

namespace rc {

enum class PageState : uint8_t { free, held, cached, pending };

class PagePool {
 public:
  PagePool(int64_t total_pages, int page_size, const KvShape& shape);

  int page_size() const { return page_size_; }
  int64_t total() const { return int64_t(state_.size()); }
  int64_t free_count() const { return int64_t(free_.size()); }
  int64_t held_count() const { return held_; }
  int64_t bytes_per_page() const { return bytes_per_page_; }
  int64_t total_bytes() const { return bytes_per_page_ * total(); }

  // Appends n pages (state held) to out; false and nothing taken if short.
  bool alloc(int64_t n, std::vector<PageId>& out);
  // Held -> free. The caller has checked the state (see valid_held()).
  void free_held(PageId p);
  // Held -> free for a caller's list (KvCache::free_pages): every page is
  // checked first (pending marks catch a page listed twice), so a bad call
  // frees nothing and says which page is not the caller's.
  Status free_held_checked(std::span<const PageId> pages);
  // Cached -> free (eviction).
  void free_cached(std::span<const PageId> pages);
  // Held -> cached (insert took ownership).
  void adopt(PageId p) {
    set(p, PageState::held, PageState::cached);
    --held_;
  }

  bool in_range(PageId p) const { return p >= 0 && p < PageId(state_.size()); }
  PageState state(PageId p) const { return state_[size_t(p)]; }
  void set_state(PageId p, PageState s) { state_[size_t(p)] = s; }
  // Every page back to free (reset of a cache with no held pages).
  void reset_all();
  // free list consistent with states; returns the count of each state.
  bool check(int64_t counts[4]) const;

 private:
  void set(PageId p, PageState from, PageState to);

  int page_size_;
  int64_t bytes_per_page_;
  int64_t held_ = 0;
  std::vector<PageId> free_;  // stack: the most recently freed page is reused first
  std::vector<PageState> state_;
};

}  // namespace rc
