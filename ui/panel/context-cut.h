// Where a context cut left the cached path. When a chat's
// history no longer fits the context, its earliest messages are dropped
// and the prompt sent next shares only a prefix (usually the system
// prompt) with the path the cache held for that chat. The app reports the
// cut with the prompt it sent and how many of its tokens the cache served;
// the panel marks the node where that prefix ends, the branch point, with
// a badge ("context cut: 3 messages dropped") and shows a banner line for a
// few seconds, so the user sees why the cached prefix changed.
//
// The node is found like a located message (TreeState::locate):
// TreeModel::locate over the remembered tokens, again whenever the tree's
// shape changes (a split at the branch point when the new prompt is
// inserted, evictions). One cut is remembered: the next replaces it.
//
// Pure logic; GUI thread only. Times are caller seconds.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "panel/tree-model.h"

namespace rc::ui::panel {

struct ContextCut {
  static constexpr double kBannerSeconds = 6.0;

  int dropped = 0;            // messages left out of the prompt
  std::vector<Token> prompt;  // the prompt sent after the cut (may be empty: unknown)
  int64_t reused = 0;         // its first tokens the cache served
  double at = kNever;         // when the cut was reported
  uint64_t cuts = 0;          // cuts reported so far
  // The node where the prompt leaves the cached path: its path is the
  // reused prefix (or, before the new prompt is inserted, the node that
  // prefix ends inside). kNoNode when no cut is known, the prompt was not
  // sent, or that prefix is no longer cached.
  NodeId node = kNoNode;
  // Tokens of `node` the prompt shares (all of them once it is split).
  int64_t node_shared = 0;

  bool active() const { return cuts > 0; }
  // Replaces the remembered cut; `reused` is clamped to the prompt. Call
  // resolve() after (the owner does, against its model).
  void mark(int dropped_messages, std::vector<Token> sent, int64_t reused_tokens, double now);
  // Finds `node` again in `m` (when the structure version moved since the
  // last call, or `force`).
  void resolve(const TreeModel& m, bool force = false);
  void clear();

  // "context cut: 3 messages dropped"
  std::string badge() const;
  // The badge's tooltip and Node tab line: where and why.
  std::string detail() const;
  // The banner line while the cut is recent, else "".
  std::string banner(double now) const;

 private:
  uint64_t structure_ = UINT64_MAX;
  const TreeModel* model_ = nullptr;
};

}  // namespace rc::ui::panel
