// L3-shared: KV blocks in a Redis server, shared by every engine pointed at it.
//
// Keys are "rc:kv:<tenant>:<model fingerprint hex>:<block key hex>"; values
// are blocks sealed (block-seal.h) under the tenant's key with the context
// "redis:<tenant>", so a value shows no tokens, a value written without the
// key or copied from another tenant is refused, and a refused one is
// deleted for someone to write again. Values expire after ttl_seconds.
// Redis's own maxmemory policy is the budget (allkeys-lru makes it a cache);
// stats().bytes and .blocks are -1.
//
// Bounded waiting: no call blocks longer than `timeout_ms` (the lock, the
// connect and the command share one deadline), except that resolving a
// host name goes through getaddrinfo, which has its own timeouts: give an
// IP address where that matters. When a call fails on the connection the
// store goes down: later calls fail at once (unavailable-style internal
// Status naming the URL) until `retry_ms` has passed, then one call tries
// to reconnect, and the store is up again when that works.
//
// A wrong, missing or unneeded password, or a database the server does not
// have, is an error of open() with one clear line; if it happens on a
// reconnect, state() says refused and calls fail with the same line. hiredis 0.14 (Debian) has no
// TLS: use a trusted network or an SSH tunnel for a remote server.
//
// Thread-safe: one connection, calls take turns.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "tiers/block-seal.h"
#include "tiers/block-store.h"
#include "tiers/redis-url.h"

struct redisContext;

namespace rc::tiers {

struct RedisStoreOptions {
  std::string url;                 // redis://[:password@]host:port[/db]
  std::string tenant = "default";  // 1-64 of [A-Za-z0-9._-]
  int timeout_ms = 250;
  int retry_ms = 1000;
  int64_t ttl_seconds = 0;             // 0: values live until Redis evicts them
  std::shared_ptr<const SealKey> key;  // required: the tenant's sealing key
};

// refused: the server answered but refused the password or database.
enum class RedisState { up, down, refused };
const char* redis_state_name(RedisState s);

class RedisStore final : public BlockStore {
 public:
  // invalid_argument for a bad URL, tenant or timeout, and for a password
  // or database Redis refuses; an unreachable server is not an error: the
  // store starts down and connects when the server answers.
  static Result<std::unique_ptr<RedisStore>> open(const Keyspace& space,
                                                  const RedisStoreOptions& options);
  ~RedisStore() override;

  const Keyspace& keyspace() const override { return space_; }
  Result<Block> get(const BlockKey& key) override;
  Status put(const Block& block) override;
  Result<bool> contains(const BlockKey& key) override;
  Status erase(const BlockKey& key) override;
  StoreStats stats() const override;
  Status for_each_block(const BlockVisitor& visit) override;
  Status clear() override;

  // Deletes every value of `options.tenant` at `options.url`, for every
  // model (SCAN and UNLINK, in batches): `cache-clear`. options.key is not
  // needed. Returns the values deleted; open()'s errors, or the connection's.
  static Result<int64_t> clear_tenant(const RedisStoreOptions& options);

  // Redis's maxmemory as last read on connecting: the tier's budget (0:
  // none set, Redis grows until the machine's memory; -1: not known yet).
  int64_t maxmemory() const;

  RedisState state() const;
  // Why the store is not up ("" when up).
  std::string last_error() const;
  // The Redis key of a block (tests, diagnostics).
  std::string redis_key(const BlockKey& key) const;
  const RedisUrl& url() const { return url_; }

 private:
  using Clock = std::chrono::steady_clock;
  struct Reply;
  RedisStore(const Keyspace& space, const RedisStoreOptions& options, RedisUrl url);
  // Connected and authenticated before `deadline`, or why not.
  Status ensure_connected(Clock::time_point deadline);
  Status connect(Clock::time_point deadline);
  // One command; a connection failure drops the connection and marks it down.
  Result<std::shared_ptr<Reply>> command(std::initializer_list<std::string_view> argv,
                                         Clock::time_point deadline);
  void mark_down(RedisState state, const std::string& why);
  Result<int64_t> delete_tenant_values();
  // SCANs the keys matching `pattern` and calls `each` with every one,
  // stopping at its first error. Under mu_.
  Status scan_keys(const std::string& pattern, Clock::time_point deadline,
                   const std::function<Status(std::string_view)>& each);
  Status down_status() const;

  Keyspace space_;
  RedisStoreOptions options_;
  RedisUrl url_;
  std::string prefix_;
  std::string context_;  // the sealing context: "redis:<tenant>"
  mutable std::timed_mutex mu_;
  redisContext* ctx_ = nullptr;
  RedisState state_ = RedisState::down;
  std::string error_;
  Clock::time_point next_retry_{};
  // state() and last_error() read copies under stats_mu_, so a caller never
  // waits behind a command holding the connection.
  mutable std::mutex stats_mu_;
  StoreStats stats_;
  RedisState shown_state_ = RedisState::down;
  std::string shown_error_;
  int64_t maxmemory_ = -1;
};

}  // namespace rc::tiers
