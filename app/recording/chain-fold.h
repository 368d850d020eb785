// A recording made from KV events (cache-watch --record) holds one node
// per block, so a 144-block prompt is a 144-node chain. For drawing, runs
// of single-child nodes are folded into one node, as the local radix tree
// keeps them: tokens and pages concatenated, hits and references the
// highest of the run. Called by cache-export before tree_svg(); pure.
#pragma once

#include <cstddef>
#include <unordered_map>

#include "radixchat/cache.h"
#include "recording/recording-reader.h"

namespace rc::recording {

struct FoldedTree {
  CacheSnapshot tree;
  std::unordered_map<NodeId, size_t> blocks;  // folded node -> blocks in it (> 1 only)
};

// Each folded node keeps the id of the run's first node.
FoldedTree fold_single_child_chains(const CacheSnapshot& tree);

// True for a recording whose nodes are KV-event blocks (block-recording.h).
// Such a recording knows no pool size, model or requests.
bool is_block_recording(const RecordingSummary& summary);

}  // namespace rc::recording
