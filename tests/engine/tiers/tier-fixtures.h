// Small keyspaces and blocks with deterministic contents for the tier tests.
#pragma once

#include <cstdint>
#include <random>
#include <span>
#include <vector>

#include <memory>
#include "backend.h"

#include "tiers/block-format.h"
#include "tiers/block-seal.h"

namespace rc::tiers::testing {

inline Keyspace small_space(uint8_t model_byte = 1, kernels::DType kv = kernels::DType::f16,
                            int block_tokens = 4) {
  Keyspace s;
  s.model.bytes.fill(model_byte);
  s.kv_type = kv;
  s.n_layers = 2;
  s.n_kv_heads = 2;
  s.head_dim = 8;
  s.block_tokens = block_tokens;
  s.rope.n_rot = 8;
  return s;
}

// A fixed sealing key; `fill` picks another one.
inline std::shared_ptr<const SealKey> test_key(uint8_t fill = 7) {
  auto key = std::make_shared<SealKey>();
  key->bytes.fill(fill);
  return key;
}

// Clears the top exponent bit of every element (its last byte's 0x40 in
// f16, bf16 and f32 alike), so random bytes are finite values: stores refuse
// a block holding an infinity or a NaN (block-seal.h).
inline void keep_finite(kernels::DType type, std::span<uint8_t> bytes) {
  const size_t elem = size_t(kernels::kv_elem_bytes(type));
  for (size_t i = elem - 1; i < bytes.size(); i += elem) bytes[i] &= uint8_t(~0x40);
}

// A block whose tokens and payload follow from `seed`, chained to `parent`.
inline Block make_block(const Keyspace& s, const BlockKey& parent, uint32_t seed) {
  std::mt19937 rng(seed);
  Block b;
  b.parent = parent;
  for (int i = 0; i < s.block_tokens; ++i) b.tokens.push_back(int32_t(rng() % 32000));
  b.payload.resize(size_t(s.block_payload_bytes()));
  for (uint8_t& x : b.payload) x = uint8_t(rng());
  keep_finite(s.kv_type, b.payload);
  b.key = chain_key(s, parent, b.tokens);
  return b;
}

// A chain of n blocks (each the parent of the next).
inline std::vector<Block> make_chain(const Keyspace& s, int n, uint32_t seed) {
  std::vector<Block> out;
  BlockKey parent;
  for (int i = 0; i < n; ++i) {
    out.push_back(make_block(s, parent, seed * 1000 + uint32_t(i)));
    parent = out.back().key;
  }
  return out;
}

// A KV pool in plain vectors, filled with a pattern that differs per byte and layer.
class HostPool final : public kernels::KvPool {
 public:
  explicit HostPool(const kernels::KvPoolShape& s) : shape_(s) {
    size_t n = size_t(s.n_pages * s.page_size * s.n_kv_heads * s.head_dim *
                      kernels::kv_elem_bytes(s.type));
    for (int l = 0; l < s.n_layers; ++l) {
      k_.emplace_back(n);
      v_.emplace_back(n);
      for (size_t i = 0; i < n; ++i) {
        k_.back()[i] = uint8_t(i * 7 + l);
        v_.back()[i] = uint8_t(i * 13 + l);
      }
      keep_finite(s.type, k_.back());
      keep_finite(s.type, v_.back());
    }
  }
  const kernels::KvPoolShape& shape() const override { return shape_; }
  void* k(int layer) override { return k_[size_t(layer)].data(); }
  void* v(int layer) override { return v_[size_t(layer)].data(); }

 private:
  kernels::KvPoolShape shape_;
  std::vector<std::vector<uint8_t>> k_, v_;
};

}  // namespace rc::tiers::testing
