// The cache tiers through the public Engine API: KV that left the pool (or
// the process) comes back from the host, disk or Redis tier and gives the
// same bits as computing it (docs/architecture.md sections 7 and 8).
//
// Oracle: an engine without tiers. Because every schedule gives a position
// the same logits (batch invariance), logits after a tier load must equal
// the oracle's with memcmp, and greedy replies must be identical.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "engine-reply.h"
#include "radixchat/engine.h"
#include "random-gguf.h"
#include "redis-server-fixture.h"
#include "skip-or-fail.h"
#include "tiered-engine-fixtures.h"

namespace rc {
namespace {

namespace fs = std::filesystem;
using namespace rc::test;  // tiered-engine-fixtures.h, engine-reply.h

// A K-quant model with the widths real files have (256-element rows), small
// enough to run in a second.
const std::string& random_q4k_model() {
  static const std::string path = [] {
    std::string p =
        (fs::temp_directory_path() / ("rc-tiered-q4k-" + std::to_string(::getpid()) + ".gguf"))
            .string();
    testing::RandomModelSpec s;
    s.dim = 256;
    s.layers = 2;
    s.heads = 4;
    s.kv_heads = 2;
    s.ffn = 512;
    s.vocab = 512;
    s.ctx = 1024;
    s.type = "q4_k_m";
    EXPECT_TRUE(testing::write_random_model(s, p).ok());
    return p;
  }();
  return path;
}

class TieredRestart : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {};

// The headline case: a prompt computed before a restart is loaded from disk
// after it, and the next position's logits are the same bits.
TEST_P(TieredRestart, DiskBlocksReloadWithTheSameLogits) {
  const auto& [model_name, kv_type] = GetParam();
  const std::string model = model_name == "bundled" ? "" : random_q4k_model();
  TempDir dir("restart-" + model_name + "-" + kv_type);
  EngineConfig cfg = base_config(model);
  cfg.kv_type = parse_kv_type(kv_type).value();
  std::unique_ptr<Engine> oracle = open(cfg);
  ASSERT_TRUE(oracle);
  const int vocab = oracle->model_info().n_vocab;
  const std::vector<int32_t> prompt = random_tokens(700, vocab, 7);
  const std::vector<float> want = logits_of(*oracle, prompt);

  cfg.kv_disk = dir.path().string();
  {
    std::unique_ptr<Engine> first = open(cfg);
    ASSERT_TRUE(first);
    logits_of(*first, std::vector<int32_t>(prompt.begin(), prompt.begin() + 600));
    EXPECT_EQ(first->stats().tiers.loads, 0u);
  }  // quit: the queued blocks are written
  std::unique_ptr<Engine> second = open(cfg);
  ASSERT_TRUE(second);
  EXPECT_TRUE(same_bits(logits_of(*second, prompt), want));
  const EngineStats s = second->stats();
  EXPECT_EQ(s.tiers.loaded_tokens, 576u);  // nine whole 64-token blocks of the 600
  EXPECT_EQ(s.tiers.loads, 1u);
  ASSERT_NE(tier(s, "disk"), nullptr);
  EXPECT_EQ(tier(s, "disk")->hits, 9u);
  EXPECT_EQ(tier(s, "disk")->refused, 0u);

  // "Clear disk cache": the next engine finds nothing to load.
  ASSERT_TRUE(second->clear_tier_cache().ok());
  EXPECT_EQ(tier(second->stats(), "disk")->blocks, 0);
  second.reset();
  std::unique_ptr<Engine> third = open(cfg);
  EXPECT_TRUE(same_bits(logits_of(*third, prompt), want));
  EXPECT_EQ(third->stats().tiers.loaded_tokens, 0u);
}

INSTANTIATE_TEST_SUITE_P(ModelsAndKvTypes, TieredRestart,
                         ::testing::Combine(::testing::Values("bundled", "q4k"),
                                            ::testing::Values("f16", "f32")));

// Sixteen conversations whose KV is far more than the pool, taking turns:
// with a host tier, later turns load their history instead of prefilling it,
// and every reply is the one an engine without tiers gives.
TEST(TieredEngine, PoolPressureRepliesMatchAndHistoryIsLoaded) {
  EngineConfig cfg = base_config("");
  cfg.kv_pool_tokens = 1024;
  std::unique_ptr<Engine> oracle = open(cfg);
  cfg.kv_host_bytes = int64_t(256) << 20;
  std::unique_ptr<Engine> tiered = open(cfg);
  ASSERT_TRUE(oracle && tiered);
  const int kConversations = 16;
  std::vector<std::vector<ChatMessage>> chats(kConversations);
  for (int c = 0; c < kConversations; ++c) {
    std::string topic;
    for (int w = 0; w < 40; ++w) topic += "word" + std::to_string((c * 131 + w * 17) % 97) + " ";
    chats[size_t(c)].push_back({"system", "Conversation " + std::to_string(c) + ": " + topic});
  }
  uint64_t loaded_after_first_turn = 0;
  for (int turn = 0; turn < 3; ++turn) {
    for (int c = 0; c < kConversations; ++c) {
      auto& chat = chats[size_t(c)];
      chat.push_back({"user", "Turn " + std::to_string(turn) + " of chat " + std::to_string(c) +
                                  ", tell me more."});
      const Reply want = greedy(*oracle, chat, 6);
      const Reply got = greedy(*tiered, chat, 6);
      ASSERT_EQ(got.tokens, want.tokens) << "turn " << turn << " chat " << c;
      if (turn > 0) loaded_after_first_turn += uint64_t(got.metrics.loaded_tokens);
      chat.push_back({"assistant", oracle->detokenize(want.tokens), want.tokens});
    }
  }
  const EngineStats s = tiered->stats();
  EXPECT_GT(loaded_after_first_turn, 0u);
  EXPECT_EQ(s.tiers.loaded_tokens, loaded_after_first_turn);
  ASSERT_NE(tier(s, "host"), nullptr);
  EXPECT_LE(tier(s, "host")->bytes, tier(s, "host")->budget_bytes);
  // Evicted leaves were demoted (their blocks are below), loads were promotions.
  bool overflowed = false;
  const std::vector<CacheEvent> events = tiered->drain_events(&overflowed);
  ASSERT_FALSE(overflowed);
  uint64_t demoted = 0, promoted = 0;
  for (const CacheEvent& e : events) {
    if (e.kind == CacheEventKind::demote) demoted += e.token_count;
    if (e.kind == CacheEventKind::promote) promoted += e.token_count;
  }
  EXPECT_GT(demoted, 0u);
  EXPECT_EQ(promoted, s.tiers.loaded_tokens);
  EXPECT_EQ(s.cache.demoted_tokens, demoted);
  EXPECT_EQ(s.cache.promoted_tokens, promoted);
  // The snapshot marks what of each node the tiers hold.
  const CacheSnapshot snap = tiered->cache_snapshot();
  ASSERT_EQ(snap.held_below.size(), snap.nodes.size());
  uint64_t marked = 0;
  for (uint32_t h : snap.held_below) marked += h;
  EXPECT_GT(marked, 0u);
  EXPECT_TRUE(oracle->cache_snapshot().held_below.empty());
}

// Flipped, truncated and moved blocks on disk are refused and counted, the
// prompt is recomputed, and the answer does not change.
TEST(TieredEngine, CorruptDiskBlocksAreRefusedAndRecomputed) {
  TempDir dir("corrupt");
  EngineConfig cfg = base_config("");
  std::unique_ptr<Engine> oracle = open(cfg);
  ASSERT_TRUE(oracle);
  const int vocab = oracle->model_info().n_vocab;
  std::vector<std::vector<int32_t>> prompts;
  // One whole 64-token block each, so every file is the first of its chain.
  for (uint32_t i = 0; i < 3; ++i) prompts.push_back(random_tokens(100, vocab, 100 + i));
  cfg.kv_disk = dir.path().string();
  {
    std::unique_ptr<Engine> writer = open(cfg);
    for (const auto& p : prompts) logits_of(*writer, p);
  }
  fs::path folder;
  for (const auto& entry : fs::directory_iterator(dir.path())) folder = entry.path();
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(folder)) {
    if (entry.path().extension() == ".rckv") files.push_back(entry.path());
  }
  ASSERT_EQ(files.size(), 3u);
  fs::copy_file(files[1], files[2], fs::copy_options::overwrite_existing);  // another block's
  {  // a flipped bit in the payload
    std::fstream io(files[0], std::ios::in | std::ios::out | std::ios::binary);
    io.seekg(1000);
    char c;
    io.get(c);
    io.seekp(1000);
    io.put(char(c ^ 0x10));
  }
  fs::resize_file(files[1], fs::file_size(files[1]) / 2);  // torn

