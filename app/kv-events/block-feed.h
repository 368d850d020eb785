// A remote cache followed as KV-event blocks, whatever carries the events:
// a ZeroMQ KV-events publisher (kv-subscriber.h: vLLM, SGLang, Dynamo,
// `radixchat-cli serve --kv-events`) or a RadixChat server's
// /v1/cache/events stream (server-cache-feed.h). cache-watch and the
// panel's "Attach to a cache..." use this interface only.
//
// Thread contract: one thread owns a feed; poll(), tree() and stats() are
// called from it only.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "radixchat/kv-block-tree.h"

namespace rc::kv_events {

struct SubscriberStats {
  uint64_t messages = 0;            // messages applied (live and replayed)
  uint64_t replayed_messages = 0;   // of which recovered through replay
  uint64_t malformed_messages = 0;  // wrong frame count, sequence or batch
  uint64_t dropped_messages = 0;    // lost in gaps and not recovered
  uint64_t seq_gaps = 0;
  uint64_t publisher_restarts = 0;
  uint64_t resyncs = 0;  // the whole tree replaced from a snapshot
  // Lost messages make the subscriber ask for a snapshot (a RadixChat
  // publisher answers a new subscription with one; vLLM and SGLang do not).
  uint64_t resync_requests = 0;
  bool resync_pending = false;  // asked, and no snapshot has come since
  // Attaching late: the messages replayed from the publisher's buffer, and
  // how many earlier ones it no longer held (their blocks' prefixes are
  // unknown: kv-block-tree.h groups them).
  uint64_t history_messages = 0;
  uint64_t history_unheld_messages = 0;
  bool connected = true;   // false once the stream ended (server gone)
  std::string last_error;  // the latest malformed message's or stream's reason
};

// One status line saying how much of the tree cannot be known: blocks
// stored before the subscriber attached (their prefixes unknown), messages
// the publisher no longer held or that were lost, and whether a resync was
// asked for and came. "view: complete" when nothing is unknown.
std::string unknown_status(const TreeStats& tree, const SubscriberStats& feed);

class BlockFeed {
 public:
  virtual ~BlockFeed() = default;
  // Waits up to timeout_ms for events and applies all that are ready.
  virtual void poll(int timeout_ms) = 0;
  virtual const BlockTree& tree() const = 0;
  virtual SubscriberStats stats() const = 0;

  // Called inside poll() with every batch right after tree() applied it,
  // in the order applied (replayed batches included): cache-watch --record
  // writes the stream from here. Unset: nothing is called.
  using BatchObserver = std::function<void(const Batch&)>;
  void set_batch_observer(BatchObserver observer) { observer_ = std::move(observer); }

 protected:
  BatchObserver observer_;
};

}  // namespace rc::kv_events
