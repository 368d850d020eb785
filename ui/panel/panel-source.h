// Where the cache panel's shown tree comes from now: the feed, the queue of
// its events held back while the panel is paused (teaching: Step applies
// them one by one), and what the feed said of itself in the latest frame.
//
// GUI thread only. Owned by CachePanelState, which applies the events to
// the tree shown (tree-state.h); this part never sees a tree.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "panel/cache-feed.h"

namespace rc::ui::panel {

struct PanelSource {
  // Null: nothing to show.
  std::unique_ptr<CacheFeed> feed;

  // --- Pause and step -------------------------------------------------------
  bool paused = false;
  std::deque<CacheEvent> pending;  // drained while paused, not applied yet
  bool pending_lost = false;       // the queue overflowed while paused
  // More queued events than this while paused are dropped and replaced by a
  // resync: stepping through a hundred thousand events teaches nothing.
  static constexpr size_t kMaxPending = 100000;
  // Queues a drained batch while paused; an overflow (of the feed or of the
  // queue) empties the queue and sets pending_lost.
  void hold(std::vector<CacheEvent> events, bool overflowed);

  // --- Latest from the feed (read once per frame) ----------------------------
  CacheStats cache_stats;
  TierStats tiers;
  bool has_tiers = false;  // the feed reports tiers (an engine made with them)
  RequestTotals requests;  // engine feeds only
  bool has_requests = false;
  void read_stats();
  // The feed changed: the queue and every figure of the old one go.
  void forget();

  uint64_t resyncs = 0;  // how many times the shown tree was rebuilt from a snapshot
};

}  // namespace rc::ui::panel