  std::unique_ptr<Engine> reader = open(cfg);
  ASSERT_TRUE(reader);
  for (const auto& p : prompts)
    EXPECT_TRUE(same_bits(logits_of(*reader, p), logits_of(*oracle, p)));
  const EngineStats s = reader->stats();
  ASSERT_NE(tier(s, "disk"), nullptr);
  EXPECT_EQ(tier(s, "disk")->refused, 3u);
  EXPECT_EQ(s.tiers.loaded_tokens, 0u);  // each chain broke at its first block
  EXPECT_EQ(s.tiers.load_failures, 3u);
}

// Another model, or the same model with another KV type, never reads these blocks.
TEST(TieredEngine, OtherModelOrKvTypeNeverSharesBlocks) {
  TempDir dir("foreign");
  EngineConfig cfg = base_config("");
  cfg.kv_disk = dir.path().string();
  const std::vector<int32_t> prompt = random_tokens(300, 256, 5);
  {
    std::unique_ptr<Engine> writer = open(cfg);
    logits_of(*writer, prompt);
  }
  for (const std::string variant : {"kv-f32", "model"}) {
    EngineConfig other = cfg;
    if (variant == "kv-f32") other.kv_type = KvType::f32;
    if (variant == "model") other.model_path = random_q4k_model();
    std::unique_ptr<Engine> e = open(other);
    ASSERT_TRUE(e);
    logits_of(*e, prompt);
    EXPECT_EQ(e->stats().tiers.loaded_tokens, 0u) << variant;
  }
}

TEST(TieredEngine, BadTierSettingsAreOneClearError) {
  EngineConfig cfg = base_config("");
  cfg.kv_redis = "redis://127.0.0.1:notaport";
  auto e = Engine::create(cfg);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.status().code(), StatusCode::invalid_argument);
  cfg.kv_redis.clear();
  cfg.cache = CacheSetting::off;
  cfg.kv_host_bytes = 1 << 20;
  e = Engine::create(cfg);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("--cache off"), std::string::npos);
  TempDir dir("locked");
  cfg.cache = CacheSetting::radix;
  cfg.kv_host_bytes = 0;
  cfg.kv_disk = dir.path().string();
  std::unique_ptr<Engine> holder = open(cfg);
  e = Engine::create(cfg);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("in use by another process"), std::string::npos);
}

