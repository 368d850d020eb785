// Small keyspaces and blocks with deterministic contents for the tier tests.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "tiers/block-format.h"

namespace rc::tiers::testing {

inline Keyspace small_space(uint8_t model_byte = 1, kernels::DType kv = kernels::DType::f16,
                            int page_size = 4) {
  Keyspace s;
  s.model.bytes.fill(model_byte);
  s.kv_type = kv;
  s.n_layers = 2;
  s.n_kv_heads = 2;
  s.head_dim = 8;
  s.page_size = page_size;
  s.rope.n_rot = 8;
  return s;
}

// A block whose tokens and payload follow from `seed`, chained to `parent`.
inline Block make_block(const Keyspace& s, const BlockKey& parent, uint32_t seed) {
  std::mt19937 rng(seed);
  Block b;
  b.parent = parent;
  for (int i = 0; i < s.page_size; ++i) b.tokens.push_back(int32_t(rng() % 32000));
  b.payload.resize(size_t(s.block_payload_bytes()));
  for (uint8_t& x : b.payload) x = uint8_t(rng());
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

}  // namespace rc::tiers::testing
