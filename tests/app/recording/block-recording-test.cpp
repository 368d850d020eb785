// cache-watch --record's mapping (block-recording.h): KV-event batches
// recorded as cache events replay, through the file and the reader, to the
// forest kv_events::BlockTree (what cache-watch shows) builds from the same
// batches. Random batches over a small pool of hashes so that blocks are
// stored before their parents, stored again with other tokens, removed with
// children still held, and cleared per rank with two ranks.
#include <gtest/gtest.h>

#include <unistd.h>
#include <algorithm>
#include <filesystem>
#include <map>
#include <random>

#include "radixchat/kv-block-tree.h"
#include "recording/block-recording.h"
#include "recording/chain-fold.h"
#include "recording/recording-reader.h"

namespace rc::recording {
namespace {

namespace fs = std::filesystem;

// Each block as its root-to-block token path, one string per block,
// sorted: the shape of a forest whatever the node ids or hashes.
std::vector<std::string> paths(const kv_events::BlockTree& tree) {
  std::vector<std::string> out;
  for (const auto& [b, depth] : tree.walk()) {
    std::string p;
    const kv_events::Block* at = b;
    for (int d = 0; d < depth && at; ++d) {
      std::string blk;
      for (int64_t t : at->token_ids) blk += std::to_string(t) + ",";
      p = blk + "|" + p;
      at = at->parent ? tree.find(at->rank, *at->parent) : nullptr;
    }
    out.push_back(p);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> paths(const CacheSnapshot& snap) {
  std::map<NodeId, const CacheNodeInfo*> by_id;
  for (const CacheNodeInfo& n : snap.nodes) by_id[n.id] = &n;
  std::vector<std::string> out;
  for (const CacheNodeInfo& n : snap.nodes) {
    if (n.id == kRootNode) continue;
    std::string p;
    for (const CacheNodeInfo* at = &n; at && at->id != kRootNode;
         at = by_id.count(at->parent) ? by_id[at->parent] : nullptr) {
      std::string blk;
      for (Token t : at->tokens) blk += std::to_string(t) + ",";
      p = blk + "|" + p;
    }
    out.push_back(p);
  }
  std::sort(out.begin(), out.end());
  return out;
}

kv_events::Batch random_batch(std::mt19937& rng, int ranks) {
  kv_events::Batch b;
  b.rank = int(rng() % ranks);
  const int n = 1 + int(rng() % 4);
  for (int i = 0; i < n; ++i) {
    kv_events::Event e;
    const int r = int(rng() % 100);
    // Hash h<i> only ever names a parent h<j> with j < i: real chained
    // hashes cannot form cycles, and neither do these.
    const int h = 1 + int(rng() % 24);
    if (r < 60) {
      e.kind = kv_events::EventKind::stored;
      const int chain = 1 + int(rng() % 3);
      for (int c = 0; c < chain && h + c < 30; ++c)
        e.block_hashes.push_back("h" + std::to_string(h + c));
      if (rng() % 5) e.parent = "h" + std::to_string(rng() % h);
      e.block_size = 2;
      for (size_t t = 0; t < 2 * e.block_hashes.size(); ++t) e.token_ids.push_back(rng() % 4);
    } else if (r < 97) {
      e.kind = kv_events::EventKind::removed;
      e.block_hashes = {"h" + std::to_string(h), "h" + std::to_string(rng() % 30)};
    } else {
      e.kind = kv_events::EventKind::cleared;
    }
    b.events.push_back(std::move(e));
  }
  return b;
}

void run(uint32_t seed, int ranks) {
  const fs::path file = fs::temp_directory_path() / ("rc-blockrec-" + std::to_string(getpid()) +
                                                     "-" + std::to_string(seed) + ".db");
  fs::remove(file);
  std::mt19937 rng(seed);
  kv_events::BlockTree tree;
  std::vector<std::pair<uint64_t, std::vector<std::string>>> moments;
  uint64_t reinserted = 0;
  {
    RecorderOptions ro;
    ro.source = "cache-watch";
    ro.snapshot_every = 64;  // the writer's own snapshots are read back too
    auto rec = Recorder::create(file.string(), ro);
    ASSERT_TRUE(rec.ok()) << rec.status().message();
    BlockRecording br(**rec);
    for (int i = 0; i < 400; ++i) {
      const kv_events::Batch b = random_batch(rng, ranks);
      tree.apply(b);
      br.apply(b);
      const auto want = paths(tree);
      ASSERT_EQ(paths(br.tree().to_snapshot({})), want) << "seed " << seed << " batch " << i;
      moments.emplace_back(br.tree().next_seq(), want);
    }
    reinserted = br.reinserted_blocks();
    br.finish();
    ASSERT_TRUE((*rec)->close().ok());
  }
  // The random stream does exercise the re-rooting paths.
  EXPECT_GT(reinserted, 0u);
  auto r = Recording::open(file.string());
  ASSERT_TRUE(r.ok()) << r.status().message();
  for (const auto& [seq, want] : moments) {
    auto t = (*r)->tree_at(seq);
    ASSERT_TRUE(t.ok()) << t.status().message();
    ASSERT_EQ(paths(t.value()), want) << "seed " << seed << " seq " << seq;
  }
  fs::remove(file);
}

TEST(BlockRecording, ReplaysToTheBlockTreeOneRank) {
  for (uint32_t seed = 1; seed <= 3; ++seed) run(seed, 1);
}

TEST(BlockRecording, ReplaysToTheBlockTreeTwoRanks) {
  for (uint32_t seed = 11; seed <= 13; ++seed) run(seed, 2);
}

// cache-export's view of a block recording: root -> 1 -> 2 -> 3, where 3
// branches into 4 and 5 -> 6. Runs of single children fold into one node
// that keeps the run's first id and counts its blocks; branches stay.
TEST(ChainFold, FoldsSingleChildRunsOnly) {
  CacheSnapshot s;
  auto add = [&](NodeId id, NodeId parent, Token t, uint64_t hits) {
    CacheNodeInfo n;
    n.id = id;
    n.parent = parent;
    if (id != kRootNode) n.tokens = {t};
    if (id != kRootNode) n.pages = {int32_t(id)};
    n.hits = hits;
    s.nodes.push_back(n);
  };
  add(kRootNode, kNoNode, 0, 0);
  add(1, kRootNode, 10, 5);
  add(2, 1, 20, 7);
  add(3, 2, 30, 1);
  add(4, 3, 40, 0);
  add(5, 3, 50, 0);
  add(6, 5, 60, 2);
  const FoldedTree f = fold_single_child_chains(s);
  ASSERT_EQ(f.tree.nodes.size(), 4u);  // root, 1-2-3, 4, 5-6
  EXPECT_EQ(f.tree.nodes[0].id, kRootNode);
  EXPECT_EQ(f.tree.nodes[1].id, 1u);
  EXPECT_EQ(f.tree.nodes[1].tokens, (std::vector<Token>{10, 20, 30}));
  EXPECT_EQ(f.tree.nodes[1].pages, (std::vector<PageId>{1, 2, 3}));
  EXPECT_EQ(f.tree.nodes[1].hits, 7u);
  EXPECT_EQ(f.tree.nodes[2].id, 4u);
  EXPECT_EQ(f.tree.nodes[2].parent, 1u);
  EXPECT_EQ(f.tree.nodes[3].id, 5u);
  EXPECT_EQ(f.tree.nodes[3].parent, 1u);
  EXPECT_EQ(f.tree.nodes[3].tokens, (std::vector<Token>{50, 60}));
  EXPECT_EQ(f.blocks.at(1), 3u);
  EXPECT_EQ(f.blocks.at(5), 2u);
  EXPECT_EQ(f.blocks.count(4), 0u);
}

}  // namespace
}  // namespace rc::recording
