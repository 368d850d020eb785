// DiskStore: round trip, restart, owner-only modes, the budget, damaged and
// foreign files, one process per folder, and kill -9 during writes.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

#include "tier-fixtures.h"
#include "tiers/disk-store.h"

namespace rc::tiers {
namespace {

namespace fs = std::filesystem;
using testing::make_block;
using testing::make_chain;
using testing::small_space;

class DiskStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("rc-disk-" + std::to_string(::getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
  }
  void TearDown() override { fs::remove_all(root_); }

  std::unique_ptr<DiskStore> open(const Keyspace& s, int64_t budget = 1 << 20) {
    DiskStoreOptions o;
    o.key = testing::test_key();
    o.root = root_;
    o.budget_bytes = budget;
    o.fsync = false;
    auto r = DiskStore::open(s, o);
    EXPECT_TRUE(r.ok()) << r.status().to_string();
    return r.ok() ? std::move(r.value()) : nullptr;
  }
  int64_t bytes_on_disk(const fs::path& dir) {
    int64_t n = 0;
    for (const auto& e : fs::directory_iterator(dir))
      if (e.path().extension() == ".rckv") n += int64_t(e.file_size());
    return n;
  }

  fs::path root_;
};

TEST_F(DiskStoreTest, RoundTripAndStats) {
  Keyspace s = small_space();
  auto store = open(s);
  std::vector<Block> chain = make_chain(s, 5, 1);
  for (const Block& b : chain) ASSERT_TRUE(store->put(b).ok());
  for (const Block& b : chain) {
    Result<Block> got = store->get(b.key);
    ASSERT_TRUE(got.ok()) << got.status().to_string();
    EXPECT_EQ(got.value().payload, b.payload);
    EXPECT_EQ(got.value().tokens, b.tokens);
    EXPECT_TRUE(store->contains(b.key).value());
  }
  Block absent = make_block(s, BlockKey{}, 999);
  EXPECT_EQ(store->get(absent.key).status().code(), StatusCode::not_found);
  EXPECT_FALSE(store->contains(absent.key).value());
  ASSERT_TRUE(store->erase(chain[0].key).ok());
  EXPECT_EQ(store->get(chain[0].key).status().code(), StatusCode::not_found);
  StoreStats st = store->stats();
  EXPECT_EQ(st.blocks, 4);
  EXPECT_EQ(st.bytes, 4 * int64_t(sealed_block_bytes(s)));
  EXPECT_EQ(st.hits, 5);
  EXPECT_EQ(st.misses, 2);
  EXPECT_EQ(st.puts, 5);
  EXPECT_EQ(bytes_on_disk(store->folder()), st.bytes);
}

TEST_F(DiskStoreTest, SurvivesRestartWithItsLruOrder) {
  Keyspace s = small_space();
  std::vector<Block> chain = make_chain(s, 4, 2);
  {
    auto store = open(s);
    for (const Block& b : chain) ASSERT_TRUE(store->put(b).ok());
    // Modification times order the LRU on reopen: make the gaps visible.
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    ASSERT_TRUE(store->get(chain[0].key).ok());
  }
  auto store = open(s);
  std::vector<BlockKey> keys = store->keys();
  ASSERT_EQ(keys.size(), 4u);
  EXPECT_EQ(keys.back(), chain[0].key);  // most recently used
  for (const Block& b : chain) EXPECT_EQ(store->get(b.key).value().payload, b.payload);
}

// A purge's sweep reads every block without making it recent or counting
// it as a hit, and skips a block whose file was changed.
TEST_F(DiskStoreTest, ForEachBlockVisitsWhatIsHeldAndLeavesTheLruAlone) {
  Keyspace s = small_space();
  auto store = open(s);
  std::vector<Block> chain = make_chain(s, 4, 21);
  for (const Block& b : chain) ASSERT_TRUE(store->put(b).ok());
  {
    // Flip every bit of one sealed byte (a constant written there matched
    // the random ciphertext one run in 256).
    std::fstream f(store->folder() / (chain[1].key.hex() + ".rckv"),
                   std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(60);
    const char c = char(f.get());
    f.seekp(60);
    f.put(char(~c));
  }
  const std::vector<BlockKey> order = store->keys();
  std::vector<Block> seen;
  ASSERT_TRUE(store->for_each_block([&](const Block& b) { seen.push_back(b); }).ok());
  ASSERT_EQ(seen.size(), 3u);
  for (const Block& b : seen) {
    EXPECT_NE(b.key, chain[1].key);
    auto it =
        std::find_if(chain.begin(), chain.end(), [&](const Block& c) { return c.key == b.key; });
    ASSERT_NE(it, chain.end());
    EXPECT_EQ(b.tokens, it->tokens);
    EXPECT_EQ(b.parent, it->parent);
  }
  EXPECT_EQ(store->keys(), order);
  EXPECT_EQ(store->stats().hits, 0);
}

TEST_F(DiskStoreTest, FilesAreOwnerOnly) {
  Keyspace s = small_space();
  auto store = open(s);
  Block b = make_block(s, BlockKey{}, 3);
  ASSERT_TRUE(store->put(b).ok());
  struct stat st;
  ASSERT_EQ(0, ::stat(store->folder().c_str(), &st));
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  ASSERT_EQ(0, ::stat(root_.c_str(), &st));
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  ASSERT_EQ(0, ::stat((store->folder() / (b.key.hex() + ".rckv")).c_str(), &st));
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

TEST_F(DiskStoreTest, BudgetIsNeverExceeded) {
  Keyspace s = small_space();
  const int64_t block = int64_t(sealed_block_bytes(s));
  const int64_t budget = 10 * block + block / 2;
  auto store = open(s, budget);
  std::mt19937 rng(7);
  std::vector<Block> all = make_chain(s, 60, 3);
  for (int i = 0; i < 300; ++i) {
    const Block& b = all[rng() % all.size()];
    if (rng() % 3 == 0) {
      (void)store->get(b.key);
    } else {
      ASSERT_TRUE(store->put(b).ok());
    }
    StoreStats st = store->stats();
    ASSERT_LE(st.bytes, budget);
    ASSERT_EQ(bytes_on_disk(store->folder()), st.bytes);
  }
  EXPECT_EQ(store->stats().blocks, 10);
  EXPECT_GT(store->stats().evictions, 0);
  // The least recently used goes first: touch the oldest, put one more.
  std::vector<BlockKey> keys = store->keys();
  ASSERT_TRUE(store->get(keys[0]).ok());
  Block fresh = make_block(s, BlockKey{}, 77777);
  ASSERT_TRUE(store->put(fresh).ok());
  EXPECT_TRUE(store->contains(keys[0]).value());
  EXPECT_FALSE(store->contains(keys[1]).value());
  // A smaller budget on reopen sheds the oldest at once.
  store.reset();
  auto smaller = open(s, 3 * block);
  EXPECT_LE(smaller->stats().bytes, 3 * block);
  EXPECT_EQ(bytes_on_disk(smaller->folder()), smaller->stats().bytes);
}

TEST_F(DiskStoreTest, BudgetBelowOneBlockIsAClearError) {
  DiskStoreOptions o;
  o.key = testing::test_key();
  o.root = root_;
  o.budget_bytes = 10;
  auto r = DiskStore::open(small_space(), o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("smaller than one KV block"), std::string::npos);
}

void overwrite(const fs::path& p, const std::vector<uint8_t>& bytes) {
  std::ofstream f(p, std::ios::binary | std::ios::trunc);
  f.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
}

std::vector<uint8_t> slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), {}};
}

TEST_F(DiskStoreTest, DamagedAndForeignFilesAreRefusedCountedAndDropped) {
  Keyspace s = small_space();
  auto store = open(s);
  std::vector<Block> chain = make_chain(s, 4, 4);
  for (const Block& b : chain) ASSERT_TRUE(store->put(b).ok());
  auto path = [&](const Block& b) { return store->folder() / (b.key.hex() + ".rckv"); };
  std::vector<uint8_t> bytes = slurp(path(chain[0]));
  bytes.resize(bytes.size() / 2);
  overwrite(path(chain[0]), bytes);  // truncated
  bytes = slurp(path(chain[1]));
  bytes[bytes.size() / 2] ^= 0x10;
  overwrite(path(chain[1]), bytes);                  // bit flip
  overwrite(path(chain[2]), slurp(path(chain[3])));  // another block under this name
  for (int i = 0; i < 3; ++i) {
    Result<Block> r = store->get(chain[size_t(i)].key);
    EXPECT_EQ(r.status().code(), StatusCode::corrupt_data) << i;
    EXPECT_FALSE(store->contains(chain[size_t(i)].key).value());
    EXPECT_FALSE(fs::exists(path(chain[size_t(i)])));
  }
  // Sealing authenticates the block's key: a moved file fails like a changed one.
  EXPECT_EQ(store->stats().refused_corrupt, 3);
  EXPECT_TRUE(store->get(chain[3].key).ok());

  // Blocks of another KV type and of another model, sealed under this
  // installation's key but copied into this keyspace's folder under this
  // keyspace's key names, fail authentication too.
  Keyspace bf16 = small_space(1, kernels::DType::bf16);
  Keyspace model2 = small_space(2);
  Block mine1 = make_block(s, BlockKey{}, 5), mine2 = make_block(s, BlockKey{}, 6);
  overwrite(
      store->folder() / (mine1.key.hex() + ".rckv"),
      seal_block(bf16, *testing::test_key(), "disk", make_block(bf16, BlockKey{}, 5)).value());
  overwrite(
      store->folder() / (mine2.key.hex() + ".rckv"),
      seal_block(model2, *testing::test_key(), "disk", make_block(model2, BlockKey{}, 6)).value());
  store.reset();
  store = open(s);
  EXPECT_EQ(store->get(mine1.key).status().code(), StatusCode::corrupt_data);
  EXPECT_EQ(store->get(mine2.key).status().code(), StatusCode::corrupt_data);
  EXPECT_EQ(store->stats().refused_corrupt, 2);
  EXPECT_EQ(store->stats().hits, 0);
}

// The forged block of the attack: the old plaintext format with NaN values
// and a recomputed checksum, and a block sealed under another key.
TEST_F(DiskStoreTest, ForgedBlocksAreRefused) {
  Keyspace s = small_space();
  auto store = open(s);
  Block nan = make_block(s, BlockKey{}, 8);
  for (size_t i = 0; i + 1 < nan.payload.size(); i += 2) {
    nan.payload[i] = 0x00;
    nan.payload[i + 1] = 0x7E;  // f16 NaN
  }
  const Block other = make_block(s, nan.key, 10);
  overwrite(store->folder() / (nan.key.hex() + ".rckv"), encode_block(s, nan).value());
  overwrite(store->folder() / (other.key.hex() + ".rckv"),
            seal_block(s, *testing::test_key(99), "disk", other).value());
  store.reset();
  store = open(s);
  EXPECT_EQ(store->get(nan.key).status().code(), StatusCode::corrupt_data);
  Result<Block> r = store->get(other.key);
  EXPECT_EQ(r.status().code(), StatusCode::corrupt_data);
  EXPECT_NE(r.status().message().find("unauthentic"), std::string::npos) << r.status().message();
  EXPECT_EQ(store->stats().refused_corrupt, 2);
}

TEST_F(DiskStoreTest, ClearRootRemovesEveryModelsBlocks) {
  {
    auto a = open(small_space(1));
    auto b = open(small_space(2));
    for (const Block& x : make_chain(small_space(1), 3, 1)) ASSERT_TRUE(a->put(x).ok());
    for (const Block& x : make_chain(small_space(2), 2, 2)) ASSERT_TRUE(b->put(x).ok());
    // A folder a running engine holds is left, and named.
    Result<int64_t> busy = DiskStore::clear_root(root_);
    ASSERT_FALSE(busy.ok());
    EXPECT_NE(busy.status().message().find("in use"), std::string::npos);
  }
  Result<int64_t> cleared = DiskStore::clear_root(root_);
  ASSERT_TRUE(cleared.ok()) << cleared.status().to_string();
  EXPECT_EQ(cleared.value(), 5);
  int64_t files = 0;
  for (const auto& e : fs::recursive_directory_iterator(root_)) files += e.is_regular_file();
  EXPECT_EQ(files, 0);
  EXPECT_EQ(DiskStore::clear_root(root_ / "missing").value(), 0);
}

TEST_F(DiskStoreTest, ThreadsShareOneStore) {
  Keyspace s = small_space();
  const int64_t block = int64_t(sealed_block_bytes(s));
  auto store = open(s, 16 * block);
  std::vector<Block> all = make_chain(s, 40, 11);
  std::vector<std::thread> threads;
  std::atomic<int> bad{0};
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      std::mt19937 rng{uint32_t(t)};
      for (int i = 0; i < 200; ++i) {
        const Block& b = all[rng() % all.size()];
        if (rng() % 2) {
          if (!store->put(b).ok()) ++bad;
        } else if (Result<Block> r = store->get(b.key); r.ok()) {
          if (r.value().payload != b.payload) ++bad;
        } else if (r.status().code() != StatusCode::not_found) {
          ++bad;
        }
        if (store->stats().bytes > 16 * block) ++bad;
      }
    });
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_EQ(bytes_on_disk(store->folder()), store->stats().bytes);
  EXPECT_EQ(int64_t(store->keys().size()), store->stats().blocks);
}

