// The bytes of one stored KV block, the same on disk and in Redis.
//
// Layout, all integers little-endian:
//   magic "RCKVBLK\0" (8) | version u32 (1) | keyspace: model hash (16),
//   kv type u32, layers u32, KV heads u32, head dim u32, block tokens u32,
//   RoPE: n_rot u32, freq_base f32, neox u32, llama3 factor f32, low f32,
//   high f32, original context u32 | parent key (16) | block key (16) |
//   token count u32 | payload bytes u64 | tokens (count x i32) |
//   payload | XXH64 of every byte before it (8).
// The payload is the block's K and V, layer by layer, K before V, each
// [block_tokens][n_kv_heads * head_dim] elements of the KV type: the rows of
// the pool's arrays for the block's positions (kernels/backend.h), in order.
//
// decode_block() accepts a block only when every field agrees with the
// keyspace and key the caller expects, the key is the chain hash of the
// stored parent and tokens, the sizes are exactly right and the checksum
// matches. It reads only inside the given bytes and never trusts a length
// before checking it against them, so any input at all is safe to give it.
// Pure functions; any thread.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "radixchat/status.h"
#include "tiers/block-key.h"

namespace rc::tiers {

inline constexpr uint32_t kBlockFormatVersion = 1;

struct Block {
  BlockKey key;
  BlockKey parent;  // zero for the first block of a sequence
  std::vector<int32_t> tokens;
  std::vector<uint8_t> payload;
};

// Why a block was refused; corrupt_data Status messages name it too.
enum class BlockFault {
  none,
  truncated,    // shorter than its header or its stated sizes
  malformed,    // bad magic or version, impossible sizes, trailing bytes
  checksum,     // the bytes were changed after they were written
  foreign,      // well formed, but another keyspace or another key
  unauthentic,  // a sealed block that fails authentication (block-seal.h)
  nonfinite,    // a sealed block whose K or V holds an infinity or a NaN
};
const char* block_fault_name(BlockFault f);

// Fixed header bytes before the tokens.
size_t block_header_bytes();
// Total encoded bytes of a block in `space`.
size_t encoded_block_bytes(const Keyspace& space);

// invalid_argument when the block does not fit the keyspace (token count,
// payload size, key not the chain hash of parent and tokens).
Result<std::vector<uint8_t>> encode_block(const Keyspace& space, const Block& block);

struct Decoded {
  BlockFault fault = BlockFault::none;
  Status status;  // corrupt_data naming the fault, or ok
  Block block;    // valid when fault == none
};
Decoded decode_block(const Keyspace& space, const BlockKey& expected,
                     std::span<const uint8_t> bytes);

// A refusal: `fault` and a corrupt_data Status "KV block refused (<fault>): <what>".
Decoded refused_block(BlockFault fault, const std::string& what);

}  // namespace rc::tiers
