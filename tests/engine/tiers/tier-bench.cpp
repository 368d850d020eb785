// Figures for the load-or-recompute cost model: put and get of one block
// shaped like TinyLlama 1.1B's (22 layers, 4 KV heads, head dim 64, f16,
// 16-token pages: 352 KiB) through the disk store (fsync on and off) and a
// private loopback Redis, and what sealing adds to each: sealing and opening
// one block in memory (BM_Seal). Run: tier-bench [--benchmark_filter=...]
#include <benchmark/benchmark.h>

#include <filesystem>

#include "engine/tiers/redis-server-fixture.h"
#include "engine/tiers/tier-fixtures.h"
#include "tiers/disk-store.h"
#include "tiers/redis-store.h"

namespace rc::tiers {
namespace {

Keyspace tinyllama_space() {
  Keyspace s = testing::small_space();
  s.n_layers = 22;
  s.n_kv_heads = 4;
  s.head_dim = 64;
  s.block_tokens = 16;
  s.rope.n_rot = 64;
  return s;
}

void run(benchmark::State& state, BlockStore& store, const Keyspace& s, bool put) {
  std::vector<Block> blocks = testing::make_chain(s, 64, 1);
  for (const Block& b : blocks)
    if (!store.put(b).ok()) state.SkipWithError("put failed");
  size_t i = 0;
  for (auto _ : state) {
    const Block& b = blocks[i++ % blocks.size()];
    bool ok = put ? store.put(b).ok() : store.get(b.key).ok();
    if (!ok) state.SkipWithError(put ? "put failed" : "get failed");
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(sealed_block_bytes(s)));
}

// Sealing (put's share) and opening (get's share: decryption, the block's
// checks and the finite-value scan) of one block, without any I/O.
void BM_Seal(benchmark::State& state) {
  const Keyspace s = tinyllama_space();
  const Block b = testing::make_block(s, BlockKey{}, 1);
  const SealKey& key = *testing::test_key();
  const std::vector<uint8_t> sealed = seal_block(s, key, "disk", b).value();
  const bool open = state.range(0) != 0;
  for (auto _ : state) {
    if (open) {
      Decoded d = open_sealed_block(s, key, "disk", b.key, sealed);
      if (d.fault != BlockFault::none) state.SkipWithError("open failed");
      benchmark::DoNotOptimize(d);
    } else {
      benchmark::DoNotOptimize(seal_block(s, key, "disk", b));
    }
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(sealed_block_bytes(s)));
}
BENCHMARK(BM_Seal)->ArgName("open")->Arg(0)->Arg(1)->UseRealTime();

void BM_Disk(benchmark::State& state) {
  const Keyspace s = tinyllama_space();
  const auto dir = std::filesystem::temp_directory_path() / "rc-tier-bench";
  std::filesystem::remove_all(dir);
  DiskStoreOptions o;
  o.key = testing::test_key();
  o.root = dir;
  o.budget_bytes = int64_t(1) << 30;
  o.fsync = state.range(1) != 0;
  auto store = DiskStore::open(s, o);
  if (!store.ok()) return state.SkipWithError(store.status().message().c_str());
  run(state, *store.value(), s, state.range(0) != 0);
  store.value().reset();
  std::filesystem::remove_all(dir);
}
BENCHMARK(BM_Disk)
    ->ArgNames({"put", "fsync"})
    ->Args({0, 1})
    ->Args({1, 0})
    ->Args({1, 1})
    ->UseRealTime();

void BM_Redis(benchmark::State& state) {
  const Keyspace s = tinyllama_space();
  testing::RedisServer server;
  if (!testing::have_redis_server() || !server.start())
    return state.SkipWithError("no redis-server");
  RedisStoreOptions o;
  o.key = testing::test_key();
  o.url = server.url();
  o.timeout_ms = 2000;
  auto store = RedisStore::open(s, o);
  if (!store.ok()) return state.SkipWithError(store.status().message().c_str());
  run(state, *store.value(), s, state.range(0) != 0);
}
BENCHMARK(BM_Redis)->ArgName("put")->Arg(0)->Arg(1)->UseRealTime();

}  // namespace
}  // namespace rc::tiers

BENCHMARK_MAIN();
