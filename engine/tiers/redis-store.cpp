#include "tiers/redis-store.h"

#include <hiredis/hiredis.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <vector>

namespace rc::tiers {

namespace {

struct timeval to_timeval(std::chrono::steady_clock::duration d) {
  auto us =
      std::max<int64_t>(1000, std::chrono::duration_cast<std::chrono::microseconds>(d).count());
  struct timeval tv;
  tv.tv_sec = us / 1000000;
  tv.tv_usec = us % 1000000;
  return tv;
}

bool valid_tenant(std::string_view t) {
  if (t.empty() || t.size() > 64) return false;
  return std::all_of(t.begin(), t.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '-';
  });
}

std::string reply_text(const redisReply* r) { return std::string(r->str, r->len); }

}  // namespace

struct RedisStore::Reply {
  redisReply* r = nullptr;
  ~Reply() {
    if (r != nullptr) freeReplyObject(r);
  }
};

const char* redis_state_name(RedisState s) {
  switch (s) {
    case RedisState::up:
      return "up";
    case RedisState::down:
      return "down";
    case RedisState::refused:
      return "refused";
  }
  return "unknown";
}

Result<std::unique_ptr<RedisStore>> RedisStore::open(const Keyspace& space,
                                                     const RedisStoreOptions& options) {
  if (Status s = space.validate(); !s.ok()) return s;
  Result<RedisUrl> url = parse_redis_url(options.url);
  if (!url.ok()) return url.status();
  if (!valid_tenant(options.tenant))
    return Status(StatusCode::invalid_argument,
                  "Redis tenant '" + options.tenant.substr(0, 80) +
                      "' must be 1 to 64 of the characters A-Z a-z 0-9 . _ -");
  if (!options.key)
    return Status(StatusCode::invalid_argument, "the Redis tier needs a sealing key");
  if (options.timeout_ms < 1 || options.timeout_ms > 60000 || options.retry_ms < 0)
    return Status(StatusCode::invalid_argument,
                  "Redis timeout must be 1 to 60000 ms and the retry interval not negative");
  std::unique_ptr<RedisStore> store(new RedisStore(space, options, url.value()));
  std::unique_lock<std::timed_mutex> g(store->mu_);
  Status s = store->connect(Clock::now() + std::chrono::milliseconds(options.timeout_ms));
  if (!s.ok() && store->state_ == RedisState::refused)
    return Status(StatusCode::invalid_argument, s.message());
  g.unlock();
  return store;
}

RedisStore::RedisStore(const Keyspace& space, const RedisStoreOptions& options, RedisUrl url)
    : space_(space), options_(options), url_(std::move(url)) {
  prefix_ = "rc:kv:" + options_.tenant + ":" + space_.model.hex() + ":";
  context_ = "redis:" + options_.tenant;
}

RedisStore::~RedisStore() {
  if (ctx_ != nullptr) redisFree(ctx_);
}

std::string RedisStore::redis_key(const BlockKey& key) const { return prefix_ + key.hex(); }

void RedisStore::mark_down(RedisState state, const std::string& why) {
  if (ctx_ != nullptr) redisFree(ctx_);
  ctx_ = nullptr;
  state_ = state;
  error_ = why;
  next_retry_ = Clock::now() + std::chrono::milliseconds(options_.retry_ms);
  std::lock_guard<std::mutex> g(stats_mu_);
  ++stats_.errors;
  shown_state_ = state;
  shown_error_ = why;
}

Status RedisStore::down_status() const { return Status(StatusCode::internal, error_); }

