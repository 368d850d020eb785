// RedisStore against a private redis-server: round trip, refused values,
// tenants, a killed and a stalled server, reconnection, wrong passwords.
#include <gtest/gtest.h>
#include <hiredis/hiredis.h>

#include <chrono>
#include <set>
#include <string>
#include <thread>

#include "redis-server-fixture.h"
#include "skip-or-fail.h"
#include "tier-fixtures.h"
#include "tiers/redis-store.h"

namespace rc::tiers {
namespace {

using Clock = std::chrono::steady_clock;
using testing::make_block;
using testing::make_chain;
using testing::RedisServer;
using testing::small_space;

constexpr int kTimeoutMs = 200;
constexpr int kRetryMs = 300;

class RedisStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!testing::have_redis_server()) RC_SKIP_OR_FAIL("redis-server is not installed");
    ASSERT_TRUE(server_.start()) << "could not start redis-server on 25000-25999";
  }

  std::unique_ptr<RedisStore> open(const Keyspace& s, const std::string& tenant = "default") {
    RedisStoreOptions o;
    o.key = testing::test_key();
    o.url = server_.url();
    o.tenant = tenant;
    o.timeout_ms = kTimeoutMs;
    o.retry_ms = kRetryMs;
    auto r = RedisStore::open(s, o);
    EXPECT_TRUE(r.ok()) << r.status().to_string();
    return r.ok() ? std::move(r.value()) : nullptr;
  }

  // A raw connection for planting and reading values behind the store's back.
  redisReply* raw(const char* format, const std::string& key, const std::vector<uint8_t>* value) {
    redisContext* c = redisConnect("127.0.0.1", server_.port());
    if (c == nullptr || c->err != 0) return nullptr;
    freeReplyObject(redisCommand(c, "AUTH %s", RedisServer::kPassword));
    redisReply* r = static_cast<redisReply*>(
        value ? redisCommand(c, format, key.c_str(), value->data(), value->size())
              : redisCommand(c, format, key.c_str()));
    redisFree(c);
    return r;
  }
  void raw_set(const std::string& key, const std::vector<uint8_t>& value) {
    redisReply* r = raw("SET %s %b", key, &value);
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(r->type, REDIS_REPLY_STATUS);
    freeReplyObject(r);
  }
  std::vector<uint8_t> raw_get(const std::string& key) {
    redisReply* r = raw("GET %s", key, nullptr);
    std::vector<uint8_t> out;
    if (r != nullptr && r->type == REDIS_REPLY_STRING) out.assign(r->str, r->str + r->len);
    freeReplyObject(r);
    return out;
  }
  long long raw_ttl(const std::string& key) {
    redisReply* r = raw("TTL %s", key, nullptr);
    const long long ttl = r != nullptr && r->type == REDIS_REPLY_INTEGER ? r->integer : -99;
    freeReplyObject(r);
    return ttl;
  }

  RedisServer server_;
};

TEST_F(RedisStoreTest, RoundTrip) {
  Keyspace s = small_space();
  auto store = open(s);
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->state(), RedisState::up);
  std::vector<Block> chain = make_chain(s, 6, 1);
  for (const Block& b : chain) ASSERT_TRUE(store->put(b).ok());
  for (const Block& b : chain) {
    Result<Block> got = store->get(b.key);
    ASSERT_TRUE(got.ok()) << got.status().to_string();
    EXPECT_EQ(got.value().payload, b.payload);
    EXPECT_TRUE(store->contains(b.key).value());
  }
  ASSERT_TRUE(store->erase(chain[0].key).ok());
  EXPECT_EQ(store->get(chain[0].key).status().code(), StatusCode::not_found);
  EXPECT_FALSE(store->contains(chain[0].key).value());
  StoreStats st = store->stats();
  EXPECT_EQ(st.hits, 6);
  EXPECT_EQ(st.misses, 1);
  EXPECT_EQ(st.puts, 6);
  EXPECT_EQ(st.bytes, -1);

  // A second engine on the same server and tenant reads what the first wrote.
  auto other = open(s);
  EXPECT_EQ(other->get(chain[1].key).value().payload, chain[1].payload);
}

