// Opens the cache tiers an EngineConfig asks for (tiers/kv-tiers.h): the
// keyspace from the model's fingerprint and the pool's shape, then each
// tier. Called once by Engine::create on the creating thread, after the
// pool exists.
#pragma once

#include <memory>

#include "backend.h"
#include "model/model-file.h"
#include "radixchat/cache.h"
#include "radixchat/engine-config.h"
#include "tiers/kv-tiers.h"

namespace rc::runtime {

// The sealing keys config names, or the defaults (EngineConfig's comment),
// made on first use; errors name the tier and the file.
Result<tiers::SealKey> disk_tier_key(const EngineConfig& config);
Result<tiers::SealKey> redis_tier_key(const EngineConfig& config);

// True when the config names any tier.
bool wants_tiers(const EngineConfig& config);

// invalid_argument, naming the setting, for a policy without reuse (off),
// a block size that is not a whole number of pages, a bad Redis URL or
// password, a disk folder another process holds or a budget below one block.
Result<std::unique_ptr<tiers::KvTiers>> open_tiers(const EngineConfig& config,
                                                   const model::ModelFile& model,
                                                   CachePolicy policy, kernels::Backend& backend,
                                                   kernels::KvPool& pool);

// Fills snapshot.held_below: per node, the tokens of it the tiers hold.
void mark_held_below(CacheSnapshot& snapshot, const tiers::KvTiers& tiers);

}  // namespace rc::runtime