// Two engines on one Redis: what one computed is a hit for the other. With
// Redis killed, requests still succeed and the tier says down; once Redis is
// back, the tier is used again.
TEST(TieredEngine, TwoEnginesShareThroughRedisAndSurviveItsDeath) {
  if (!tiers::testing::have_redis_server()) RC_SKIP_OR_FAIL("redis-server is not installed");
  tiers::testing::RedisServer redis;
  ASSERT_TRUE(redis.start());
  EngineConfig cfg = base_config("");
  std::unique_ptr<Engine> oracle = open(cfg);
  cfg.kv_redis = redis.url();
  cfg.kv_redis_tenant = "share-test";
  const std::vector<int32_t> prompt = random_tokens(600, 256, 9);
  {
    std::unique_ptr<Engine> first = open(cfg);
    logits_of(*first, prompt);
  }
  std::unique_ptr<Engine> second = open(cfg);
  ASSERT_TRUE(second && oracle);
  std::vector<int32_t> longer = prompt;
  longer.push_back(42);
  EXPECT_TRUE(same_bits(logits_of(*second, longer), logits_of(*oracle, longer)));
  EXPECT_EQ(second->stats().tiers.loaded_tokens, 576u);

  const int port = redis.port();
  redis.stop(SIGKILL);
  const std::vector<int32_t> other = random_tokens(300, 256, 10);
  EXPECT_TRUE(same_bits(logits_of(*second, other), logits_of(*oracle, other)));
  EngineStats s = second->stats();
  ASSERT_NE(tier(s, "redis"), nullptr);
  EXPECT_EQ(tier(s, "redis")->state, "down");
  EXPECT_FALSE(tier(s, "redis")->error.empty());

  ASSERT_TRUE(redis.start(port));
  std::this_thread::sleep_for(std::chrono::milliseconds(1200));  // past the retry interval
  const std::vector<int32_t> third = random_tokens(300, 256, 11);
  logits_of(*second, third);
  const uint64_t puts_before = tier(second->stats(), "redis")->puts;
  logits_of(*second, random_tokens(300, 256, 12));
  for (int i = 0; i < 50 && tier(second->stats(), "redis")->puts == puts_before; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    logits_of(*second, {1, 2, 3});  // a step, so the engine publishes the writer's progress
  }
  s = second->stats();
  EXPECT_EQ(tier(s, "redis")->state, "up");
  EXPECT_GT(tier(s, "redis")->puts, puts_before);
}

TEST(TieredEngine, WrongRedisPasswordIsOneClearError) {
  if (!tiers::testing::have_redis_server()) RC_SKIP_OR_FAIL("redis-server is not installed");
  tiers::testing::RedisServer redis;
  ASSERT_TRUE(redis.start());
  EngineConfig cfg = base_config("");
  cfg.kv_redis = redis.url("not-the-password");
  auto e = Engine::create(cfg);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.status().code(), StatusCode::invalid_argument);
  EXPECT_EQ(e.status().message().find("not-the-password"), std::string::npos);
}

