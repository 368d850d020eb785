// The ids of recently generated chat replies, by their text (docs/architecture.md section 10).
//
// A client (the server's, the bench's, the GUI's before it saved the ids)
// sends a reply back as text in the next turn's history. The engine looks
// the text up here and renders the reply as the ids it was generated as
// (tokenizer/chat-exact.h), so the cached reply matches whatever the
// sampler picked. Bounded: least recently used replies go first. Two
// replies with the same text keep the later one's ids (either renders the
// same text).
//
// Thread safety: every method may be called from any thread (submit renders
// on the caller's thread, replies finish on the engine thread).
#pragma once

#include <cstdint>
#include <list>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace rc::runtime {

class ReplyMemory {
 public:
  explicit ReplyMemory(size_t max_replies = 4096, size_t max_tokens = size_t(1) << 20)
      : max_replies_(max_replies), max_tokens_(max_tokens) {}

  void remember(const std::string& text, std::vector<int32_t> ids);
  // The ids of the reply with exactly this text (empty when none); counts
  // as a use.
  std::vector<int32_t> recall(const std::string& text);
  size_t size() const;

 private:
  struct Entry {
    std::string text;
    std::vector<int32_t> ids;
  };
  void drop_oldest();

  const size_t max_replies_;
  const size_t max_tokens_;
  mutable std::mutex mu_;
  std::list<Entry> lru_;  // most recent first
  std::unordered_map<std::string_view, std::list<Entry>::iterator> by_text_;
  size_t tokens_ = 0;
};

}  // namespace rc::runtime
