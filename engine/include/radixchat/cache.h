// The KV cache: which token prefixes have their K/V in which pages of the
// pool, so a request prefills only the suffix nobody computed before.
//
// Three policies behind one interface (KvCache below: the core protocol,
// PrefixCache, and small interfaces for observers, upkeep, tier probes and
// draft peeks), so workloads can compare them:
//   radix  compressed trie over token ids (RadixAttention, SGLang), LRU over
//          unlocked leaves, splits on partial matches, merges after eviction.
//   hash   APC-style blocks of page_size tokens keyed by
//          hash(parent hash, block tokens) with an LRU queue of unreferenced
//          cached blocks (vLLM prefix caching).
//   off    no reuse: match_prefix always returns 0 tokens. Inserted
//          sequences are kept only until eviction reclaims their pages.
//
// The cache owns page *indices* only; the runtime owns the KV memory those
// indices address (kernels/backend.h: page p holds tokens
// [p * page_size, (p + 1) * page_size) of K and V for every layer).
//
// Thread contract: a KvCache is single-threaded. The engine thread creates it
// and is the only caller of every method below. The one exception is the
// event queue returned by events(): CacheEventQueue::drain() may run on any
// thread (GUI, server) concurrently with the engine thread.
//
// Failure contract: no method throws. Normal states (a full pool) and caller
// mistakes (a stale handle, a page not held) come back as Status values and
// leave the cache unchanged unless the comment says otherwise. A broken
// internal invariant is a bug: RC_ASSERT aborts with file and line.
//
// The request protocol (docs/architecture.md section 5; SGLang's
// cache_unfinished_req), all of it PrefixCache's:
//   m = match_prefix(tokens)           // hit: m.tokens, m.pages, m.node
//   lock(m.node)                       // m.pages cannot be evicted now
//   alloc_pages(need, table)           // evicts LRU leaves when short
//   ... prefill tokens[m.tokens:] into m.pages + new pages ...
//   r = insert(aligned_tokens, table)  // frees pages that were duplicates
//   lock(r.node); unlock(m.node)       // keep the longer prefix protected
//   free_pages(unaligned tail pages)   // partial page, never cached
//   ... when the request is done: unlock(r.node)
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "radixchat/cache-events.h"
#include "radixchat/eviction.h"
#include "radixchat/status.h"

namespace rc {

enum class CachePolicy { radix, hash, off };
const char* cache_policy_name(CachePolicy policy);
// "radix", "hash" or "off"; anything else is invalid_argument.
Result<CachePolicy> parse_cache_policy(std::string_view name);

// Shape of the K/V a page holds, for byte accounting only.
struct KvShape {
  int layers = 0;
  int kv_heads = 0;
  int head_dim = 0;
  int dtype_bytes = 2;  // 2 for fp16/bf16, 4 for fp32
  // K and V of every layer for one token.
  int64_t bytes_per_token() const {
    return int64_t(layers) * kv_heads * head_dim * dtype_bytes * 2;
  }
};

struct CacheConfig {
  CachePolicy policy = CachePolicy::radix;
  int page_size = 1;        // tokens per page (1 = SGLang, 16 = vLLM blocks)
  int64_t total_pages = 0;  // pool size; pool tokens = total_pages * page_size
  KvShape shape;            // optional; zero means bytes are not reported
  bool events = true;       // emit CacheEvents (off for pure benchmarks)
  size_t event_capacity = 1 << 16;
  // Merge a parent left with one child after eviction (docs/architecture.md section 4).
  // Off reproduces the plain SGLang tree, node for node.
  bool merge_after_evict = true;
  Eviction eviction = Eviction::lru;  // radix policy only
};

// Opaque reference to a tree node. `gen` makes a handle to an evicted (and
// possibly reused) node fail with invalid_argument instead of corrupting.
struct NodeHandle {
  NodeId id = kRootNode;
  uint32_t gen = 0;
  bool operator==(const NodeHandle&) const = default;
};

// CacheDraftSource::peek_continuation's answer.
struct Continuation {
  std::vector<Token> tokens;
  NodeHandle node{kNoNode, 0};  // deepest node the tokens come from
};

struct MatchResult {
  int64_t tokens = 0;         // matched prefix length (page-aligned)
  std::vector<PageId> pages;  // tokens / page_size pages, in order
  NodeHandle node;            // deepest matched node (root when tokens == 0)
};

struct InsertResult {
  int64_t cached_tokens = 0;  // prefix of the key that was already cached
  std::vector<PageId> pages;  // canonical pages for the whole key
  NodeHandle node;            // node ending exactly at the key's end
};

struct CacheStats {
  int64_t total_pages = 0;
  int64_t free_pages = 0;
  int64_t evictable_pages = 0;  // cached, unlocked (includes pinned)
  int64_t protected_pages = 0;  // cached and locked, or held by callers
  int64_t held_pages = 0;       // allocated, not yet inserted or freed
  int64_t pinned_pages = 0;     // evictable but kept until nothing else is left
  int64_t cached_tokens = 0;    // tokens in the tree
  int64_t nodes = 0;            // excluding the root
  uint64_t match_calls = 0;
  uint64_t prompt_tokens = 0;    // sum of match_prefix key lengths
  uint64_t hit_tokens = 0;       // sum of matched lengths
  uint64_t inserts = 0;          // insert calls
  uint64_t inserted_tokens = 0;  // tokens newly added to the tree
  uint64_t evictions = 0;        // nodes (hash: blocks) evicted
  uint64_t evicted_tokens = 0;
  uint64_t splits = 0;
  uint64_t merges = 0;
  uint64_t demoted_tokens = 0;   // evicted tokens the tiers below the pool still hold
  uint64_t promoted_tokens = 0;  // tokens loaded back from those tiers
  int64_t bytes_per_page = 0;    // from CacheConfig::shape, 0 when unknown
  double hit_rate() const { return prompt_tokens ? double(hit_tokens) / prompt_tokens : 0.0; }
  double mean_match_tokens() const { return match_calls ? double(hit_tokens) / match_calls : 0.0; }
};

struct CacheNodeInfo {
  NodeId id = kRootNode;
  NodeId parent = kNoNode;
  std::vector<Token> tokens;
  std::vector<PageId> pages;
  uint32_t lock_ref = 0;
  uint32_t pin_ref = 0;  // > 0: pinned (priority prefix)
  uint64_t last_access = 0;
  uint64_t hits = 0;  // match_prefix calls whose path went through here
  bool operator==(const CacheNodeInfo&) const = default;
};

struct CacheSnapshot {
  CachePolicy policy = CachePolicy::radix;
  // Per nodes[i]: how many of its tokens the tiers below the pool hold (in
  // whole blocks), filled by the engine when it has tiers; empty otherwise.
  // Not part of event replay (events carry only demote/promote counts).
  std::vector<uint32_t> held_below;
  int page_size = 1;
  int64_t total_pages = 0;
  uint64_t tick = 0;
  uint64_t next_seq = 0;             // seq of the first event not reflected here
  std::vector<CacheNodeInfo> nodes;  // sorted by id; nodes[0] is the root
  CacheStats stats;
};

// ---------------------------------------------------------------------------
// The core protocol: what serving one request needs (docs/architecture.md
// section 5), in the order the request protocol at the top of this file
// calls it. Match, lock, allocate, insert, evict and check; nothing else. A
// caller that only serves requests (a replay, a benchmark, the layout
// advisor) takes a PrefixCache&.
class PrefixCache {
 public:
  virtual ~PrefixCache() = default;

