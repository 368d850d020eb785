// Emptying the cache tiers from outside an engine, for `radixchat-cli
// cache-clear` and `docs rm` (docs/architecture.md section 8). Any thread; no engine may
// hold the disk folder meanwhile (a folder in use is named in the error).
#pragma once

#include <cstdint>
#include <string>

#include "radixchat/status.h"

namespace rc {

// The disk tier's folder: `folder` itself, or for "" and "default"
// $XDG_CACHE_HOME/radixchat/kv (not_found when no such variable is set).
Result<std::string> disk_tier_folder(const std::string& folder);

// Removes every block the disk tier holds under `folder`, for every model
// ("default": $XDG_CACHE_HOME/radixchat/kv). Returns the blocks removed.
Result<int64_t> clear_disk_tier(const std::string& folder);

// Deletes every value `tenant` has in the Redis at `url`, for every model.
// Returns the values deleted; a refused password or an unreachable server
// is one clear error.
Result<int64_t> clear_redis_tenant(const std::string& url, const std::string& tenant);

}  // namespace rc