// A purge's sweep sees every block of its tenant and model, and only those.
TEST_F(RedisStoreTest, ForEachBlockVisitsThisTenantsBlocksOnly) {
  Keyspace s = small_space();
  auto mine = open(s, "alpha");
  auto theirs = open(s, "beta");
  ASSERT_TRUE(mine && theirs);
  std::vector<Block> chain = make_chain(s, 3, 41);
  for (const Block& b : chain) ASSERT_TRUE(mine->put(b).ok());
  ASSERT_TRUE(theirs->put(make_block(s, BlockKey{}, 42)).ok());
  std::set<std::string> seen;
  ASSERT_TRUE(mine->for_each_block([&](const Block& b) { seen.insert(b.key.hex()); }).ok());
  EXPECT_EQ(seen,
            (std::set<std::string>{chain[0].key.hex(), chain[1].key.hex(), chain[2].key.hex()}));
  EXPECT_EQ(mine->stats().hits, 0);
}

TEST_F(RedisStoreTest, TtlIsSetWhenAsked) {
  Keyspace s = small_space();
  RedisStoreOptions o;
  o.key = testing::test_key();
  o.url = server_.url();
  o.ttl_seconds = 100;
  auto store = RedisStore::open(s, o);
  ASSERT_TRUE(store.ok());
  Block x = make_block(s, BlockKey{}, 12);
  ASSERT_TRUE(store.value()->put(x).ok());
  redisContext* c = redisConnect("127.0.0.1", server_.port());
  ASSERT_TRUE(c != nullptr && c->err == 0);
  freeReplyObject(redisCommand(c, "AUTH %s", RedisServer::kPassword));
  auto* r =
      static_cast<redisReply*>(redisCommand(c, "TTL %s", store.value()->redis_key(x.key).c_str()));
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->type, REDIS_REPLY_INTEGER);
  EXPECT_GT(r->integer, 0);
  EXPECT_LE(r->integer, 100);
  freeReplyObject(r);
  redisFree(c);
}

TEST_F(RedisStoreTest, KeysAreNamespacedByTenantAndModel) {
  Keyspace s = small_space();
  auto a = open(s, "team-a");
  auto b = open(s, "team-b");
  Block x = make_block(s, BlockKey{}, 2);
  ASSERT_TRUE(a->put(x).ok());
  EXPECT_FALSE(b->contains(x.key).value());
  EXPECT_EQ(a->redis_key(x.key), "rc:kv:team-a:" + s.model.hex() + ":" + x.key.hex());
  RedisStoreOptions o;
  o.key = testing::test_key();
  o.url = server_.url();
  o.tenant = "no spaces";
  EXPECT_EQ(RedisStore::open(s, o).status().code(), StatusCode::invalid_argument);
}

TEST_F(RedisStoreTest, CorruptAndForeignValuesAreRefusedCountedAndDeleted) {
  Keyspace s = small_space();
  auto store = open(s);
  const SealKey& key = *testing::test_key();
  const std::string context = "redis:default";
  std::vector<Block> chain = make_chain(s, 4, 3);
  std::vector<uint8_t> good = seal_block(s, key, context, chain[0]).value();
  std::vector<uint8_t> cut(good.begin(), good.begin() + long(good.size() / 3));
  std::vector<uint8_t> flipped = seal_block(s, key, context, chain[1]).value();
  flipped[flipped.size() - 20] ^= 4;
  Keyspace bf16 = small_space(1, kernels::DType::bf16);
  std::vector<uint8_t> alien =
      seal_block(bf16, key, context, make_block(bf16, BlockKey{}, 9)).value();
  raw_set(store->redis_key(chain[0].key), cut);
  raw_set(store->redis_key(chain[1].key), flipped);
  raw_set(store->redis_key(chain[2].key), alien);
  raw_set(store->redis_key(chain[3].key), good);  // another key's block
  // The attack's forgery: the plaintext format over NaN values, checksum recomputed.
  Block nan = make_block(s, chain.back().key, 10);
  std::fill(nan.payload.begin(), nan.payload.end(), uint8_t(0xFF));
  chain.push_back(nan);
  raw_set(store->redis_key(nan.key), encode_block(s, nan).value());
  for (const Block& b : chain) {
    Result<Block> r = store->get(b.key);
    EXPECT_EQ(r.status().code(), StatusCode::corrupt_data) << r.status().to_string();
    EXPECT_FALSE(store->contains(b.key).value());  // deleted for a rewrite
  }
  StoreStats st = store->stats();
  EXPECT_EQ(st.refused_corrupt, 5);
  EXPECT_EQ(st.hits, 0);
}

