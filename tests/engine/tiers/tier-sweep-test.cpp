// The sweep behind a removed document's purge (tiers/token-windows.h,
// tiers/tier-sweep.h; docs/architecture.md section 21). Oracle: the blocks
// each test planted, and which of them it made hold the document.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "tier-fixtures.h"
#include "tiers/memory-store.h"
#include "tiers/tier-sweep.h"
#include "tiers/token-windows.h"

namespace rc::tiers {
namespace {

using testing::make_block;
using testing::make_chain;
using testing::small_space;

TEST(TokenWindows, FindsAnyRunOfTheNeedleAndNothingElse) {
  const std::vector<int32_t> doc{10, 11, 12, 13, 14, 15, 16, 17, 18, 19};
  const TokenWindows w(doc, 4);
  EXPECT_EQ(w.width(), 4u);
  const std::vector<int32_t> inside{1, 2, 13, 14, 15, 16, 3};
  EXPECT_EQ(w.first_match(inside), std::optional<size_t>(2));
  // Three of the needle's tokens, then one that breaks the run.
  EXPECT_FALSE(w.first_match(std::vector<int32_t>{12, 13, 14, 99, 16, 17, 18}));
  // The needle's tokens out of order are not a run of it.
  EXPECT_FALSE(w.first_match(std::vector<int32_t>{13, 12, 14, 15, 17, 16}));
  EXPECT_FALSE(w.first_match(std::vector<int32_t>{15, 16, 17}));  // shorter than the width
}

TEST(TokenWindows, AShortNeedleIsOneRunAndAnEmptyOneMatchesNothing) {
  const TokenWindows short_doc(std::vector<int32_t>{7, 8}, 8);
  EXPECT_EQ(short_doc.width(), 2u);
  EXPECT_EQ(short_doc.first_match(std::vector<int32_t>{1, 7, 8, 2}), std::optional<size_t>(1));
  EXPECT_FALSE(short_doc.first_match(std::vector<int32_t>{8, 7}));
  const TokenWindows none(std::vector<int32_t>{}, 8);
  EXPECT_TRUE(none.empty());
  EXPECT_FALSE(none.first_match(std::vector<int32_t>{1, 2, 3}));
}

std::set<std::string> hexes(const std::vector<BlockKey>& keys) {
  std::set<std::string> out;
  for (const BlockKey& k : keys) out.insert(k.hex());
  return out;
}

// Plants blocks in a host-memory store; the needle is a run of the tokens
// the test chooses, so which blocks hold it is known.
class TierSweepTest : public ::testing::Test {
 protected:
  Keyspace space_ = small_space(1, kernels::DType::f16, 4);
  MemoryStore store_{space_, int64_t(1) << 30};

  void put(const std::vector<Block>& blocks) {
    for (const Block& b : blocks) ASSERT_TRUE(store_.put(b).ok());
  }
  // A block chained to `parent` holding exactly `tokens`.
  Block block_with(const BlockKey& parent, std::vector<int32_t> tokens, uint32_t seed) {
    Block b = make_block(space_, parent, seed);
    b.tokens = std::move(tokens);
    b.key = chain_key(space_, parent, b.tokens);
    return b;
  }
};

TEST_F(TierSweepTest, ABlockHoldingARunGoesWithEveryBlockBelowIt) {
  std::vector<Block> chain = make_chain(space_, 2, 1);                 // the system prompt
  chain.push_back(block_with(chain[1].key, {500, 501, 502, 503}, 2));  // the document
  chain.push_back(make_block(space_, chain[2].key, 3));                // the question
  chain.push_back(make_block(space_, chain[3].key, 4));                // the reply
  Block branch = make_block(space_, chain[2].key, 5);                  // another question
  const std::vector<Block> other = make_chain(space_, 3, 6);           // no document
  put(chain);
  put({branch});
  put(other);
  const TokenWindows doc(std::vector<int32_t>{499, 500, 501, 502, 503, 504}, 4);
  Result<std::vector<BlockKey>> found = blocks_holding(store_, doc);
  ASSERT_TRUE(found.ok()) << found.status().to_string();
  EXPECT_EQ(hexes(found.value()), hexes({chain[2].key, chain[3].key, chain[4].key, branch.key}));
}

TEST_F(TierSweepTest, ARunAcrossTwoBlocksIsFoundAtTheirSeam) {
  std::vector<Block> chain = make_chain(space_, 1, 7);
  chain.push_back(block_with(chain[0].key, {1, 2, 600, 601}, 8));
  chain.push_back(block_with(chain[1].key, {602, 603, 3, 4}, 9));
  chain.push_back(make_block(space_, chain[2].key, 10));
  put(chain);
  const TokenWindows doc(std::vector<int32_t>{600, 601, 602, 603}, 4);
  Result<std::vector<BlockKey>> found = blocks_holding(store_, doc);
  ASSERT_TRUE(found.ok());
  // The seam block is the first that holds the whole run; its parent holds
  // only half of it, so it stays (the purge's margin covers such a start).
  EXPECT_EQ(hexes(found.value()), hexes({chain[2].key, chain[3].key}));
}

TEST_F(TierSweepTest, OrphansHoldingTheDocumentAreFoundWithoutTheirParents) {
  // The first blocks were evicted or purged before: the chain starts mid-way.
  std::vector<Block> chain = make_chain(space_, 3, 11);
  chain[2] = block_with(chain[1].key, {700, 701, 702, 703}, 12);
  Block child = make_block(space_, chain[2].key, 13);
  put({chain[2], child});
  const TokenWindows doc(std::vector<int32_t>{700, 701, 702, 703}, 4);
  Result<std::vector<BlockKey>> found = blocks_holding(store_, doc);
  ASSERT_TRUE(found.ok());
  EXPECT_EQ(hexes(found.value()), hexes({chain[2].key, child.key}));
}

TEST_F(TierSweepTest, AStoreWithoutTheDocumentGivesNothingAndStaysWhole) {
  put(make_chain(space_, 4, 14));
  const StoreStats before = store_.stats();
  const TokenWindows doc(std::vector<int32_t>{900, 901, 902, 903}, 4);
  Result<std::vector<BlockKey>> found = blocks_holding(store_, doc);
  ASSERT_TRUE(found.ok());
  EXPECT_TRUE(found.value().empty());
  // The sweep is not a use: no hits counted.
  EXPECT_EQ(store_.stats().hits, before.hits);
  EXPECT_EQ(store_.stats().blocks, 4);
}

}  // namespace
}  // namespace rc::tiers