  // The settings the cache was made with; page_size is the unit of every
  // length below.
  virtual const CacheConfig& config() const = 0;

  // Match. Longest cached prefix of `tokens`, page-aligned, with its pages
  // and the deepest node it ends in. Marks the path used now (a node split
  // by a partial match counts as used, both halves) and counts toward the
  // hit-rate stats. Never fails; 0 tokens (the root) is a valid answer.
  virtual MatchResult match_prefix(std::span<const Token> tokens) = 0;

  // Lock. Protects the path root..node from eviction (counted, may nest);
  // every lock needs one unlock. invalid_argument for a stale handle, and
  // for an unlock below zero, with the cache unchanged.
  virtual Status lock(NodeHandle node) = 0;
  virtual Status unlock(NodeHandle node) = 0;

  // Allocate. Appends exactly n pages to `out`, evicting LRU leaves when the
  // free list is short. no_pages (and `out` unchanged) when even eviction
  // cannot make room: everything left is locked or held. The pages are held
  // by the caller until insert() takes them or free_pages() returns them.
  virtual Status alloc_pages(int64_t n, std::vector<PageId>& out) = 0;
  // Returns held pages (e.g. the unaligned tail) to the free list.
  // invalid_argument, with nothing freed, if any page is not held.
  virtual Status free_pages(std::span<const PageId> pages) = 0;
  // Pages alloc_pages can hand out without evicting.
  virtual int64_t free_page_count() const = 0;

  // Insert. Caches `tokens` (length a multiple of page_size) with `pages`
  // (tokens / page_size of them): for the prefix already cached, the handed
  // pages are either the cache's own (from match_prefix) or held duplicates,
  // which are freed; the rest become owned by the cache. The result names the
  // canonical pages and the node ending at the key's end, so the caller can
  // lock it. invalid_argument (cache unchanged apart from recency) on a
  // misaligned key, a page count mismatch or a page that is not held.
  virtual Result<InsertResult> insert(std::span<const Token> tokens,
                                      std::span<const PageId> pages) = 0;

  // Evict. Whole LRU leaves (unpinned first) until at least n_tokens tokens
  // are freed or nothing evictable is left; never a locked node. Returns the
  // tokens evicted. alloc_pages calls it itself; a caller may evict ahead.
  virtual int64_t evict(int64_t n_tokens) = 0;

