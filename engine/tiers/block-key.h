// Keys of the KV blocks stored below the pool (docs/architecture.md section 8).
//
// A block is `block_tokens` consecutive tokens of a sequence (a whole
// number of pool pages, aligned to the sequence start) and the K and V of
// every layer at their positions. The pool's page size is not part of it,
// so pools with different page sizes share blocks. Its key must change whenever the bytes a
// block would hold could differ, so a key is the hash of
//   * a keyspace: the model fingerprint (model-fingerprint.h), the KV element
//     type, the KV shape (layers, KV heads, head dim), the block size and every
//     RoPE setting (kernels::RopeConfig);
//   * the chain: the parent block's key (zero for the first block) and this
//     block's tokens, so a key names the whole prefix, as vLLM's block hashes do.
// Two models, or one model under two KV types or block sizes, therefore never
// share a key. The tenant (a user-chosen namespace for a shared Redis) is not
// hashed in: it prefixes the Redis key instead (redis-store.h), so one
// tenant's blocks stay readable under any store.
//
// Pure functions over values; any thread.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "backend.h"
#include "radixchat/status.h"

namespace rc::tiers {

// A 128-bit hash (XXH3-128), stored big-end first so its hex reads the same everywhere.
struct Hash128 {
  std::array<uint8_t, 16> bytes{};
  bool operator==(const Hash128&) const = default;
  bool is_zero() const;
  // 32 lowercase hex digits.
  std::string hex() const;
  // The inverse of hex(); invalid_argument for anything but 32 hex digits.
  static Result<Hash128> from_hex(std::string_view hex);
};

using BlockKey = Hash128;

// For unordered containers of keys: the first eight bytes (a hash already).
struct BlockKeyHash {
  size_t operator()(const BlockKey& k) const;
};

struct Keyspace {
  Hash128 model;  // model_fingerprint()
  kernels::DType kv_type = kernels::DType::f16;
  int32_t n_layers = 0;
  int32_t n_kv_heads = 0;
  int32_t head_dim = 0;
  int32_t block_tokens = 1;
  kernels::RopeConfig rope;
  bool operator==(const Keyspace&) const = default;

  // The same fields from a pool shape, with blocks of `block_tokens` tokens.
  static Keyspace of(const Hash128& model, const kernels::KvPoolShape& shape,
                     const kernels::RopeConfig& rope, int block_tokens);
  // invalid_argument unless the shape is positive and kv_type a KV type.
  Status validate() const;
  // The K+V bytes of one block.
  int64_t block_payload_bytes() const;
  // The hash of every field, in a fixed little-endian encoding.
  Hash128 id() const;
};

// key = XXH3-128(keyspace id, parent key, tokens as little-endian int32).
BlockKey chain_key(const Keyspace& space, const BlockKey& parent, std::span<const int32_t> tokens);

// The keys of the whole blocks of `tokens` (a trailing partial page has none).
std::vector<BlockKey> chain_keys(const Keyspace& space, std::span<const int32_t> tokens);

}  // namespace rc::tiers