Status RedisStore::connect(Clock::time_point deadline) {
  redisContext* c =
      redisConnectWithTimeout(url_.host.c_str(), url_.port, to_timeval(deadline - Clock::now()));
  if (c == nullptr || c->err != 0) {
    std::string why = c != nullptr ? c->errstr : "out of memory";
    if (c != nullptr) redisFree(c);
    mark_down(RedisState::down, "Redis " + url_.redacted() + " is down: " + why);
    return down_status();
  }
  ctx_ = c;
  state_ = RedisState::up;
  auto check = [&](std::initializer_list<std::string_view> argv, const char* what) -> Status {
    Result<std::shared_ptr<Reply>> r = command(argv, deadline);
    if (!r.ok()) return r.status();
    const redisReply* rep = r.value()->r;
    if (rep->type != REDIS_REPLY_ERROR) return {};
    std::string text = reply_text(rep);
    std::string why;
    if (text.starts_with("NOAUTH"))
      why =
          "the server needs a password: set RADIXCHAT_REDIS_PASSWORD (or --kv-redis-password-file)";
    else if (text.find("without any password configured") != std::string::npos)
      why = "the server has no password: leave it out of the URL";
    else if (text.starts_with("WRONGPASS") || text.find("invalid password") != std::string::npos)
      why = "wrong password (AUTH refused)";
    // An error reply here is a setting the server refuses, not an outage.
    mark_down(RedisState::refused,
              "Redis " + url_.redacted() + ": " +
                  (why.empty() ? std::string(what) + " failed: " + text : why));
    return down_status();
  };
  if (!url_.password.empty())
    if (Status s = check({"AUTH", url_.password}, "AUTH"); !s.ok()) return s;
  if (url_.db != 0)
    if (Status s = check({"SELECT", std::to_string(url_.db)}, "SELECT"); !s.ok()) return s;
  // PING also finds a server that wants a password we were not given (NOAUTH).
  if (Status s = check({"PING"}, "PING"); !s.ok()) return s;
  // The budget is Redis's own maxmemory; a server that will not say (a
  // renamed INFO) leaves it unknown.
  int64_t maxmemory = -1;
  if (Result<std::shared_ptr<Reply>> info = command({"INFO", "memory"}, deadline);
      info.ok() && info.value()->r->type == REDIS_REPLY_STRING) {
    const std::string text(info.value()->r->str, size_t(info.value()->r->len));
    if (size_t at = text.find("\nmaxmemory:"); at != std::string::npos)
      maxmemory = std::strtoll(text.c_str() + at + 11, nullptr, 10);
  } else if (!info.ok()) {
    return info.status();
  }
  error_.clear();
  std::lock_guard<std::mutex> g(stats_mu_);
  shown_state_ = RedisState::up;
  shown_error_.clear();
  maxmemory_ = maxmemory;
  return {};
}

Status RedisStore::ensure_connected(Clock::time_point deadline) {
  if (ctx_ != nullptr) return {};
  if (Clock::now() < next_retry_) return down_status();
  return connect(deadline);
}

Result<std::shared_ptr<RedisStore::Reply>> RedisStore::command(
    std::initializer_list<std::string_view> argv, Clock::time_point deadline) {
  if (Clock::now() >= deadline) {
    mark_down(RedisState::down, "Redis " + url_.redacted() + " did not answer in time");
    return down_status();
  }
  redisSetTimeout(ctx_, to_timeval(deadline - Clock::now()));
  std::vector<const char*> args;
  std::vector<size_t> lens;
  for (std::string_view a : argv) {
    args.push_back(a.data());
    lens.push_back(a.size());
  }
  auto reply = std::make_shared<Reply>();
  reply->r =
      static_cast<redisReply*>(redisCommandArgv(ctx_, int(args.size()), args.data(), lens.data()));
  if (reply->r == nullptr) {
    // hiredis reports a socket timeout as an I/O error with EAGAIN.
    const bool timed_out = ctx_->err == REDIS_ERR_IO && (errno == EAGAIN || errno == EWOULDBLOCK);
    std::string why = timed_out ? "no answer within " + std::to_string(options_.timeout_ms) + " ms"
                      : ctx_->errstr[0] != '\0' ? ctx_->errstr
                                                : "connection lost";
    mark_down(RedisState::down, "Redis " + url_.redacted() + " is down: " + why);
    return down_status();
  }
  return reply;
}