  // Check. ok, or internal naming the first violated invariant of
  // docs/architecture.md section 5. O(nodes + pages): for tests and
  // debugging, not the hot path.
  virtual Status check_integrity() const = 0;
};

// ---------------------------------------------------------------------------
// Observers: reading the cache without changing it, for the scheduler's
// ordering, the stats and everyone who draws the tree (docs/architecture.md
// section 6).
class CacheView {
 public:
  virtual ~CacheView() = default;

  // What match_prefix would return as `tokens`, without touching recency,
  // stats, events or the tree's shape. For scheduling order (longest cached
  // prefix first) over many waiting requests.
  virtual int64_t peek_prefix(std::span<const Token> tokens) const = 0;
  virtual CacheSnapshot snapshot() const = 0;
  virtual CacheStats stats() const = 0;
  virtual int64_t node_count() const = 0;  // excluding the root
  // The only member other threads may touch (through drain()).
  virtual CacheEventQueue& events() = 0;
};

// ---------------------------------------------------------------------------
// Upkeep between requests: pinning saved prompts, purging deleted ones,
// starting over.
class CacheUpkeep {
 public:
  virtual ~CacheUpkeep() = default;

  // Priority prefixes: LRU skips pinned nodes until nothing else is left.
  // invalid_argument for a stale handle, and for an unpin below zero.
  virtual Status pin(NodeHandle node) = 0;
  virtual Status unpin(NodeHandle node) = 0;

  // Drops every cached node. invalid_argument if any node is locked (a
  // request in flight still reads those pages). Held pages stay held.
  virtual Status reset() = 0;

  // Purging what only deleted prompts used (docs/architecture.md section 8).
  // Drops, with everything below them, the nodes a path of `gone` reaches
  // that no path of `kept` reaches and no request or pin holds: a node below
  // such a node extends a prefix only the gone prompts had. A node that a
  // kept path enters and leaves partway is split there first, so the shared
  // part stays and the rest can go. Emits an evict event per node dropped
  // (not counted as LRU evictions). Appends the root-to-node tokens of each
  // dropped node to `dropped_paths` and returns the tokens dropped.
  virtual int64_t forget(std::span<const std::vector<Token>> gone,
                         std::span<const std::vector<Token>> kept,
                         std::vector<std::vector<Token>>& dropped_paths) = 0;
};

// ---------------------------------------------------------------------------
// Tier probes: the cache tiers below the pool (docs/architecture.md section
// 8). Set and called by the engine thread only; a cache without tiers
// ignores both.
class CacheTierHooks {
 public:
  virtual ~CacheTierHooks() = default;

  // `probe(path, from)` says how many tokens of path[from:] the tiers below
  // hold; a cache that emits events calls it for each leaf it evicts and,
  // when that is not zero, emits a demote event first. Set once.
  using TierProbe = std::function<int64_t(std::span<const Token> path, int64_t from)>;
  virtual void set_tier_probe(TierProbe probe) { (void)probe; }
  // Emits a promote event: `node` now ends where `tokens` tokens loaded
  // back from a tier end. Stale handles are ignored.
  virtual void note_promoted(NodeHandle node, int64_t tokens) {
    (void)node;
    (void)tokens;
  }
};

// ---------------------------------------------------------------------------
// Draft peeks: what drafted decoding reads from the tree and reports back
// (docs/architecture.md section 20). Neither changes the tree.
class CacheDraftSource {
 public:
  virtual ~CacheDraftSource() = default;

  // Up to max_tokens tokens the cache holds right after the whole of
  // `tokens`: the rest of the node the match ends in, then down the child
  // with the most hits (the most recent on ties) — what earlier requests
  // with this exact beginning went on with, to draft from — and the
  // deepest node they come from (whose root path holds them all: a viewer
  // marks it). Empty, with no node, when `tokens` is not cached whole, or
  // the policy keeps no token order (hash, off). Like peek_prefix, touches
  // nothing.
  virtual Continuation peek_continuation(std::span<const Token> tokens, size_t max_tokens) const {
    (void)tokens;
    (void)max_tokens;
    return {};
  }

  // Emits a draft event after a draft of `drafted` tokens was verified and
  // its first `accepted` kept: `from` is Continuation::node for a draft
  // from the tree, a handle with id kNoNode for one from the prompt; a
  // stale handle (its node evicted meanwhile) is reported as kNoNode.
  virtual void note_draft(NodeHandle from, int64_t drafted, int64_t accepted) {
    (void)from;
    (void)drafted;
    (void)accepted;
  }
};

// The whole cache, as make_kv_cache returns it and the engine owns it: the
// core protocol and each small interface above. Radix, hash and off
// implement it; a caller takes the smallest part it needs.
class KvCache : public PrefixCache,
                public CacheView,
                public CacheUpkeep,
                public CacheTierHooks,
                public CacheDraftSource {};

// invalid_argument for page_size < 1, total_pages < 1 or > 2^31 - 1.
Result<std::unique_ptr<KvCache>> make_kv_cache(const CacheConfig& config);

}  // namespace rc