// A tenant is a key prefix and a sealing key: tenant A's value, copied
// under tenant B's name, does not open for B (another key, another context),
// nor for a tenant that shares A's key file but not its name.
TEST_F(RedisStoreTest, AValueCopiedToAnotherTenantIsRefused) {
  Keyspace s = small_space();
  auto a = open(s, "team-a");
  RedisStoreOptions o;
  o.url = server_.url();
  o.tenant = "team-b";
  o.key = testing::test_key(42);
  o.timeout_ms = kTimeoutMs;
  auto b = RedisStore::open(s, o);
  ASSERT_TRUE(b.ok()) << b.status().to_string();
  auto same_key = open(s, "team-c");
  Block x = make_block(s, BlockKey{}, 2);
  ASSERT_TRUE(a->put(x).ok());
  const std::vector<uint8_t> value = raw_get(a->redis_key(x.key));
  ASSERT_FALSE(value.empty());
  raw_set(b.value()->redis_key(x.key), value);
  raw_set(same_key->redis_key(x.key), value);
  EXPECT_EQ(b.value()->get(x.key).status().code(), StatusCode::corrupt_data);
  EXPECT_EQ(same_key->get(x.key).status().code(), StatusCode::corrupt_data);
  EXPECT_EQ(b.value()->stats().refused_corrupt, 1);
  EXPECT_TRUE(a->get(x.key).ok());
}

TEST_F(RedisStoreTest, TheBudgetIsRedisMaxmemory) {
  auto store = open(small_space());
  EXPECT_EQ(store->maxmemory(), 0);  // the fixture sets none
  freeReplyObject(raw("CONFIG SET maxmemory %s", "10485760", nullptr));
  EXPECT_EQ(open(small_space())->maxmemory(), 10485760);
}

TEST_F(RedisStoreTest, ValuesExpireAndATenantCanBeCleared) {
  Keyspace s = small_space();
  RedisStoreOptions o;
  o.url = server_.url();
  o.tenant = "ttl";
  o.key = testing::test_key();
  o.timeout_ms = kTimeoutMs;
  o.ttl_seconds = 3600;
  auto store = RedisStore::open(s, o);
  ASSERT_TRUE(store.ok());
  std::vector<Block> chain = make_chain(s, 3, 5);
  for (const Block& b : chain) ASSERT_TRUE(store.value()->put(b).ok());
  const long long ttl = raw_ttl(store.value()->redis_key(chain[0].key));
  EXPECT_GT(ttl, 3500);
  EXPECT_LE(ttl, 3600);
  auto other = open(small_space(2), "ttl");  // another model, the same tenant
  ASSERT_TRUE(other->put(make_block(small_space(2), BlockKey{}, 1)).ok());
  auto kept = open(s, "someone-else");
  ASSERT_TRUE(kept->put(chain[0]).ok());
  Result<int64_t> cleared = RedisStore::clear_tenant(o);
  ASSERT_TRUE(cleared.ok()) << cleared.status().to_string();
  EXPECT_EQ(cleared.value(), 4);
  for (const Block& b : chain) EXPECT_FALSE(store.value()->contains(b.key).value());
  EXPECT_TRUE(kept->contains(chain[0].key).value());
}

