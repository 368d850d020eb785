// Policy names, the event queue and the cache factory.
#include <string>

#include "cache/hash-cache.h"
#include "cache/radix-cache.h"
#include "radixchat/cache.h"

namespace rc {

const char* cache_policy_name(CachePolicy policy) {
  switch (policy) {
    case CachePolicy::radix:
      return "radix";
    case CachePolicy::hash:
      return "hash";
    case CachePolicy::off:
      return "off";
  }
  return "unknown";
}

Result<CachePolicy> parse_cache_policy(std::string_view name) {
  if (name == "radix") return CachePolicy::radix;
  if (name == "hash") return CachePolicy::hash;
  if (name == "off") return CachePolicy::off;
  return Status(StatusCode::invalid_argument,
                "unknown cache policy '" + std::string(name) + "' (radix, hash or off)");
}

const char* cache_event_kind_name(CacheEventKind kind) {
  switch (kind) {
    case CacheEventKind::insert:
      return "insert";
    case CacheEventKind::split:
      return "split";
    case CacheEventKind::merge:
      return "merge";
    case CacheEventKind::match:
      return "match";
    case CacheEventKind::lock:
      return "lock";
    case CacheEventKind::unlock:
      return "unlock";
    case CacheEventKind::evict:
      return "evict";
    case CacheEventKind::reset:
      return "reset";
    case CacheEventKind::pin:
      return "pin";
    case CacheEventKind::unpin:
      return "unpin";
    case CacheEventKind::demote:
      return "demote";
    case CacheEventKind::promote:
      return "promote";
    case CacheEventKind::draft:
      return "draft";
  }
  return "unknown";
}

bool CacheEventQueue::drain(std::vector<CacheEvent>& out) {
  std::lock_guard<std::mutex> g(mu_);
  if (out.empty())
    out.swap(buf_);
  else {
    for (CacheEvent& e : buf_) out.push_back(std::move(e));
    buf_.clear();
  }
  bool lost = overflowed_;
  overflowed_ = false;
  return lost;
}

void CacheEventQueue::push_batch(std::vector<CacheEvent>& batch) {
  {
    std::lock_guard<std::mutex> g(mu_);
    for (CacheEvent& e : batch) {
      if (buf_.size() >= capacity_) {
        overflowed_ = true;  // drop the rest: the consumer resyncs from a snapshot
        break;
      }
      buf_.push_back(std::move(e));
    }
  }
  batch.clear();
}

namespace {
// OffCache: the no-reuse baseline. It is the radix tree with matching turned
// off, so insert/lock/evict keep exactly the radix semantics (a chunked
// request can still lock what it inserted) while every request prefills from
// scratch.
class OffCache final : public RadixCache {
 public:
  explicit OffCache(const CacheConfig& config) : RadixCache(config, /*reuse=*/false) {}
};
}  // namespace

Result<std::unique_ptr<KvCache>> make_kv_cache(const CacheConfig& config) {
  if (config.page_size < 1 || config.page_size > 4096)
    return Status(StatusCode::invalid_argument, "page_size must be in 1..4096");
  if (config.total_pages < 1 || config.total_pages > INT32_MAX)
    return Status(StatusCode::invalid_argument, "total_pages must be in 1..2^31-1");
  std::unique_ptr<KvCache> cache;
  switch (config.policy) {
    case CachePolicy::radix:
      cache = std::make_unique<RadixCache>(config);
      break;
    case CachePolicy::hash:
      cache = std::make_unique<HashCache>(config);
      break;
    case CachePolicy::off:
      cache = std::make_unique<OffCache>(config);
      break;
  }
  return cache;
}

}  // namespace rc
