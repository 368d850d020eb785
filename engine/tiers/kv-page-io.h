// Moves one page of a host-memory KV pool to and from a block payload
// (block-format.h gives the layout: per layer, the page's K rows, then its
// V rows). Only for pools whose memory is host memory (the CPU backends,
// or a host staging pool); a device pool is staged through
// Backend::download/upload by its caller.
//
// Called by the engine thread, which owns the pool; the page must be held
// by the caller so nothing writes it meanwhile.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "backend.h"
#include "radixchat/status.h"

namespace rc::tiers {

// The payload of `page` (Keyspace::block_payload_bytes() bytes); empty when
// the page is outside the pool.
std::vector<uint8_t> pack_page(kernels::KvPool& pool, int32_t page);
// invalid_argument (pool unchanged) for a page out of range or a payload of the wrong size.
Status unpack_page(kernels::KvPool& pool, int32_t page, std::span<const uint8_t> payload);

}  // namespace rc::tiers
