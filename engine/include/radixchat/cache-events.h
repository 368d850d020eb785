// Cache events: the stream a viewer (the ImGui panel, /v1/cache/events)
// follows to draw the KV cache tree without touching engine internals.
//
// Thread contract: the cache pushes events on the engine thread; any other
// thread may call CacheEventQueue::drain() at any time. The queue is the only
// cache object that is safe to share between threads.
//
// Replay contract (RadixCache): start from KvCache::snapshot(), skip events
// whose seq < snapshot.next_seq, apply the rest in seq order with the rules
// below, and the node set (ids, parents, token spans, pages, lock_ref,
// pin_ref, last_access, hits) equals a snapshot taken at the same point.
// A consumer that sees a gap in seq, or `overflowed`, resyncs from a snapshot.
//
//   insert  node = new leaf (or the existing end node when token_count == 0),
//           parent, tokens/pages = the leaf's span. Then every node from
//           `node` up to the root gets last_access = tick.
//   split   node = new upper node (takes the first token_count tokens and
//           page_count pages of `other`), parent = old parent of `other`,
//           other = the node that was split (keeps its id, becomes the lower
//           half and the only child of `node`). The upper copies lock_ref,
//           pin_ref and hits of `other`; both halves get last_access = tick.
//   merge   node = surviving child, other = its former parent (removed),
//           parent = the new parent. The child's span becomes other's span
//           followed by its own; hits = max of the two; last_access is equal.
//   match   node = deepest matched node, token_count = matched tokens. Every
//           node from `node` up to the root gets last_access = tick, hits + 1.
//   lock / unlock / pin / unpin
//           node = handle's node; lock_ref (pin_ref) of every node from `node`
//           up to, not including, the root changes by one.
//   evict   node = the evicted leaf (removed), parent = its parent.
//   reset   every node but the root is removed; root last_access = tick.
//   demote  node = a leaf about to be evicted (its evict event follows),
//           token_count = how many of its tokens the tiers below the pool
//           hold (docs/architecture.md section 8), so the eviction loses
//           nothing. No change to the node set.
//   promote node = the node that ends where tokens loaded back from a tier
//           end, token_count = tokens loaded. Follows the insert that put
//           them in the tree. No change to the node set.
//   draft   a draft was verified (drafted decoding, docs/architecture.md
//           section 20): node = the deepest tree node its tokens came from
//           (KvCache::peek_continuation; with its ancestors it spells the
//           whole drafted text), kNoNode for a draft from the request's own
//           prompt or whose node went before the draft was verified;
//           parent = that node's parent; token_count = tokens drafted,
//           page_count = how many of them the model kept (the rest were
//           wasted). No change to the node set.
//
// HashCache and OffCache emit the same kinds, but only RadixCache promises
// exact replay (a hash block can be evicted before its children).
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

namespace rc {

using Token = int32_t;   // token id
using PageId = int32_t;  // index of a page in the KV pool (page tables are int32)
using NodeId = uint32_t;
inline constexpr NodeId kNoNode = UINT32_MAX;
inline constexpr NodeId kRootNode = 0;

enum class CacheEventKind : uint8_t {
  insert,
  split,
  merge,
  match,
  lock,
  unlock,
  evict,
  reset,
  pin,
  unpin,
  demote,
  promote,
  draft
};
inline constexpr CacheEventKind kLastCacheEventKind = CacheEventKind::draft;
const char* cache_event_kind_name(CacheEventKind kind);

struct CacheEvent {
  uint64_t seq = 0;  // dense, starts at 0; assigned even to dropped events
  CacheEventKind kind = CacheEventKind::insert;
  NodeId node = kNoNode;
  NodeId parent = kNoNode;
  NodeId other = kNoNode;  // split: the node split; merge: the node absorbed
  uint32_t token_count = 0;
  uint32_t page_count = 0;
  uint64_t tick = 0;  // cache clock when the event happened
  // Only insert events carry their span (the viewer cannot know it otherwise).
  std::vector<Token> tokens;
  std::vector<PageId> pages;
};

// Bounded multi-thread queue. push_batch() never blocks for long and never
// grows past `capacity`: on overflow the new events are dropped and the
// overflow flag is raised until the next drain().
class CacheEventQueue {
 public:
  explicit CacheEventQueue(size_t capacity = 1 << 16) : capacity_(capacity) {}

  // Any thread. Moves all queued events into `out` (appending) and returns
  // whether events were lost since the previous drain (then resync).
  bool drain(std::vector<CacheEvent>& out);
  // Engine thread. Appends `batch` (moved from, left empty).
  void push_batch(std::vector<CacheEvent>& batch);
  size_t capacity() const { return capacity_; }

 private:
  std::mutex mu_;
  std::vector<CacheEvent> buf_;
  size_t capacity_;
  bool overflowed_ = false;
};

}  // namespace rc