TEST_F(DiskStoreTest, TwoKeyspacesLiveSideBySide) {
  Keyspace f16 = small_space();
  Keyspace bf16 = small_space(1, kernels::DType::bf16);
  auto a = open(f16);
  auto b = open(bf16);
  ASSERT_NE(a->folder(), b->folder());
  Block x = make_block(f16, BlockKey{}, 6);
  ASSERT_TRUE(a->put(x).ok());
  EXPECT_FALSE(b->contains(x.key).value());
}

TEST_F(DiskStoreTest, OneProcessPerFolder) {
  Keyspace s = small_space();
  auto store = open(s);
  pid_t child = ::fork();
  if (child == 0) {
    DiskStoreOptions o;
    o.key = testing::test_key();
    o.root = root_;
    auto r = DiskStore::open(s, o);
    bool clear =
        !r.ok() && r.status().message().find("in use by another process") != std::string::npos;
    ::_exit(clear ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(child, ::waitpid(child, &status, 0));
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

TEST_F(DiskStoreTest, LeftoverTempFilesAreRemovedOnOpen) {
  Keyspace s = small_space();
  fs::path dir;
  {
    auto store = open(s);
    dir = store->folder();
  }
  overwrite(dir / (std::string(32, 'a') + ".tmp"), {1, 2, 3});
  auto store = open(s);
  EXPECT_FALSE(fs::exists(dir / (std::string(32, 'a') + ".tmp")));
  EXPECT_EQ(store->stats().blocks, 0);
}

// A child writes blocks in a loop (fsync on, as in use) and is killed with
// SIGKILL at a random moment, fifty times. After each kill the folder opens,
// every listed block reads back intact or is refused cleanly, the budget
// holds within one block, and nothing is left half-written.
TEST_F(DiskStoreTest, FiftyKillNinesDuringWritesLeaveAStoreThatOpens) {
  Keyspace s = small_space();
  const int64_t block = int64_t(sealed_block_bytes(s));
  const int64_t budget = 24 * block;
  std::vector<Block> all = make_chain(s, 80, 9);
  std::mt19937 rng(1234);
  int64_t readable = 0;
  int torn = 0;  // rounds that killed a write before its rename
  for (int round = 0; round < 50; ++round) {
    pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      DiskStoreOptions o;
      o.key = testing::test_key();
      o.root = root_;
      o.budget_bytes = budget;
      o.fsync = true;
      auto r = DiskStore::open(s, o);
      if (!r.ok()) ::_exit(3);
      for (uint32_t i = uint32_t(round);; ++i) (void)r.value()->put(all[(i * 7) % all.size()]);
    }
    std::this_thread::sleep_for(std::chrono::microseconds(2000 + rng() % 30000));
    ASSERT_EQ(0, ::kill(child, SIGKILL));
    int status = 0;
    ASSERT_EQ(child, ::waitpid(child, &status, 0));
    ASSERT_TRUE(WIFSIGNALED(status)) << "the writer exited by itself: " << status;
    for (const auto& e : fs::directory_iterator(root_))
      for (const auto& f : fs::directory_iterator(e.path())) torn += f.path().extension() == ".tmp";

    auto store = open(s, budget);
    ASSERT_NE(store, nullptr) << "round " << round;
    ASSERT_LE(store->stats().bytes, budget + block);
    for (const BlockKey& k : store->keys()) {
      Result<Block> got = store->get(k);
      if (got.ok()) {
        ++readable;
        bool known = false;
        for (const Block& b : all) known |= b.key == k && b.payload == got.value().payload;
        ASSERT_TRUE(known);
      } else {
        ASSERT_EQ(got.status().code(), StatusCode::corrupt_data) << got.status().to_string();
      }
    }
    for (const auto& e : fs::directory_iterator(store->folder()))
      ASSERT_NE(e.path().extension(), ".tmp");
  }
  EXPECT_GT(readable, 0);
  std::printf("50 kill -9s: %d left a half-written temporary file, %lld blocks read back\n", torn,
              static_cast<long long>(readable));
}

TEST(DiskRoot, FollowsXdgThenHome) {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  const char* home = std::getenv("HOME");
  std::string saved_xdg = xdg ? xdg : "", saved_home = home ? home : "";
  ::setenv("XDG_CACHE_HOME", "/x/cache", 1);
  EXPECT_EQ(default_disk_root().value(), fs::path("/x/cache/radixchat/kv"));
  ::setenv("XDG_CACHE_HOME", "relative", 1);  // the spec says: ignore
  ::setenv("HOME", "/home/u", 1);
  EXPECT_EQ(default_disk_root().value(), fs::path("/home/u/.cache/radixchat/kv"));
  ::unsetenv("XDG_CACHE_HOME");
  ::unsetenv("HOME");
  EXPECT_EQ(default_disk_root().status().code(), StatusCode::not_found);
  if (xdg) ::setenv("XDG_CACHE_HOME", saved_xdg.c_str(), 1);
  if (home) ::setenv("HOME", saved_home.c_str(), 1);
}

}  // namespace
}  // namespace rc::tiers
