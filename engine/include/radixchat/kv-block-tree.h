// The remote cache as a forest of blocks, rebuilt from KV events: each block
// is keyed by (data-parallel rank, hash) and links to its parent's hash, so
// a subscriber sees the same prefix tree the publisher's cache holds.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "radixchat/kv-events.h"

namespace rc::kv_events {

struct Block {
  int rank = 0;
  BlockHash hash;
  std::optional<BlockHash> parent;  // as sent; may name a block not held
  std::vector<int64_t> token_ids;
  std::optional<int64_t> lora_id;
  std::string medium;
};

struct TreeStats {
  uint64_t blocks = 0;
  uint64_t stored_events = 0;
  uint64_t removed_events = 0;
  uint64_t cleared_events = 0;
  uint64_t unknown_events = 0;
  uint64_t removed_unknown_blocks = 0;  // BlockRemoved naming a block not held
  uint64_t roots = 0;                   // blocks whose parent is not held
  uint64_t max_depth_blocks = 0;        // longest root-to-leaf chain
  // Of the roots, those naming a parent this tree never held (stored before
  // the subscriber attached, or under a block whose events were lost), and
  // every block below them: the part of the tree whose prefix is unknown.
  uint64_t unknown_parent_roots = 0;
  uint64_t unknown_parent_blocks = 0;
};

class BlockTree {
 public:
  // Applies every event of a decoded batch, in order, to the batch's rank.
  // A BlockStored with several hashes is a chain: each block's parent is the
  // one before it, and token_ids are split block_size at a time.
  // AllBlocksCleared drops the batch's rank's blocks.
  void apply(const Batch& batch);

  const Block* find(int rank, const BlockHash& hash) const;
  size_t size() const { return blocks_.size(); }
  TreeStats stats() const;  // counts plus roots/depth computed now

  // Roots first, then children, ordered by (rank, hash); the order the text
  // view prints them. Each entry is a block and its depth (root = 1). In
  // each rank the true roots (no parent) come before the blocks whose
  // parent is unknown (has_unknown_parent).
  std::vector<std::pair<const Block*, int>> walk() const;
  // True when `b` names a parent this tree does not hold.
  bool has_unknown_parent(const Block& b) const;

  // Indented text: one line per radix node, where a run of single-child
  // blocks is folded into one line (SGLang with page size 1 sends a block per
  // token). Blocks with an unknown parent are grouped, per rank, under one
  // "(stored before you attached: ...)" line with their counts, never shown
  // as if they began at the root. At most max_tokens ids are shown per line; with `text` (a
  // vocabulary), the line's tokens as quoted text instead (escaped, at most
  // 4 * max_tokens bytes).
  using TokenText = std::function<std::string(const std::vector<int64_t>&)>;
  std::string to_text(size_t max_tokens = 16, const TokenText& text = {}) const;

 private:
  static std::string key(int rank, const BlockHash& hash);
  std::unordered_map<std::string, Block> blocks_;
  TreeStats counts_;
};

}  // namespace rc::kv_events
