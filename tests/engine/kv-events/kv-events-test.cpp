// KV-event decoding and the block tree, on msgpack payloads built here from
// the documented vLLM/SGLang format: both event encodings, hashes as signed,
// unsigned (above 2^63) and bytes, unknown fields and tags, truncated and
// forged payloads, and a seeded mutation fuzz loop.
#include <gtest/gtest.h>

#include <msgpack.hpp>

#include <random>
#include <sstream>

#include "radixchat/kv-block-tree.h"
#include "radixchat/kv-events.h"

namespace rc::kv_events {
namespace {

using Packer = msgpack::packer<msgpack::sbuffer>;

std::string to_string(const msgpack::sbuffer& b) { return std::string(b.data(), b.size()); }

BlockHash int_hash(uint64_t v) {
  std::string h(9, 'i');
  for (int i = 0; i < 8; ++i) h[8 - i] = static_cast<char>((v >> (8 * i)) & 0xff);
  return h;
}

void pack_ints(Packer& p, const std::vector<int64_t>& v) {
  p.pack_array(static_cast<uint32_t>(v.size()));
  for (int64_t x : v) p.pack(x);
}

// [ts, [BlockStored(array), BlockRemoved(array), AllBlocksCleared, Unknown], rank]
std::string array_batch(bool with_rank) {
  msgpack::sbuffer buf;
  Packer p(buf);
  p.pack_array(with_rank ? 3 : 2);
  p.pack(12.5);
  p.pack_array(4);
  p.pack_array(7);
  p.pack(std::string("BlockStored"));
  p.pack_array(2);
  p.pack(uint64_t{0xffffffffffffff00ull});  // above 2^63, unsigned
  p.pack(int64_t{-7});                      // signed
  p.pack_nil();                             // parent: a root
  pack_ints(p, {10, 11, 12, 13, 14, 15});
  p.pack(3);
  p.pack_nil();
  p.pack(std::string("GPU"));
  p.pack_array(3);
  p.pack(std::string("BlockRemoved"));
  p.pack_array(1);
  p.pack(int64_t{-7});
  p.pack(std::string("GPU"));
  p.pack_array(1);
  p.pack(std::string("AllBlocksCleared"));
  p.pack_array(2);
  p.pack(std::string("SomeFutureEvent"));
  p.pack(1);
  if (with_rank) p.pack(2);
  return to_string(buf);
}

// {"ts", "events": [BlockStored as a map with extra keys], "data_parallel_rank"}
std::string map_batch() {
  msgpack::sbuffer buf;
  Packer p(buf);
  p.pack_map(3);
  p.pack(std::string("ts"));
  p.pack(7);
  p.pack(std::string("events"));
  p.pack_array(1);
  p.pack_map(7);
  p.pack(std::string("type"));
  p.pack(std::string("BlockStored"));
  p.pack(std::string("block_hashes"));
  p.pack_array(2);
  p.pack_bin(4);
  p.pack_bin_body("\x01\x02\xab\xcd", 4);
  p.pack(uint64_t{1} << 63);
  p.pack(std::string("parent_block_hash"));
  p.pack(uint64_t{99});
  p.pack(std::string("token_ids"));
  pack_ints(p, {1, 2, 3, 4});
  p.pack(std::string("block_size"));
  p.pack(2);
  p.pack(std::string("extra_keys"));  // not used: ignored
  p.pack_array(1);
  p.pack_map(0);
  p.pack(std::string("lora_id"));
  p.pack(5);
  p.pack(std::string("data_parallel_rank"));
  p.pack(1);
  return to_string(buf);
}

TEST(KvEventDecode, TaggedArrays) {
  auto b = decode_batch(array_batch(true));
  ASSERT_TRUE(b.ok()) << b.status().message();
  EXPECT_DOUBLE_EQ(b->ts, 12.5);
  EXPECT_EQ(b->rank, 2);
  EXPECT_TRUE(b->rank_sent);
  EXPECT_EQ(b->unknown_events, 1);
  ASSERT_EQ(b->events.size(), 3u);
  const Event& s = b->events[0];
  EXPECT_EQ(s.kind, EventKind::stored);
  ASSERT_EQ(s.block_hashes.size(), 2u);
  EXPECT_EQ(s.block_hashes[0], int_hash(0xffffffffffffff00ull));
  EXPECT_EQ(format_hash(s.block_hashes[0]), "ffffffffffffff00");
  EXPECT_EQ(s.block_hashes[1], int_hash(static_cast<uint64_t>(int64_t{-7})));
  EXPECT_FALSE(s.parent.has_value());
  EXPECT_EQ(s.token_ids, (std::vector<int64_t>{10, 11, 12, 13, 14, 15}));
  EXPECT_EQ(s.block_size, 3);
  EXPECT_FALSE(s.lora_id.has_value());
  EXPECT_EQ(s.medium, "GPU");
  EXPECT_EQ(b->events[1].kind, EventKind::removed);
  EXPECT_EQ(b->events[1].block_hashes, std::vector<BlockHash>{int_hash(static_cast<uint64_t>(-7))});
  EXPECT_EQ(b->events[2].kind, EventKind::cleared);
}

TEST(KvEventDecode, RankAbsentMeansZero) {
  auto b = decode_batch(array_batch(false));
  ASSERT_TRUE(b.ok()) << b.status().message();
  EXPECT_EQ(b->rank, 0);
  EXPECT_FALSE(b->rank_sent);  // a subscriber with one endpoint per rank supplies it
}

TEST(KvEventDecode, TaggedMapsWithUnknownFields) {
  auto b = decode_batch(map_batch());
  ASSERT_TRUE(b.ok()) << b.status().message();
  EXPECT_EQ(b->rank, 1);
  EXPECT_TRUE(b->rank_sent);
  EXPECT_DOUBLE_EQ(b->ts, 7.0);
  ASSERT_EQ(b->events.size(), 1u);
  const Event& s = b->events[0];
  EXPECT_EQ(s.block_hashes[0], std::string("b\x01\x02\xab\xcd", 5));
  EXPECT_EQ(format_hash(s.block_hashes[0]), "0102abcd");
  EXPECT_EQ(s.block_hashes[1], int_hash(uint64_t{1} << 63));
  EXPECT_EQ(s.parent, int_hash(99));
  EXPECT_EQ(s.lora_id, 5);
  EXPECT_EQ(s.medium, "");
}

TEST(KvEventDecode, SglangRankKeyInMapBatch) {
  msgpack::sbuffer buf;
  Packer p(buf);
  p.pack_map(2);
  p.pack(std::string("events"));
  p.pack_array(0);
  p.pack(std::string("attn_dp_rank"));
  p.pack(3);
  auto b = decode_batch(to_string(buf));
  ASSERT_TRUE(b.ok()) << b.status().message();
  EXPECT_EQ(b->rank, 3);
}

TEST(KvEventDecode, OmittedTrailingFields) {
  // msgspec omit_defaults: ["BlockStored", hashes, parent, tokens] only.
  msgpack::sbuffer buf;
  Packer p(buf);
  p.pack_array(2);
  p.pack(1.0);
  p.pack_array(1);
  p.pack_array(4);
  p.pack(std::string("BlockStored"));
  p.pack_array(2);
  p.pack(1);
  p.pack(2);
  p.pack(5);
  pack_ints(p, {7, 8, 9, 10});
  auto b = decode_batch(to_string(buf));
  ASSERT_TRUE(b.ok()) << b.status().message();
  BlockTree t;
  t.apply(*b);
  ASSERT_NE(t.find(0, int_hash(2)), nullptr);
  EXPECT_EQ(t.find(0, int_hash(2))->token_ids, (std::vector<int64_t>{9, 10}));  // even split
  EXPECT_EQ(*t.find(0, int_hash(2))->parent, int_hash(1));
  EXPECT_EQ(*t.find(0, int_hash(1))->parent, int_hash(5));
}

TEST(KvEventDecode, MalformedIsAnErrorNotACrash) {
  const std::string good = array_batch(true);
  // Every strict prefix is truncated.
  for (size_t n = 0; n < good.size(); ++n) {
    auto b = decode_batch(std::string_view(good).substr(0, n));
    EXPECT_FALSE(b.ok()) << "prefix " << n;
    if (!b.ok()) {
      EXPECT_NE(b.status().message().find("malformed"), std::string::npos);
    }
  }
  EXPECT_FALSE(decode_batch(good + "x").ok());                      // trailing bytes
  EXPECT_FALSE(decode_batch(std::string("\x92\x01\x05", 3)).ok());  // events not an array
  EXPECT_FALSE(decode_batch(std::string("\x91\x01", 2)).ok());      // one field
  // An array claiming 2^32-1 elements in 5 bytes: refused without allocating.
  EXPECT_FALSE(decode_batch(std::string("\x92\x01\xdd\xff\xff\xff\xff", 7)).ok());
  // A hash that is a float, a token id that is a string.
  msgpack::sbuffer buf;
  Packer p(buf);
  p.pack_array(2);
  p.pack(0);
  p.pack_array(1);
  p.pack_array(2);
  p.pack(std::string("BlockRemoved"));
  p.pack_array(1);
  p.pack(1.5);
  EXPECT_FALSE(decode_batch(to_string(buf)).ok());
  // A map event without "type".
  msgpack::sbuffer buf2;
  Packer p2(buf2);
  p2.pack_array(2);
  p2.pack(0);
  p2.pack_array(1);
  p2.pack_map(1);
  p2.pack(std::string("block_hashes"));
  p2.pack_array(0);
  EXPECT_FALSE(decode_batch(to_string(buf2)).ok());
}

TEST(KvEventDecode, MutationFuzzNeverCrashes) {
  const std::vector<std::string> seeds = {array_batch(true), array_batch(false), map_batch()};
  std::mt19937 rng(1234);
  BlockTree tree;
  int ok = 0, bad = 0;
  for (int iter = 0; iter < 20000; ++iter) {
    std::string s = seeds[rng() % seeds.size()];
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits && !s.empty(); ++e) {
      const size_t at = rng() % s.size();
      switch (rng() % 4) {
        case 0:
          s[at] = static_cast<char>(rng());
          break;
        case 1:
          s.erase(at, 1 + rng() % 4);
          break;
        case 2:
          s.insert(at, 1, static_cast<char>(rng()));
          break;
        default:
          s.resize(at);
          break;
      }
    }
    auto b = decode_batch(s);
    if (b.ok()) {
      tree.apply(*b);
      ++ok;
    } else {
      ++bad;
    }
  }
  (void)tree.stats();
  (void)tree.to_text();
  EXPECT_GT(bad, 0);
  std::printf("fuzz: %d decoded, %d rejected\n", ok, bad);
}

TEST(KvEventDecode, SequenceFrame) {
  EXPECT_EQ(decode_sequence(std::string("\x00\x00\x00\x00\x00\x00\x01\x02", 8)), 258u);
  EXPECT_FALSE(decode_sequence("1234567").has_value());
}

TEST(KvSequence, GapsAndRestarts) {
  SequenceTracker t;
  EXPECT_FALSE(t.observe(5).has_value());  // late join: not a gap
  EXPECT_FALSE(t.observe(6).has_value());
  auto g = t.observe(9);
  ASSERT_TRUE(g.has_value());
  EXPECT_EQ(g->first_missing, 7u);
  EXPECT_EQ(g->size(), 2u);
  EXPECT_FALSE(t.observe(0).has_value());  // publisher restarted
  EXPECT_EQ(t.restarts(), 1u);
  EXPECT_EQ(t.gaps(), 1u);
}

Event stored(std::vector<uint64_t> hashes, std::optional<uint64_t> parent,
             std::vector<int64_t> tokens, int64_t bs) {
  Event e;
  e.kind = EventKind::stored;
  for (uint64_t h : hashes) e.block_hashes.push_back(int_hash(h));
  if (parent) e.parent = int_hash(*parent);
  e.token_ids = std::move(tokens);
  e.block_size = bs;
  return e;
}

TEST(KvBlockTree, ChainsRanksRemovalAndClear) {
  BlockTree t;
  Batch r0;
  r0.events.push_back(stored({1, 2, 3}, std::nullopt, {1, 2, 3, 4, 5, 6}, 2));  // chain 1-2-3
  r0.events.push_back(stored({4}, 2, {9, 9}, 2));                               // branch under 2
  r0.events.push_back(stored({5}, std::nullopt, {7, 7}, 2));                    // second root
  t.apply(r0);
  Batch r1;
  r1.rank = 1;
  r1.events.push_back(stored({1}, std::nullopt, {1, 2}, 2));  // same hash, other rank
  t.apply(r1);
  TreeStats s = t.stats();
  EXPECT_EQ(s.blocks, 6u);
  EXPECT_EQ(s.roots, 3u);
  EXPECT_EQ(s.max_depth_blocks, 3u);
  EXPECT_EQ(s.stored_events, 4u);
  EXPECT_EQ(t.find(0, int_hash(3))->token_ids, (std::vector<int64_t>{5, 6}));
  // Text: 1 has one child (folded with it), 2 branches into 3 and 4.
  const std::string text = t.to_text();
  EXPECT_NE(text.find("rank 0\n  0000000000000001 blocks=2 tokens=4: 1 2 3 4\n"
                      "    0000000000000003 blocks=1 tokens=2: 5 6\n"
                      "    0000000000000004 blocks=1 tokens=2: 9 9\n"),
            std::string::npos)
      << text;
  // Removing 2 orphans 3 and 4: they become roots.
  Batch rm;
  Event e;
  e.kind = EventKind::removed;
  e.block_hashes = {int_hash(2), int_hash(77)};
  rm.events.push_back(e);
  t.apply(rm);
  s = t.stats();
  EXPECT_EQ(s.blocks, 5u);
  EXPECT_EQ(s.roots, 5u);
  EXPECT_EQ(s.removed_events, 1u);
  EXPECT_EQ(s.removed_unknown_blocks, 1u);
  // Their parent is gone: they are grouped under one heading, after the
  // true roots, never shown as starting at the root.
  EXPECT_EQ(s.unknown_parent_roots, 2u);
  EXPECT_EQ(s.unknown_parent_blocks, 2u);
  EXPECT_NE(t.to_text().find("rank 0\n  0000000000000001 blocks=1 tokens=2: 1 2\n"
                             "  0000000000000005 blocks=1 tokens=2: 7 7\n"
                             "  (stored before you attached: 2 blocks under 2 parents never "
                             "seen)\n"
                             "    0000000000000003 blocks=1 tokens=2: 5 6\n"
                             "    0000000000000004 blocks=1 tokens=2: 9 9\nrank 1\n"),
            std::string::npos)
      << t.to_text();
  // Clearing rank 1 leaves rank 0 alone.
  Batch clr;
  clr.rank = 1;
  Event c;
  c.kind = EventKind::cleared;
  clr.events.push_back(c);
  t.apply(clr);
  EXPECT_EQ(t.stats().blocks, 4u);
  EXPECT_EQ(t.stats().cleared_events, 1u);
  EXPECT_EQ(t.find(1, int_hash(1)), nullptr);
  EXPECT_NE(t.find(0, int_hash(1)), nullptr);
}

TEST(KvBlockTree, ParentCycleDoesNotHang) {
  BlockTree t;
  Batch b;
  b.events.push_back(stored({1}, 2, {1}, 1));
  b.events.push_back(stored({2}, 1, {2}, 1));
  t.apply(b);
  EXPECT_EQ(t.stats().blocks, 2u);
  EXPECT_EQ(t.stats().roots, 0u);  // unreachable from any root
  (void)t.to_text();
}

}  // namespace
}  // namespace rc::kv_events
