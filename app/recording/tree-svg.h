// The cache tree as a standalone SVG document (slides, bug reports):
// `radixchat-cli cache-export`. Laid out left to right: a node's column is
// its depth, leaves take one row each in tree order, and a parent sits at
// the middle of its children. Every visible node is one
// <g class="node" data-id=...> holding its box and label; edges are
// <path class="edge">. Locked nodes are drawn orange, pinned ones blue.
// Every box shows its token count at its right end (<text class="count">),
// and no box is blank: the start-of-sequence token reads "BOS" and the
// chat templates' control tokens their marks (readable_control_tokens,
// radixchat/cache-text.h: "<|end|>" reads "⏎ end"), line breaks "↵", a
// label of spaces only "␠", and tokens that print nothing "⟨special⟩".
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "radixchat/cache.h"

namespace rc::recording {

struct SvgOptions {
  size_t max_nodes = 4000;  // beyond: the deepest-first rest is left out and counted
  size_t label_chars = 20;  // leaves room for the token count
  int32_t bos = -1;         // the start-of-sequence token id; -1: none
  std::string title;
  // Nodes that stand for a run of KV-event blocks (chain-fold.h): their
  // label starts with the run's length, "144 blocks: ...".
  std::unordered_map<NodeId, size_t> blocks;
};

// `text` turns a node's tokens into its label (ids when unset). Returns
// the document; `drawn` (when given) receives the number of node elements.
std::string tree_svg(const CacheSnapshot& tree,
                     const std::function<std::string(const std::vector<int32_t>&)>& text,
                     const SvgOptions& options = {}, size_t* drawn = nullptr);

}  // namespace rc::recording