Result<Block> RedisStore::get(const BlockKey& key) {
  const auto deadline = Clock::now() + std::chrono::milliseconds(options_.timeout_ms);
  std::unique_lock<std::timed_mutex> g(mu_, deadline);
  if (!g.owns_lock()) return Status(StatusCode::internal, "Redis store busy past its timeout");
  if (Status s = ensure_connected(deadline); !s.ok()) return s;
  const std::string rkey = redis_key(key);
  Result<std::shared_ptr<Reply>> r = command({"GET", rkey}, deadline);
  if (!r.ok()) return r.status();
  const redisReply* rep = r.value()->r;
  if (rep->type == REDIS_REPLY_NIL) {
    std::lock_guard<std::mutex> sg(stats_mu_);
    ++stats_.misses;
    return Status(StatusCode::not_found, "block " + key.hex() + " is not in Redis");
  }
  if (rep->type != REDIS_REPLY_STRING) {
    std::lock_guard<std::mutex> sg(stats_mu_);
    ++stats_.errors;
    return Status(
        StatusCode::internal,
        "Redis GET failed: " + (rep->type == REDIS_REPLY_ERROR ? reply_text(rep) : "not a string"));
  }
  Decoded d = open_sealed_block(space_, *options_.key, context_, key,
                                {reinterpret_cast<const uint8_t*>(rep->str), size_t(rep->len)});
  if (d.fault != BlockFault::none) {
    {
      std::lock_guard<std::mutex> sg(stats_mu_);
      ++(d.fault == BlockFault::foreign ? stats_.refused_foreign : stats_.refused_corrupt);
    }
    // Best effort: if the delete fails the bad value is only refused again.
    Result<std::shared_ptr<Reply>> del = command({"DEL", rkey}, deadline);
    (void)del;
    return d.status;
  }
  std::lock_guard<std::mutex> sg(stats_mu_);
  ++stats_.hits;
  return std::move(d.block);
}

Status RedisStore::put(const Block& block) {
  Result<std::vector<uint8_t>> bytes = seal_block(space_, *options_.key, context_, block);
  if (!bytes.ok()) return bytes.status();
  const auto deadline = Clock::now() + std::chrono::milliseconds(options_.timeout_ms);
  std::unique_lock<std::timed_mutex> g(mu_, deadline);
  if (!g.owns_lock()) return Status(StatusCode::internal, "Redis store busy past its timeout");
  if (Status s = ensure_connected(deadline); !s.ok()) return s;
  std::string_view value(reinterpret_cast<const char*>(bytes.value().data()), bytes.value().size());
  const std::string rkey = redis_key(block.key);
  const std::string ttl = std::to_string(options_.ttl_seconds);
  Result<std::shared_ptr<Reply>> r = options_.ttl_seconds > 0
                                         ? command({"SET", rkey, value, "EX", ttl}, deadline)
                                         : command({"SET", rkey, value}, deadline);
  if (!r.ok()) return r.status();
  std::lock_guard<std::mutex> sg(stats_mu_);
  if (r.value()->r->type == REDIS_REPLY_ERROR) {
    ++stats_.errors;
    return Status(StatusCode::internal, "Redis SET failed: " + reply_text(r.value()->r));
  }
  ++stats_.puts;
  return {};
}

Result<bool> RedisStore::contains(const BlockKey& key) {
  const auto deadline = Clock::now() + std::chrono::milliseconds(options_.timeout_ms);
  std::unique_lock<std::timed_mutex> g(mu_, deadline);
  if (!g.owns_lock()) return Status(StatusCode::internal, "Redis store busy past its timeout");
  if (Status s = ensure_connected(deadline); !s.ok()) return s;
  Result<std::shared_ptr<Reply>> r = command({"EXISTS", redis_key(key)}, deadline);
  if (!r.ok()) return r.status();
  if (r.value()->r->type != REDIS_REPLY_INTEGER)
    return Status(StatusCode::internal, "Redis EXISTS gave no integer");
  return r.value()->r->integer > 0;
}

Status RedisStore::erase(const BlockKey& key) {
  const auto deadline = Clock::now() + std::chrono::milliseconds(options_.timeout_ms);
  std::unique_lock<std::timed_mutex> g(mu_, deadline);
  if (!g.owns_lock()) return Status(StatusCode::internal, "Redis store busy past its timeout");
  if (Status s = ensure_connected(deadline); !s.ok()) return s;
  Result<std::shared_ptr<Reply>> r = command({"DEL", redis_key(key)}, deadline);
  if (!r.ok()) return r.status();
  if (r.value()->r->type == REDIS_REPLY_ERROR)
    return Status(StatusCode::internal, "Redis DEL failed: " + reply_text(r.value()->r));
  return {};
}

Status RedisStore::clear() {
  return Status(StatusCode::invalid_argument,
                "the Redis tier is shared with other engines; clear it with Redis's own tools");
}

Result<int64_t> RedisStore::clear_tenant(const RedisStoreOptions& options) {
  // open() wants a keyspace and a key; neither is read by the deletion.
  Keyspace any;
  any.n_layers = any.n_kv_heads = any.head_dim = 1;
  RedisStoreOptions unsealed = options;
  unsealed.key = std::make_shared<const SealKey>(SealKey::random());
  Result<std::unique_ptr<RedisStore>> store = open(any, unsealed);
  if (!store.ok()) return store.status();
  return store.value()->delete_tenant_values();
}