TEST_F(RedisStoreTest, KilledServerFailsFastThenReconnects) {
  Keyspace s = small_space();
  auto store = open(s);
  Block x = make_block(s, BlockKey{}, 4);
  ASSERT_TRUE(store->put(x).ok());
  const int port = server_.port();
  server_.stop(SIGKILL);

  auto t0 = Clock::now();
  Result<Block> r = store->get(x.key);
  auto first_ms = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0).count();
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.status().code(), StatusCode::not_found);
  EXPECT_LE(first_ms, kTimeoutMs + 50);
  EXPECT_EQ(store->state(), RedisState::down);
  EXPECT_NE(store->last_error().find("is down"), std::string::npos) << store->last_error();
  // Within the retry interval calls do not touch the network at all.
  t0 = Clock::now();
  for (int i = 0; i < 100; ++i) EXPECT_FALSE(store->put(x).ok());
  EXPECT_LT(std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0).count(), 50);
  EXPECT_GE(store->stats().errors, 1);

  ASSERT_TRUE(server_.start(port));
  std::this_thread::sleep_for(std::chrono::milliseconds(kRetryMs + 50));
  ASSERT_TRUE(store->put(x).ok());  // the server restarted empty: write again
  EXPECT_EQ(store->state(), RedisState::up);
  EXPECT_EQ(store->last_error(), "");
  EXPECT_EQ(store->get(x.key).value().payload, x.payload);
}

TEST_F(RedisStoreTest, StalledServerCostsAtMostTheTimeout) {
  Keyspace s = small_space();
  auto store = open(s);
  Block x = make_block(s, BlockKey{}, 5);
  ASSERT_TRUE(store->put(x).ok());
  server_.pause();
  auto t0 = Clock::now();
  Result<Block> r = store->get(x.key);
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0).count();
  EXPECT_FALSE(r.ok());
  EXPECT_LE(ms, kTimeoutMs + 50);
  EXPECT_EQ(store->state(), RedisState::down);
  EXPECT_NE(store->last_error().find("no answer within"), std::string::npos) << store->last_error();
  server_.resume();
  std::this_thread::sleep_for(std::chrono::milliseconds(kRetryMs + 50));
  EXPECT_EQ(store->get(x.key).value().payload, x.payload);
  EXPECT_EQ(store->state(), RedisState::up);
}

TEST_F(RedisStoreTest, WrongOrMissingPasswordIsOneClearError) {
  Keyspace s = small_space();
  RedisStoreOptions o;
  o.key = testing::test_key();
  o.timeout_ms = kTimeoutMs;
  o.url = server_.url("not-the-password");
  auto r = RedisStore::open(s, o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::invalid_argument);
  EXPECT_NE(r.status().message().find("wrong password"), std::string::npos) << r.status().message();
  EXPECT_EQ(r.status().message().find("not-the-password"), std::string::npos);
  EXPECT_EQ(r.status().message().find('\n'), std::string::npos);
  o.url = server_.url("");
  r = RedisStore::open(s, o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::invalid_argument);
  EXPECT_NE(r.status().message().find("needs a password"), std::string::npos)
      << r.status().message();
}

TEST_F(RedisStoreTest, MissingDatabaseIsOneClearError) {
  RedisStoreOptions o;
  o.key = testing::test_key();
  o.url = server_.url() + "/999";
  auto r = RedisStore::open(small_space(), o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::invalid_argument);
  EXPECT_NE(r.status().message().find("SELECT failed"), std::string::npos) << r.status().message();
}

TEST_F(RedisStoreTest, UnreachableServerStartsDownAndFailsFast) {
  Keyspace s = small_space();
  const int port = server_.port();
  server_.stop(SIGTERM);
  RedisStoreOptions o;
  o.key = testing::test_key();
  o.url = "redis://:pw@127.0.0.1:" + std::to_string(port);
  o.timeout_ms = kTimeoutMs;
  o.retry_ms = 10000;
  auto r = RedisStore::open(s, o);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r.value()->state(), RedisState::down);
  auto t0 = Clock::now();
  EXPECT_FALSE(r.value()->get(make_block(s, BlockKey{}, 6).key).ok());
  EXPECT_LT(std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0).count(), 20);
}

}  // namespace
}  // namespace rc::tiers
