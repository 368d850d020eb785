#include "tiers/block-key.h"

#include <xxhash.h>

#include <cstring>
#include <vector>

#include "tiers/byte-codec.h"

namespace rc::tiers {

namespace {

Hash128 from_xxh(XXH128_hash_t h) {
  XXH128_canonical_t c;
  XXH128_canonicalFromHash(&c, h);
  Hash128 out;
  std::memcpy(out.bytes.data(), c.digest, 16);
  return out;
}

}  // namespace

bool Hash128::is_zero() const {
  for (uint8_t b : bytes)
    if (b != 0) return false;
  return true;
}

std::string Hash128::hex() const {
  static const char* digits = "0123456789abcdef";
  std::string s(32, '0');
  for (int i = 0; i < 16; ++i) {
    s[2 * i] = digits[bytes[i] >> 4];
    s[2 * i + 1] = digits[bytes[i] & 15];
  }
  return s;
}

Result<Hash128> Hash128::from_hex(std::string_view hex) {
  if (hex.size() != 32)
    return Status(StatusCode::invalid_argument,
                  "a block key is 32 hex digits, got '" + std::string(hex.substr(0, 40)) + "'");
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  Hash128 h;
  for (int i = 0; i < 16; ++i) {
    int hi = nibble(hex[2 * i]), lo = nibble(hex[2 * i + 1]);
    if (hi < 0 || lo < 0)
      return Status(StatusCode::invalid_argument,
                    "a block key is lowercase hex, got '" + std::string(hex) + "'");
    h.bytes[i] = uint8_t(hi << 4 | lo);
  }
  return h;
}

size_t BlockKeyHash::operator()(const BlockKey& k) const {
  size_t h;
  std::memcpy(&h, k.bytes.data(), sizeof h);
  return h;
}

Keyspace Keyspace::of(const Hash128& model, const kernels::KvPoolShape& shape,
                      const kernels::RopeConfig& rope, int block_tokens) {
  Keyspace k;
  k.model = model;
  k.kv_type = shape.type;
  k.n_layers = shape.n_layers;
  k.n_kv_heads = shape.n_kv_heads;
  k.head_dim = shape.head_dim;
  k.block_tokens = block_tokens;
  k.rope = rope;
  return k;
}

Status Keyspace::validate() const {
  if (!kernels::is_kv_type(kv_type))
    return Status(StatusCode::invalid_argument, "block keyspace: not a KV element type");
  if (n_layers <= 0 || n_kv_heads <= 0 || head_dim <= 0 || block_tokens <= 0)
    return Status(StatusCode::invalid_argument,
                  "block keyspace: layers, KV heads, head dim and page size must be positive");
  return {};
}

int64_t Keyspace::block_payload_bytes() const {
  return 2 * int64_t(n_layers) * block_tokens * n_kv_heads * head_dim *
         kernels::kv_elem_bytes(kv_type);
}

Hash128 Keyspace::id() const {
  ByteWriter w;
  w.bytes("rc-keyspace-1");
  w.bytes({reinterpret_cast<const char*>(model.bytes.data()), 16});
  w.u32(uint32_t(kv_type));
  w.u32(uint32_t(n_layers));
  w.u32(uint32_t(n_kv_heads));
  w.u32(uint32_t(head_dim));
  w.u32(uint32_t(block_tokens));
  w.u32(uint32_t(rope.n_rot));
  w.f32(rope.freq_base);
  w.u32(rope.neox_halves ? 1 : 0);
  w.f32(rope.llama3_factor);
  w.f32(rope.llama3_low_freq_factor);
  w.f32(rope.llama3_high_freq_factor);
  w.u32(uint32_t(rope.llama3_original_context));
  return from_xxh(XXH3_128bits(w.data().data(), w.data().size()));
}

BlockKey chain_key(const Keyspace& space, const BlockKey& parent, std::span<const int32_t> tokens) {
  ByteWriter w;
  Hash128 sid = space.id();
  w.bytes({reinterpret_cast<const char*>(sid.bytes.data()), 16});
  w.bytes({reinterpret_cast<const char*>(parent.bytes.data()), 16});
  for (int32_t t : tokens) w.u32(uint32_t(t));
  return from_xxh(XXH3_128bits(w.data().data(), w.data().size()));
}

std::vector<BlockKey> chain_keys(const Keyspace& space, std::span<const int32_t> tokens) {
  std::vector<BlockKey> keys;
  if (space.block_tokens <= 0) return keys;
  BlockKey parent;
  for (size_t at = 0; at + size_t(space.block_tokens) <= tokens.size(); at += space.block_tokens) {
    parent = chain_key(space, parent, tokens.subspan(at, space.block_tokens));
    keys.push_back(parent);
  }
  return keys;
}

}  // namespace rc::tiers
