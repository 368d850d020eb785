// Siblings that look alike: two children of one radix node whose
// text renders the same, or nearly (whitespace, control tokens, or as far
// as a label shows), while their token ids differ. A reply re-encoded from
// its saved text instead of the ids that were generated is the usual cause:
// the cache then holds the same words twice and the next prompt misses one
// copy. The panel shows, per such node, the first token where it and its
// look-alike part, both ids with their pieces, and a one-line why.
//
// Only siblings are compared (a parent's children), and only when the
// tree's shape changes: SiblingDiffs::update() is called once per sync and
// returns at once while the structure version is the one it last saw.
//
// Pure logic: no ImGui, no Qt, no engine; GUI thread only. Text comes from
// the caller (the feed's detokenizer and the panel's cached labels).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "panel/tree-model.h"

namespace rc::ui::panel {

// Why two siblings look alike, strongest first.
enum class LookAlike {
  same_text_split,     // the very same text, cut into other tokens
  same_text_space,     // the same text; a space or line break sits in another token
  same_text_bytes,     // the same text; one side spells a character in byte tokens
  whitespace_control,  // the texts differ only in whitespace or control tokens
  label_only,          // the labels look the same; the texts differ further on
};

// One line for the user: "the same text split into other tokens (a
// re-encoded reply?)", "differs only in whitespace/control tokens", ...
std::string look_alike_why(LookAlike why, int64_t text_offset = 0);

struct SiblingDiff {
  NodeId node = kNoNode;     // the node this describes
  NodeId sibling = kNoNode;  // the look-alike it is compared with
  size_t others = 0;         // further look-alikes among the siblings
  // First differing token, counted from 0: in this node's span and on the
  // root path (depth_tokens + span_index).
  size_t span_index = 0;
  int64_t path_index = 0;
  // Both ids there (-1: that span ends before it) and their pieces as they
  // read in context, with visible escapes (visible_text); "" for a token
  // that renders as nothing (a control token).
  Token token = -1, sibling_token = -1;
  std::string piece, sibling_piece;
  LookAlike why = LookAlike::same_text_split;
  int64_t text_offset = 0;  // label_only: first differing character, from 0
};

// `s` with spaces as "·", "\n" "\t" "\r" and other control bytes escaped
// ("\x1b"), a backslash doubled, invalid UTF-8 bytes as "\xNN" and U+FFFD
// (what a lone byte token decodes to) as "\uFFFD".
std::string visible_text(const std::string& s);
// `1234 "·Hello"`, `1234 (renders as nothing: a control token)` or
// "(the span ends here)".
std::string token_and_piece(Token t, const std::string& piece);
// "token 3 of the prompt path (1st of this node)", counted from 1.
std::string first_difference_where(const SiblingDiff& d);

class SiblingDiffs {
 public:
  using TokensText = std::function<std::string(const std::vector<Token>&)>;
  using LabelText = std::function<const std::string&(const TreeNode&)>;

  // Recomputes every look-alike of `m` when its structure version, the
  // model itself or `source` (the feed: its detokenizer) changed since the
  // last call; else returns false at once. `text` decodes tokens, `label` a
  // node's span as the panel shows it (cached by the caller). Trees over
  // `big_tree` nodes are recomputed at most every `big_tree_gap` seconds.
  bool update(const TreeModel& m, const void* source, const TokensText& text,
              const LabelText& label, double now);
  void clear();

  const SiblingDiff* find(NodeId id) const;
  size_t size() const { return diffs_.size(); }
  uint64_t computations() const { return computations_; }

  size_t big_tree = 2000;
  double big_tree_gap = 0.5;

 private:
  std::unordered_map<NodeId, SiblingDiff> diffs_;
  const TreeModel* model_ = nullptr;
  const void* source_ = nullptr;
  uint64_t structure_ = UINT64_MAX;
  double at_ = -1e18;
  uint64_t computations_ = 0;
};

}  // namespace rc::ui::panel
