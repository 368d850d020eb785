#include "tiers/tier-sweep.h"

#include <deque>
#include <unordered_map>
#include <unordered_set>

namespace rc::tiers {
namespace {

struct Held {
  BlockKey parent;
  std::vector<int32_t> tokens;
};

using KeySet = std::unordered_set<BlockKey, BlockKeyHash>;

// A run of the needle inside `block`, or across its start with its parent's tail.
bool holds_run(const std::unordered_map<BlockKey, Held, BlockKeyHash>& blocks, const Held& block,
               const TokenWindows& windows) {
  if (windows.first_match(block.tokens)) return true;
  auto parent = blocks.find(block.parent);
  if (block.parent.is_zero() || parent == blocks.end() || windows.width() < 2) return false;
  const std::vector<int32_t>& before = parent->second.tokens;
  const size_t tail = std::min(before.size(), windows.width() - 1);
  std::vector<int32_t> seam(before.end() - std::ptrdiff_t(tail), before.end());
  seam.insert(seam.end(), block.tokens.begin(),
              block.tokens.begin() + std::ptrdiff_t(std::min(block.tokens.size(), tail)));
  return windows.first_match(seam).has_value();
}

}  // namespace

Result<std::vector<BlockKey>> blocks_holding(BlockStore& store, const TokenWindows& windows) {
  std::unordered_map<BlockKey, Held, BlockKeyHash> blocks;
  Status read = store.for_each_block([&](const Block& b) {
    blocks.emplace(b.key, Held{b.parent, b.tokens});
  });
  if (!read.ok()) return read;
  if (windows.empty()) return std::vector<BlockKey>{};
  std::unordered_map<BlockKey, std::vector<BlockKey>, BlockKeyHash> children;
  std::deque<BlockKey> todo;
  for (const auto& [key, block] : blocks) {
    if (!block.parent.is_zero()) children[block.parent].push_back(key);
    if (holds_run(blocks, block, windows)) todo.push_back(key);
  }
  KeySet found;
  std::vector<BlockKey> out;
  while (!todo.empty()) {
    const BlockKey key = todo.front();
    todo.pop_front();
    if (!found.insert(key).second) continue;
    out.push_back(key);
    if (auto c = children.find(key); c != children.end())
      todo.insert(todo.end(), c->second.begin(), c->second.end());
  }
  return out;
}

}  // namespace rc::tiers
