#include "reply-memory.h"

namespace rc::runtime {

void ReplyMemory::remember(const std::string& text, std::vector<int32_t> ids) {
  if (ids.empty() || ids.size() > max_tokens_) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (auto it = by_text_.find(text); it != by_text_.end()) {
    tokens_ -= it->second->ids.size();
    lru_.erase(it->second);
    by_text_.erase(it);
  }
  tokens_ += ids.size();
  lru_.push_front(Entry{text, std::move(ids)});
  by_text_.emplace(lru_.front().text, lru_.begin());
  while (lru_.size() > max_replies_ || tokens_ > max_tokens_) drop_oldest();
}

std::vector<int32_t> ReplyMemory::recall(const std::string& text) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = by_text_.find(text);
  if (it == by_text_.end()) return {};
  lru_.splice(lru_.begin(), lru_, it->second);
  return lru_.front().ids;
}

size_t ReplyMemory::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return lru_.size();
}

void ReplyMemory::drop_oldest() {
  const Entry& e = lru_.back();
  tokens_ -= e.ids.size();
  by_text_.erase(e.text);
  lru_.pop_back();
}

}  // namespace rc::runtime