Status RedisStore::for_each_block(const BlockVisitor& visit) {
  // The deadline covers the whole scan, as delete_tenant_values()'s does.
  const auto deadline =
      Clock::now() + std::chrono::milliseconds(options_.timeout_ms) + std::chrono::seconds(60);
  std::unique_lock<std::timed_mutex> g(mu_, deadline);
  if (!g.owns_lock()) return Status(StatusCode::internal, "Redis store busy past its timeout");
  if (Status s = ensure_connected(deadline); !s.ok()) return s;
  return scan_keys(prefix_ + "*", deadline, [&](std::string_view rkey) -> Status {
    Result<BlockKey> key = BlockKey::from_hex(rkey.substr(prefix_.size()));
    if (!key.ok()) return {};
    Result<std::shared_ptr<Reply>> r = command({"GET", rkey}, deadline);
    if (!r.ok()) return r.status();
    const redisReply* rep = r.value()->r;
    if (rep->type != REDIS_REPLY_STRING) return {};  // expired since the scan saw it
    Decoded d = open_sealed_block(space_, *options_.key, context_, key.value(),
                                  {reinterpret_cast<const uint8_t*>(rep->str), size_t(rep->len)});
    if (d.fault == BlockFault::none) visit(d.block);
    return {};
  });
}

Status RedisStore::scan_keys(const std::string& pattern, Clock::time_point deadline,
                             const std::function<Status(std::string_view)>& each) {
  std::string cursor = "0";
  do {
    Result<std::shared_ptr<Reply>> r =
        command({"SCAN", cursor, "MATCH", pattern, "COUNT", "1000"}, deadline);
    if (!r.ok()) return r.status();
    // The reply must outlive `each`, which may run commands of its own.
    const std::shared_ptr<Reply> reply = r.value();
    const redisReply* rep = reply->r;
    if (rep->type != REDIS_REPLY_ARRAY || rep->elements != 2 ||
        rep->element[0]->type != REDIS_REPLY_STRING || rep->element[1]->type != REDIS_REPLY_ARRAY)
      return Status(StatusCode::internal, "Redis SCAN gave an unexpected reply");
    cursor.assign(rep->element[0]->str, size_t(rep->element[0]->len));
    const redisReply* keys = rep->element[1];
    for (size_t i = 0; i < keys->elements; ++i) {
      if (keys->element[i]->type != REDIS_REPLY_STRING) continue;
      if (Status s = each({keys->element[i]->str, size_t(keys->element[i]->len)}); !s.ok())
        return s;
    }
  } while (cursor != "0");
  return {};
}

Result<int64_t> RedisStore::delete_tenant_values() {
  // Enough time for a large tenant: the deadline covers the whole scan.
  const auto deadline =
      Clock::now() + std::chrono::milliseconds(options_.timeout_ms) + std::chrono::seconds(60);
  std::unique_lock<std::timed_mutex> g(mu_, deadline);
  if (!g.owns_lock()) return Status(StatusCode::internal, "Redis store busy past its timeout");
  if (Status s = ensure_connected(deadline); !s.ok()) return s;
  int64_t deleted = 0;
  Status s = scan_keys("rc:kv:" + options_.tenant + ":*", deadline, [&](std::string_view k) {
    Result<std::shared_ptr<Reply>> del = command({"UNLINK", k}, deadline);
    if (!del.ok()) return del.status();
    if (del.value()->r->type == REDIS_REPLY_INTEGER) deleted += del.value()->r->integer;
    return Status();
  });
  if (!s.ok()) return s;
  return deleted;
}

StoreStats RedisStore::stats() const {
  std::lock_guard<std::mutex> g(stats_mu_);
  StoreStats s = stats_;
  s.bytes = -1;
  s.blocks = -1;
  return s;
}

int64_t RedisStore::maxmemory() const {
  std::lock_guard<std::mutex> g(stats_mu_);
  return maxmemory_;
}

RedisState RedisStore::state() const {
  std::lock_guard<std::mutex> g(stats_mu_);
  return shown_state_;
}

std::string RedisStore::last_error() const {
  std::lock_guard<std::mutex> g(stats_mu_);
  return shown_error_;
}

}  // namespace rc::tiers
