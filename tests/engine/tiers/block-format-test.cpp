// The block format: round trip, and every damaged or foreign block refused
// with the right reason, whatever the bytes (a randomized corruption run).
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "cpu/cpu-backends.h"
#include "tier-fixtures.h"
#include "tiers/block-format.h"
#include "tiers/kv-page-io.h"

namespace rc::tiers {
namespace {

using testing::HostPool;
using testing::make_block;
using testing::small_space;

TEST(BlockFormat, RoundTrip) {
  Keyspace s = small_space();
  Block b = make_block(s, BlockKey{}, 1);
  Result<std::vector<uint8_t>> bytes = encode_block(s, b);
  ASSERT_TRUE(bytes.ok()) << bytes.status().to_string();
  EXPECT_EQ(bytes.value().size(), encoded_block_bytes(s));
  Decoded d = decode_block(s, b.key, bytes.value());
  ASSERT_EQ(d.fault, BlockFault::none) << d.status.to_string();
  EXPECT_EQ(d.block.key, b.key);
  EXPECT_EQ(d.block.parent, b.parent);
  EXPECT_EQ(d.block.tokens, b.tokens);
  EXPECT_EQ(d.block.payload, b.payload);
}

TEST(BlockFormat, EncodeRefusesBlocksThatDoNotFit) {
  Keyspace s = small_space();
  Block b = make_block(s, BlockKey{}, 2);
  Block short_tokens = b;
  short_tokens.tokens.pop_back();
  EXPECT_EQ(encode_block(s, short_tokens).status().code(), StatusCode::invalid_argument);
  Block long_payload = b;
  long_payload.payload.push_back(0);
  EXPECT_EQ(encode_block(s, long_payload).status().code(), StatusCode::invalid_argument);
  Block wrong_key = b;
  wrong_key.key.bytes[0] ^= 1;
  EXPECT_EQ(encode_block(s, wrong_key).status().code(), StatusCode::invalid_argument);
}

TEST(BlockFormat, EveryTruncationIsRefusedAsTruncated) {
  Keyspace s = small_space();
  Block b = make_block(s, BlockKey{}, 3);
  std::vector<uint8_t> bytes = encode_block(s, b).value();
  for (size_t n = 0; n < bytes.size(); ++n) {
    Decoded d = decode_block(s, b.key, std::span(bytes).first(n));
    EXPECT_EQ(d.fault, BlockFault::truncated) << n << " bytes: " << d.status.to_string();
    EXPECT_EQ(d.status.code(), StatusCode::corrupt_data);
  }
  bytes.push_back(0);
  EXPECT_EQ(decode_block(s, b.key, bytes).fault, BlockFault::malformed);
}

TEST(BlockFormat, EverySingleBitFlipIsRefused) {
  Keyspace s = small_space();
  Block b = make_block(s, BlockKey{}, 4);
  const std::vector<uint8_t> good = encode_block(s, b).value();
  for (size_t bit = 0; bit < good.size() * 8; ++bit) {
    std::vector<uint8_t> bad = good;
    bad[bit / 8] ^= uint8_t(1u << (bit % 8));
    Decoded d = decode_block(s, b.key, bad);
    EXPECT_NE(d.fault, BlockFault::none) << "bit " << bit;
    EXPECT_EQ(d.status.code(), StatusCode::corrupt_data);
  }
}

TEST(BlockFormat, ForeignBlocksAreRefusedAsForeign) {
  Keyspace s = small_space();
  Block b = make_block(s, BlockKey{}, 5);
  std::vector<uint8_t> bytes = encode_block(s, b).value();
  // Another model, and the same model with another KV type (same byte size: bf16).
  EXPECT_EQ(decode_block(small_space(2), b.key, bytes).fault, BlockFault::foreign);
  EXPECT_EQ(decode_block(small_space(1, kernels::DType::bf16), b.key, bytes).fault,
            BlockFault::foreign);
  Keyspace rope = s;
  rope.rope.freq_base = 1e6f;
  EXPECT_EQ(decode_block(rope, b.key, bytes).fault, BlockFault::foreign);
  // A well-formed block of this keyspace read under another key.
  Block other = make_block(s, BlockKey{}, 6);
  EXPECT_EQ(decode_block(s, other.key, bytes).fault, BlockFault::foreign);
}

// Mutations of valid blocks and plain noise: every outcome is a clean
// refusal or, for an unchanged block, the block itself. Run under ASan/UBSan
// (or the block-fuzz target) this is also the memory-safety check.
TEST(BlockFormat, RandomizedCorruptionNeverCrashesOrPasses) {
  Keyspace s = small_space();
  std::mt19937 rng(42);
  std::vector<Block> blocks;
  std::vector<std::vector<uint8_t>> encoded;
  for (uint32_t i = 0; i < 8; ++i) {
    blocks.push_back(make_block(s, i ? blocks.back().key : BlockKey{}, 100 + i));
    encoded.push_back(encode_block(s, blocks.back()).value());
  }
  int refused = 0;
  for (int iter = 0; iter < 20000; ++iter) {
    size_t which = rng() % encoded.size();
    std::vector<uint8_t> bytes = encoded[which];
    switch (rng() % 5) {
      case 0:  // a few random bytes anywhere
        for (int k = 1 + int(rng() % 4); k > 0; --k) bytes[rng() % bytes.size()] = uint8_t(rng());
        break;
      case 1:  // cut anywhere
        bytes.resize(rng() % bytes.size());
        break;
      case 2:  // grow by junk
        for (int k = 1 + int(rng() % 64); k > 0; --k) bytes.push_back(uint8_t(rng()));
        break;
      case 3:  // pure noise of any length
        bytes.resize(rng() % (2 * bytes.size()));
        for (uint8_t& x : bytes) x = uint8_t(rng());
        break;
      case 4:  // splice the tail of another block
        if (size_t o = rng() % encoded.size(); o != which) {
          size_t cut = rng() % bytes.size();
          std::copy(encoded[o].begin() + long(cut), encoded[o].end(), bytes.begin() + long(cut));
        }
        break;
    }
    Decoded d = decode_block(s, blocks[which].key, bytes);
    if (bytes == encoded[which]) {
      EXPECT_EQ(d.fault, BlockFault::none);
      EXPECT_EQ(d.block.payload, blocks[which].payload);
    } else {
      EXPECT_NE(d.fault, BlockFault::none) << "iteration " << iter;
      ++refused;
    }
  }
  EXPECT_GT(refused, 19000);
}

TEST(KvPageIo, PackThenUnpackBlocksAcrossPages) {
  // Two-token pages, four-token blocks: a block spans two pages.
  kernels::KvPoolShape shape{2, 2, 8, 2, 8, kernels::DType::f16};
  HostPool pool(shape);
  std::unique_ptr<kernels::Backend> backend = kernels::make_cpu_backend(1);
  Keyspace s = Keyspace::of(Hash128{}, shape, kernels::RopeConfig{}, 4);
  const std::vector<int32_t> src = {3, 6};  // not adjacent: two copies per array
  std::vector<uint8_t> p = pack_block(*backend, pool, src);
  ASSERT_EQ(p.size(), size_t(s.block_payload_bytes()));
  // Layer 1's V of page 6 sits at the end of the payload.
  const int64_t page_bytes = 2 * 2 * 8 * 2;
  EXPECT_EQ(0, std::memcmp(p.data() + p.size() - page_bytes,
                           static_cast<uint8_t*>(pool.v(1)) + 6 * page_bytes, size_t(page_bytes)));
  const std::vector<int32_t> dst = {0, 1};  // adjacent: one copy per array
  ASSERT_TRUE(unpack_block(*backend, pool, dst, p, 4, 0).ok());
  EXPECT_EQ(pack_block(*backend, pool, dst), p);
  EXPECT_NE(pack_block(*backend, pool, std::vector<int32_t>{3, 5}), p);
  // The block's second half alone into one page.
  const std::vector<int32_t> half = {7};
  ASSERT_TRUE(unpack_block(*backend, pool, half, p, 4, 2).ok());
  EXPECT_EQ(pack_block(*backend, pool, std::vector<int32_t>{3, 7}), p);
  EXPECT_EQ(unpack_block(*backend, pool, std::vector<int32_t>{8, 1}, p, 4, 0).code(),
            StatusCode::invalid_argument);
  EXPECT_EQ(unpack_block(*backend, pool, half, p, 4, 0).code(), StatusCode::invalid_argument);
  EXPECT_EQ(unpack_block(*backend, pool, half, p, 4, 1).code(), StatusCode::invalid_argument);
  EXPECT_EQ(unpack_block(*backend, pool, dst, std::span(p).first(10), 4, 0).code(),
            StatusCode::invalid_argument);
  EXPECT_TRUE(pack_block(*backend, pool, std::vector<int32_t>{-1, 0}).empty());
}

}  // namespace
}  // namespace rc::tiers