// What an attacker with read access to the tiers sees: no run of four of
// the prompt's token ids and none of its words, in any block file or Redis
// value. The oracle is the prompt's own tokenization.
TEST(TieredEngine, BlocksShowNoPromptTokensOrWords) {
  if (!tiers::testing::have_redis_server()) RC_SKIP_OR_FAIL("redis-server is not installed");
  tiers::testing::RedisServer redis;
  ASSERT_TRUE(redis.start());
  TempDir dir("plaintext");
  EngineConfig cfg = base_config("");
  cfg.kv_disk = dir.path().string();
  cfg.kv_redis = redis.url();
  std::unique_ptr<Engine> e = open(cfg);
  ASSERT_TRUE(e);
  std::string text;
  for (int i = 0; i < 12; ++i)
    text += "The secret password is SWORDFISH and the vault code is 4711. ";
  Result<std::vector<int32_t>> tokens = e->tokenize(text, true);
  ASSERT_TRUE(tokens.ok());
  ASSERT_GE(tokens.value().size(), 128u);
  logits_of(*e, tokens.value());
  e.reset();  // every queued write done

  std::vector<std::vector<uint8_t>> stored;
  for (const auto& entry : fs::recursive_directory_iterator(dir.path())) {
    if (entry.path().extension() != ".rckv") continue;
    std::ifstream in(entry.path(), std::ios::binary);
    stored.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  const size_t files = stored.size();
  for (const std::vector<uint8_t>& value : redis.values("rc:kv:*")) stored.push_back(value);
  ASSERT_GE(files, 2u);
  ASSERT_GE(stored.size(), 2 * files);
  const std::vector<int32_t>& ids = tokens.value();
  for (const std::vector<uint8_t>& bytes : stored) {
    for (size_t i = 0; i + 4 <= ids.size(); ++i) {
      std::vector<uint8_t> run(16);
      std::memcpy(run.data(), ids.data() + i, 16);
      ASSERT_EQ(std::search(bytes.begin(), bytes.end(), run.begin(), run.end()), bytes.end())
          << "token ids " << i << ".." << i + 3 << " in the clear";
    }
    for (std::string word : {"SWORDFISH", "secret", "password", "4711"}) {
      EXPECT_EQ(std::search(bytes.begin(), bytes.end(), word.begin(), word.end()), bytes.end())
          << word;
    }
  }
}

// Engine::forget: a gone prompt's own blocks leave the disk tier and Redis
// (and the tree), the prefix it shares with a kept prompt stays, and the
// answer does not change.
TEST(TieredEngine, ForgetErasesOnlyWhatTheGonePromptAloneUsed) {
  if (!tiers::testing::have_redis_server()) RC_SKIP_OR_FAIL("redis-server is not installed");
  tiers::testing::RedisServer redis;
  ASSERT_TRUE(redis.start());
  TempDir dir("forget");
  EngineConfig cfg = base_config("");
  std::unique_ptr<Engine> oracle = open(cfg);
  ASSERT_TRUE(oracle);
  cfg.kv_disk = dir.path().string();
  cfg.kv_redis = redis.url();
  const std::vector<int32_t> shared = random_tokens(128, 256, 30);  // two whole blocks
  std::vector<int32_t> gone = shared, kept = shared;
  const std::vector<int32_t> a = random_tokens(201, 256, 31), b = random_tokens(201, 256, 32);
  gone.insert(gone.end(), a.begin() + 1, a.end());  // without their BOS: they differ at once
  kept.insert(kept.end(), b.begin() + 1, b.end());
  {
    std::unique_ptr<Engine> e = open(cfg);
    logits_of(*e, gone);
    logits_of(*e, kept);
  }
  auto files = [&] {
    size_t n = 0;
    for (const auto& f : fs::recursive_directory_iterator(dir.path()))
      n += f.path().extension() == ".rckv";
    return n;
  };
  const size_t before = files();
  const size_t redis_before = redis.values("rc:kv:*").size();
  {
    std::unique_ptr<Engine> e = open(cfg);
    logits_of(*e, gone);  // in the tree too, so the tree's copy goes as well
    Result<ForgetResult> r = e->forget({gone}, {kept});
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    EXPECT_GT(r.value().tree_tokens, 0);
    EXPECT_EQ(r.value().tier_blocks, int64_t(gone.size() / 64 - shared.size() / 64));
  }
  EXPECT_EQ(files(), before - (gone.size() / 64 - shared.size() / 64));
  EXPECT_EQ(redis.values("rc:kv:*").size(), redis_before - (gone.size() / 64 - shared.size() / 64));
  std::unique_ptr<Engine> e = open(cfg);
  EXPECT_TRUE(same_bits(logits_of(*e, gone), logits_of(*oracle, gone)));
  EXPECT_EQ(e->stats().tiers.loaded_tokens, shared.size());
  logits_of(*e, kept);
  EXPECT_EQ(e->stats().tiers.loaded_tokens,
            shared.size() + (kept.size() - shared.size()) / 64 * 64);
}

}  // namespace
}  // namespace rc
