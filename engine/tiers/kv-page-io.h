// Moves the K and V of one block between the pool and a block payload
// (block-format.h gives the layout: per layer, the block's K rows, then its
// V rows). A block spans block_tokens / page_size pages of the pool, in
// sequence order. The copies go through Backend::download / upload, so the
// same calls serve a host pool (a memcpy) and a device pool.
//
// Called by the engine thread, which owns the pool; the pages must be held
// or locked by the caller so nothing writes them meanwhile.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "backend.h"
#include "radixchat/status.h"

namespace rc::tiers {

// The payload of the block whose positions sit in `pages` (each page_size
// tokens, in order); empty when a page is outside the pool.
std::vector<uint8_t> pack_block(kernels::Backend& backend, kernels::KvPool& pool,
                                std::span<const int32_t> pages);

// Writes the block's positions [skip_tokens, block_tokens) into `pages`
// (skip_tokens a multiple of the page size; the pages cover exactly the
// rest). invalid_argument, pool unchanged, for a page out of range or a
// payload or page count that does not fit.
Status unpack_block(kernels::Backend& backend, kernels::KvPool& pool,
                    std::span<const int32_t> pages, std::span<const uint8_t> payload,
                    int block_tokens, int skip_tokens);

}  // namespace rc::tiers
