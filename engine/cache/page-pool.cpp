#include "cache/page-pool.h"

#include <string>

#include "rc-assert.h"

namespace rc {

PagePool::PagePool(int64_t total_pages, int page_size, const KvShape& shape)
    : page_size_(page_size),
      bytes_per_page_(shape.bytes_per_token() * page_size),
      state_(size_t(total_pages), PageState::free) {
  free_.reserve(size_t(total_pages));
  // Push in reverse so alloc hands out 0, 1, 2, ... on a fresh pool: easier
  // to read in the demo and in test failures.
  for (int64_t p = total_pages - 1; p >= 0; --p) free_.push_back(PageId(p));
}

bool PagePool::alloc(int64_t n, std::vector<PageId>& out) {
  if (n < 0 || n > free_count()) return false;
  size_t first = free_.size() - size_t(n);
  for (size_t i = free_.size(); i-- > first;) {
    PageId p = free_[i];
    set(p, PageState::free, PageState::held);
    out.push_back(p);
  }
  free_.resize(first);
  held_ += n;
  return true;
}

void PagePool::free_held(PageId p) {
  set(p, PageState::held, PageState::free);
  free_.push_back(p);
  --held_;
}

void PagePool::free_cached(std::span<const PageId> pages) {
  for (PageId p : pages) {
    set(p, PageState::cached, PageState::free);
    free_.push_back(p);
  }
}

void PagePool::reset_all() {
  held_ = 0;
  free_.clear();
  for (int64_t p = total() - 1; p >= 0; --p) {
    state_[size_t(p)] = PageState::free;
    free_.push_back(PageId(p));
  }
}

void PagePool::set(PageId p, PageState from, PageState to) {
  RC_ASSERT(in_range(p));
  RC_ASSERT_MSG(state_[size_t(p)] == from, "page in an unexpected state");
  state_[size_t(p)] = to;
}

bool PagePool::check(int64_t counts[4]) const {
  for (int i = 0; i < 4; ++i) counts[i] = 0;
  for (PageState s : state_) ++counts[int(s)];
  if (counts[int(PageState::free)] != free_count()) return false;
  if (counts[int(PageState::held)] != held_) return false;
  std::vector<bool> seen(state_.size(), false);  // a page listed twice would be handed out twice
  for (PageId p : free_) {
    if (!in_range(p) || state_[size_t(p)] != PageState::free || seen[size_t(p)]) return false;
    seen[size_t(p)] = true;
  }
  return true;
}

Status PagePool::free_held_checked(std::span<const PageId> pages) {
  size_t i = 0;
  for (; i < pages.size(); ++i) {
    if (!in_range(pages[i]) || state(pages[i]) != PageState::held) break;
    set_state(pages[i], PageState::pending);
  }
  for (size_t j = 0; j < i; ++j) set_state(pages[j], PageState::held);
  if (i < pages.size())
    return {StatusCode::invalid_argument,
            "free_pages: page " + std::to_string(pages[i]) + " is not held by the caller"};
  for (PageId p : pages) free_held(p);
  return {};
}

}  // namespace rc
