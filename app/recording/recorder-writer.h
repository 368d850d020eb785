// Internal to the Recorder: the writer thread's half. Owns the SQLite
// connection, the prepared statements, the replay tree and the requests
// still waiting for their match event. Only the writer thread calls it
// (stats() excepted).
#pragma once

#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <sqlite3.h>

#include "recording/recorder.h"
#include "recording/redaction.h"
#include "recording/replay-tree.h"
#include "store/sqlite-util.h"

namespace rc::recording {

struct SnapshotItem {
  CacheSnapshot snap;
  std::string source;
};
struct EventsItem {
  std::vector<CacheEvent> events;
  bool gap_before = false;
  std::string reason;
};
struct ArrivalItem {
  uint64_t id = 0;
  std::vector<int32_t> prompt;
  std::vector<ChatMessage> messages;
  bool render = false;
};
struct FinishItem {
  uint64_t id = 0;
  RequestMetrics metrics;
  std::string reason;
  std::vector<int32_t> output;
};
struct MetaItem {
  std::string key, value;
};

class Recorder::Writer {
 public:
  static Result<std::unique_ptr<Writer>> create(const std::string& path,
                                                const RecorderOptions& options);
  ~Writer();

  Status write(double t_ms, SnapshotItem& item);
  Status write(double t_ms, EventsItem& item);
  Status write(double t_ms, ArrivalItem& item);
  Status write(double t_ms, FinishItem& item);
  Status write(double t_ms, MetaItem& item);

  uint64_t uncommitted_events() const { return uncommitted_; }
  Status commit();
  // Non-empty (the message) once the file is over options.max_bytes.
  std::string over_cap();
  // Records why writing stopped (meta 'stopped') and commits.
  void stop(const std::string& why);
  // Commits, folds the WAL into the file and closes it.
  Status finish();
  RecorderStats stats() const;

 private:
  struct Pending {
    std::vector<int32_t> prompt;
    int64_t cached = -1;  // RequestMetrics::cached_tokens once finished
  };
  struct MatchSeen {
    uint64_t seq;
    NodeId node;
    std::vector<Token> path;  // the matched tokens
  };
  Writer(sqlite3* db, const RecorderOptions& options) : db_(db), options_(options) {}
  // The ids as they go into the file: hashed when redacting.
  std::vector<int32_t> stored_ids(const std::vector<int32_t>& ids) const {
    return redactor_ ? (*redactor_)(ids) : ids;
  }
  Status prepare();
  Status begin();
  Status store_snapshot(double t_ms, const CacheSnapshot& snap, const std::string& source);
  Status store_event(double t_ms, const CacheEvent& e);
  Status on_match(const CacheEvent& e);
  Status resolve(uint64_t id);
  Status set_match(uint64_t id, uint64_t seq, NodeId node, size_t tokens);

  sqlite3* db_;
  const RecorderOptions& options_;
  std::optional<TokenRedactor> redactor_;  // set when options_.redact
  store::detail::Stmt ins_event_, ins_snapshot_, ins_request_, upd_match_, upd_finish_, ins_gap_,
      ins_meta_;
  bool in_txn_ = false;
  uint64_t uncommitted_ = 0;
  ReplayTree tree_;
  CacheSnapshot header_;       // policy, page size, pool of the latest snapshot
  bool replay_exact_ = false;  // radix policy: the writer's snapshots are exact
  uint64_t since_snapshot_ = 0;
  int64_t last_seq_ = -1;
  // Requests not yet tied to their match event, and match events not yet
  // tied to a request. A request is tied when it finished (so its matched
  // length is known): to the oldest unclaimed match whose path is a prefix
  // of its prompt and whose length is what the request reports.
  std::unordered_map<uint64_t, Pending> pending_;
  std::deque<MatchSeen> matches_;
  // Finishes that came before their request's arrival (the engine thread
  // raced the submitting thread), applied when it arrives.
  std::unordered_map<uint64_t, std::pair<double, FinishItem>> early_finish_;
  mutable std::mutex stats_mu_;
  RecorderStats stats_;
};

}  // namespace rc::recording
