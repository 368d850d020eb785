// What the cache tiers below the pool report (docs/architecture.md section 8):
// the host tier (L2), the disk tier (L3) and a shared Redis (L3-shared).
// Plain values, copied out of the engine for /metrics, /v1/models, the
// status bar and the panel.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace rc {

struct TierInfo {
  std::string name;   // "host", "disk" or "redis"
  std::string where;  // the folder, or the URL without its password
  std::string state;  // "up", "down", "refused" (a password or database Redis refused) or
                      // "failing" (it answers, but its last write failed: disk full, no permission)
  std::string error;  // why it is not up
  int64_t budget_bytes = -1;  // Redis: its maxmemory (0: none set; -1: not known yet)
  int64_t bytes = -1;         // held; -1 where the store cannot know
  int64_t blocks = -1;
  uint64_t hits = 0;  // blocks read
  uint64_t misses = 0;
  uint64_t puts = 0;  // blocks written
  uint64_t refused =
      0;  // truncated, corrupt, foreign, unauthentic or non-finite blocks, never loaded
  uint64_t evictions = 0;
  uint64_t errors = 0;         // I/O or connection failures
  uint64_t loaded_tokens = 0;  // prompt tokens this tier supplied
  double load_ms = 0;          // time spent reading them, all requests
  double ms_per_block = 0;     // the cost model's read time of one block (0: not measured)
};

struct TierStats {
  bool enabled = false;
  int block_tokens = 0;
  int64_t block_bytes = 0;      // K and V of one block
  std::vector<TierInfo> tiers;  // fastest first
  uint64_t blocks_queued = 0;   // whole blocks copied out of the pool to be written below
  uint64_t blocks_dropped = 0;  // not written: the write queue was full
  int64_t queue_bytes = 0;      // waiting to be written now
  uint64_t loads = 0;           // requests that loaded blocks into the pool
  uint64_t recomputes = 0;      // requests whose held blocks the cost model chose to recompute
  uint64_t loaded_tokens = 0;
  uint64_t load_failures = 0;       // blocks a tier held but could not give back (refused, down)
  double prefill_ms_per_token = 0;  // the cost model's measured prefill speed (0: not measured)
};

}  // namespace rc
