// The sweep behind a removed document's purge (docs/architecture.md
// section 21): which blocks of a store hold the document.
//
// A block holds it when a run of the document's tokens (token-windows.h)
// lies inside the block's tokens or across its start (the parent's last
// tokens and its first). Every block chained below such a block holds it
// too: its K and V were computed attending to the document. The chain is
// followed as far as the store holds it, so blocks whose parents the cache
// never names any more (orphans of an earlier purge, another layout of the
// same document) are found as well.
//
// Reads every block of the store once (for_each_block: no hits counted, no
// recency changed). Any thread the store allows.
#pragma once

#include <vector>

#include "radixchat/status.h"
#include "tiers/block-store.h"
#include "tiers/token-windows.h"

namespace rc::tiers {

// The keys to erase from `store`; an error when the store could not be read
// whole (what it names is not a complete answer then).
Result<std::vector<BlockKey>> blocks_holding(BlockStore& store, const TokenWindows& windows);

}  // namespace rc::tiers
