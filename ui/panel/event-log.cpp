#include "panel/event-log.h"

#include <algorithm>
#include <cctype>

#include "panel/label-text.h"

namespace rc::ui::panel {

namespace {

std::string quoted(const std::vector<Token>& tokens, const EventLog::SpanText& span_text,
                   size_t max_chars = 40) {
  if (!span_text || tokens.empty()) return "";
  return "  \"" + one_line(span_text(tokens), max_chars) + "\"";
}

std::string id(NodeId n) {
  if (n == kRootNode) return "root";
  std::string s = "#";  // appended: GCC 12 warns falsely on "#" + string
  s += std::to_string(n);
  return s;
}

}  // namespace

std::string EventLog::describe(const CacheEvent& e, const TreeModel& m, const SpanText& span_text) {
  const TreeNode* node = m.find(e.node);
  const TreeNode* other = m.find(e.other);
  const std::string tok = std::to_string(e.token_count) + " tok";
  switch (e.kind) {
    case CacheEventKind::insert:
      if (e.token_count == 0) return "insert: already cached up to " + id(e.node);
      return "insert " + id(e.node) + " under " + id(e.parent) + "  " + tok + ", " +
             std::to_string(e.page_count) + " pages" + quoted(e.tokens, span_text);
    case CacheEventKind::split: {
      std::vector<Token> head;
      if (other)
        head.assign(other->tokens.begin(),
                    other->tokens.begin() + std::min<size_t>(e.token_count, other->tokens.size()));
      return "split " + id(e.other) + " after " + tok + ": new parent " + id(e.node) +
             quoted(head, span_text);
    }
    case CacheEventKind::merge:
      return "merge " + id(e.other) + " into its only child " + id(e.node) + "  now " + tok;
    case CacheEventKind::match:
      if (e.token_count == 0) return "match: miss (nothing cached for this prompt)";
      return "match " + tok + " ending at " + id(e.node);
    case CacheEventKind::lock:
      return "lock " + id(e.node) + " and its path (a request reads it)";
    case CacheEventKind::unlock:
      return "unlock " + id(e.node) + " and its path";
    case CacheEventKind::pin:
      return "pin " + id(e.node) + " (priority prefix)";
    case CacheEventKind::unpin:
      return "unpin " + id(e.node);
    case CacheEventKind::evict:
      return "evict " + id(e.node) + "  " + tok + ", " + plural(int64_t(e.page_count), "page") +
             " freed" + (node ? quoted(node->tokens, span_text) : std::string());
    case CacheEventKind::reset:
      return "reset: every cached node dropped (" + plural(int64_t(m.size()) - 1, "node") + ")";
    case CacheEventKind::demote:
      return "demote " + id(e.node) + "  " + tok +
             " stay in the tiers below the pool (disk, host or Redis): a later prompt loads them "
             "back instead of recomputing";
    case CacheEventKind::promote:
      return "promote " + tok + " ending at " + id(e.node) +
             ": loaded back from a tier below the pool, not recomputed";
    case CacheEventKind::draft: {
      // page_count carries the accepted tokens (radixchat/cache-events.h).
      const uint32_t kept = std::min(e.page_count, e.token_count);
      const std::string counts = ", " + std::to_string(kept) + " kept, " +
                                 std::to_string(e.token_count - kept) + " wasted";
      if (e.node == kNoNode) return "draft " + tok + " from the prompt" + counts;
      return "draft " + tok + " from " + id(e.node) + counts +
             (node ? quoted(node->tokens, span_text) : std::string());
    }
  }
  return cache_event_kind_name(e.kind);
}

void EventLog::add(const CacheEvent& e, std::string text, double now) {
  LogEntry entry;
  entry.seq = e.seq;
  entry.kind = e.kind;
  entry.node = e.node;
  entry.at = now;
  entry.text = std::move(text);
  entries_.push_back(std::move(entry));
  ++total_;
  while (entries_.size() > capacity_) entries_.pop_front();
}

void EventLog::note(const std::string& text, double now) {
  LogEntry entry;
  entry.seq = UINT64_MAX;  // marks a note
  entry.at = now;
  entry.text = text;
  entries_.push_back(std::move(entry));
  ++total_;
  while (entries_.size() > capacity_) entries_.pop_front();
}

bool EventLog::visible(const LogEntry& e) const {
  const bool is_note = e.seq == UINT64_MAX;
  if (is_note ? !show_notes : !show[size_t(e.kind)]) return false;
  if (text_filter.empty()) return true;
  auto lower = [](std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
    return s;
  };
  return lower(e.text).find(lower(text_filter)) != std::string::npos;
}

}  // namespace rc::ui::panel
