// The panel's event log: one readable line per cache event (what happened,
// to which node, with its text), bounded, filterable by kind and text.
//
// Lines are formatted when the event is applied, against the model as it is
// then, so an evicted node's text is still known. GUI thread only.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <string>

#include "panel/tree-model.h"

namespace rc::ui::panel {

inline constexpr size_t kEventKinds = size_t(kLastCacheEventKind) + 1;  // CacheEventKind values

struct LogEntry {
  uint64_t seq = 0;
  CacheEventKind kind = CacheEventKind::insert;
  NodeId node = kNoNode;
  double at = 0;  // caller seconds
  std::string text;
};

class EventLog {
 public:
  explicit EventLog(size_t capacity = 4000) : capacity_(capacity) { show.fill(true); }

  // Renders a token span for a log line (decoded text); may be empty.
  using SpanText = std::function<std::string(const std::vector<Token>&)>;

  // Appends a line for `e`, formatted beforehand with describe() against the
  // model before the event was applied.
  void add(const CacheEvent& e, std::string text, double now);
  // A free-form line (resyncs, demo steps), shown as kind "note".
  void note(const std::string& text, double now);
  void clear() { entries_.clear(); }

  const std::deque<LogEntry>& entries() const { return entries_; }
  size_t total() const { return total_; }  // every line ever added

  // Filters: which kinds show (lock/unlock and match are chatty: on by
  // default all the same, a teacher switches them off), and a substring.
  std::array<bool, kEventKinds> show{};
  bool show_notes = true;
  std::string text_filter;
  bool visible(const LogEntry& e) const;

  // One line for an event, e.g. "evict #12  48 tok  \"You are a helpful…\"".
  static std::string describe(const CacheEvent& e, const TreeModel& before,
                              const SpanText& span_text);

 private:
  std::deque<LogEntry> entries_;
  size_t capacity_;
  size_t total_ = 0;
};

}  // namespace rc::ui::panel
