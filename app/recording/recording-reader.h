// Reads a recording (recording-format.h): its facts, requests, events and
// snapshots, and the tree at any event seq (the nearest stored snapshot at
// or before it plus forward replay).
//
// A recording cut short (process killed) opens like any other: it holds
// what was committed. Opening checkpoints a leftover WAL when the file is
// writable. Single-threaded; one Recording per thread.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "radixchat/cache.h"
#include "radixchat/status.h"

struct sqlite3;

namespace rc::recording {

struct RequestRecord {
  uint64_t id = 0;
  double arrival_ms = 0;
  uint64_t arrival_seq = 0;  // next event seq when the request arrived
  int64_t match_seq = -1;    // seq of its match event, -1 when unknown
  std::vector<int32_t> prompt;
  int64_t matched_tokens = -1;  // -1: never matched (or not recorded)
  int64_t matched_node = -1;
  double ttft_ms = -1;
  double total_ms = -1;
  int64_t output_tokens = 0;
  std::vector<int32_t> output;
  std::string finish;  // empty: never finished in the recording
  double finish_ms = -1;
};

struct SnapshotRecord {
  int64_t id = 0;
  uint64_t next_seq = 0;
  double t_ms = 0;
  std::string source;  // engine | replay
  uint64_t tick = 0;
  int64_t nodes = 0;
  std::string stats_json;
};

struct GapRecord {
  int64_t after_seq = -1;
  int64_t resume_seq = -1;  // -1: unknown
  std::string reason;
};

struct RecordingSummary {
  std::map<std::string, std::string> meta;
  uint64_t events = 0;
  int64_t first_seq = -1, last_seq = -1;
  double duration_ms = 0;
  CachePolicy policy = CachePolicy::radix;
  int page_size = 1;
  int64_t total_pages = 0;
};

class Recording {
 public:
  static Result<std::unique_ptr<Recording>> open(const std::string& path);
  ~Recording();
  Recording(const Recording&) = delete;
  Recording& operator=(const Recording&) = delete;

  const RecordingSummary& summary() const { return summary_; }
  Result<std::vector<RequestRecord>> requests() const;
  Result<std::vector<SnapshotRecord>> snapshots() const;
  Result<std::vector<GapRecord>> gaps() const;
  // A stored snapshot in full.
  Result<CacheSnapshot> load_snapshot(int64_t id) const;
  // Events with from <= seq < to, in seq order.
  Result<std::vector<CacheEvent>> events(uint64_t from, uint64_t to) const;
  // Times (ms) of events [from, to), for timelines.
  Result<std::vector<std::pair<uint64_t, double>>> event_times() const;
  // The tree after every event with seq < `seq` was applied (next_seq ==
  // seq). Fails (not_found) before the first snapshot or across a gap that
  // no later snapshot bridges, and (corrupt_data) when replay meets an
  // event that does not fit the tree.
  Result<CacheSnapshot> tree_at(uint64_t seq) const;

 private:
  explicit Recording(sqlite3* db) : db_(db) {}
  Status load_summary();
  sqlite3* db_;
  RecordingSummary summary_;
};

}  // namespace rc::recording
