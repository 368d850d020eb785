#include "recording/recorder-writer.h"

#include <algorithm>
#include <chrono>
#include <ctime>

#include <nlohmann/json.hpp>

#include "recording/recording-format.h"

namespace rc::recording {

using store::detail::exec;
using store::detail::Stmt;

namespace {

bool starts_with(const std::vector<int32_t>& prompt, const std::vector<Token>& path) {
  return path.size() <= prompt.size() && std::equal(path.begin(), path.end(), prompt.begin());
}

std::string stats_json(const CacheStats& s) {
  return nlohmann::json{{"total_pages", s.total_pages},
                        {"free_pages", s.free_pages},
                        {"evictable_pages", s.evictable_pages},
                        {"protected_pages", s.protected_pages},
                        {"cached_tokens", s.cached_tokens},
                        {"nodes", s.nodes},
                        {"prompt_tokens", s.prompt_tokens},
                        {"hit_tokens", s.hit_tokens},
                        {"evictions", s.evictions},
                        {"bytes_per_page", s.bytes_per_page}}
      .dump();
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

}  // namespace

Result<std::unique_ptr<Recorder::Writer>> Recorder::Writer::create(const std::string& path,
                                                                   const RecorderOptions& options) {
  auto db = open_recording_db(path, true);
  if (!db.ok()) return db.status();
  std::unique_ptr<Writer> w(new Writer(db.value(), options));
  if (options.redact) w->redactor_ = TokenRedactor::with_random_salt();
  RC_STORE_TRY(create_schema(w->db_));
  RC_STORE_TRY(w->prepare());
  RC_STORE_TRY(w->begin());
  if (options.redact) {
    MetaItem redacted{kRedactedMetaKey, kRedactedMetaValue};
    RC_STORE_TRY(w->write(0, redacted));
  }
  MetaItem format{"format", "radixchat-recording " + std::to_string(kFormatVersion)};
  MetaItem started{"started", utc_now()};
  MetaItem source{"source", options.source};
  RC_STORE_TRY(w->write(0, format));
  RC_STORE_TRY(w->write(0, started));
  RC_STORE_TRY(w->write(0, source));
  RC_STORE_TRY(w->commit());
  return w;
}

Recorder::Writer::~Writer() {
  ins_event_ = {};
  ins_snapshot_ = {};
  ins_request_ = {};
  upd_match_ = {};
  upd_finish_ = {};
  ins_gap_ = {};
  ins_meta_ = {};
  sqlite3_close(db_);
}

Status Recorder::Writer::prepare() {
  auto prep = [&](Stmt& st, const char* sql) -> Status {
    auto s = Stmt::prepare(db_, sql);
    if (!s.ok()) return s.status();
    st = std::move(s.value());
    return {};
  };
  RC_STORE_TRY(prep(ins_event_,
                    "INSERT INTO events(seq, t_ms, kind, node, parent, other, token_count, "
                    "page_count, tick, tokens, pages) VALUES(?,?,?,?,?,?,?,?,?,?,?)"));
  RC_STORE_TRY(prep(ins_snapshot_,
                    "INSERT INTO snapshots(next_seq, t_ms, source, tick, nodes, stats, data) "
                    "VALUES(?,?,?,?,?,?,?)"));
  RC_STORE_TRY(prep(ins_request_,
                    "INSERT OR REPLACE INTO requests(id, arrival_ms, arrival_seq, prompt_tokens, "
                    "prompt) VALUES(?,?,?,?,?)"));
  RC_STORE_TRY(prep(upd_match_,
                    "UPDATE requests SET match_seq = ?, matched_node = ?, matched_tokens = ? "
                    "WHERE id = ?"));
  RC_STORE_TRY(prep(upd_finish_,
                    "UPDATE requests SET matched_tokens = ?, ttft_ms = ?, total_ms = ?, "
                    "output_tokens = ?, output = ?, finish = ?, finish_ms = ? WHERE id = ?"));
  RC_STORE_TRY(
      prep(ins_gap_, "INSERT INTO gaps(after_seq, resume_seq, t_ms, reason) VALUES(?,?,?,?)"));
  RC_STORE_TRY(prep(ins_meta_, "INSERT OR REPLACE INTO meta(key, value) VALUES(?,?)"));
  return {};
}

Status Recorder::Writer::begin() {
  if (in_txn_) return {};
  RC_STORE_TRY(exec(db_, "BEGIN"));
  in_txn_ = true;
  return {};
}

Status Recorder::Writer::commit() {
  if (!in_txn_) return {};
  RC_STORE_TRY(exec(db_, "COMMIT"));
  in_txn_ = false;
  uncommitted_ = 0;
  auto st = Stmt::prepare(db_, "PRAGMA page_count");
  int64_t pages = 0;
  if (st.ok() && st->step().ok()) pages = st->int64(0);
  std::lock_guard<std::mutex> lock(stats_mu_);
  ++stats_.commits;
  stats_.bytes = pages * 4096;  // the default page size; WAL pages land here on checkpoint
  return {};
}

std::string Recorder::Writer::over_cap() {
  std::lock_guard<std::mutex> lock(stats_mu_);
  if (stats_.bytes < options_.max_bytes) return {};
  return "recording stopped: the file reached its size cap of " +
         std::to_string(options_.max_bytes >> 20) +
         " MiB (--record-max-mb); everything up to here is saved";
}

void Recorder::Writer::stop(const std::string& why) {
  if (!in_txn_) (void)begin();
  MetaItem m{"stopped", why};
  (void)write(0, m);
  (void)commit();
}

Status Recorder::Writer::finish() {
  Status s = commit();
  // One self-contained file again (no -wal/-shm beside it) for sharing.
  (void)exec(db_, "PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode = DELETE");
  return s;
}

RecorderStats Recorder::Writer::stats() const {
  std::lock_guard<std::mutex> lock(stats_mu_);
  return stats_;
}

Status Recorder::Writer::write(double, MetaItem& item) {
  // A path names the user's folders; the model's name stays.
  if (redactor_ && item.key == "model_path") return {};
  RC_STORE_TRY(begin());
  ins_meta_.reset();
  ins_meta_.bind(1, std::string_view(item.key));
  ins_meta_.bind(2, std::string_view(item.value));
  return ins_meta_.run();
}

Status Recorder::Writer::store_snapshot(double t_ms, const CacheSnapshot& snap,
                                        const std::string& source) {
  std::string blob;
  if (redactor_) {
    std::vector<CacheNodeInfo> nodes = snap.nodes;
    for (CacheNodeInfo& n : nodes) n.tokens = stored_ids(n.tokens);
    blob = encode_snapshot_nodes(nodes);
  } else {
    blob = encode_snapshot_nodes(snap.nodes);
  }
  ins_snapshot_.reset();
  ins_snapshot_.bind(1, int64_t(snap.next_seq));
  ins_snapshot_.bind(2, t_ms);
  ins_snapshot_.bind(3, std::string_view(source));
  ins_snapshot_.bind(4, int64_t(snap.tick));
  ins_snapshot_.bind(5, int64_t(snap.nodes.size()));
  ins_snapshot_.bind(6, std::string_view(stats_json(snap.stats)));
  ins_snapshot_.bind_blob(7, blob.data(), blob.size());
  RC_STORE_TRY(ins_snapshot_.run());
  since_snapshot_ = 0;
  std::lock_guard<std::mutex> lock(stats_mu_);
  ++stats_.snapshots;
  return {};
}

Status Recorder::Writer::write(double t_ms, SnapshotItem& item) {
  RC_STORE_TRY(begin());
  const CacheSnapshot& s = item.snap;
  if (!tree_.valid()) {
    MetaItem metas[] = {{"policy", cache_policy_name(s.policy)},
                        {"page_size", std::to_string(s.page_size)},
                        {"total_pages", std::to_string(s.total_pages)}};
    for (MetaItem& m : metas) RC_STORE_TRY(write(t_ms, m));
  }
  header_ = s;
  header_.nodes.clear();
  replay_exact_ = s.policy == CachePolicy::radix;
  // Restart replay only when the tree cannot continue from its own state
  // (the first snapshot, or the first after a gap). Otherwise the snapshot
  // is a checkpoint: events older than its next_seq may still be on their
  // way (drained after it was taken) and are written and replayed as usual.
  if (!tree_.valid()) {
    tree_.reset(s);
    if (last_seq_ < 0) last_seq_ = int64_t(s.next_seq) - 1;
    since_snapshot_ = 0;
  }
  return store_snapshot(t_ms, s, item.source);
}

Status Recorder::Writer::write(double t_ms, EventsItem& item) {
  RC_STORE_TRY(begin());
  if (item.gap_before) {
    ins_gap_.reset();
    ins_gap_.bind(1, int64_t(last_seq_));
    if (item.events.empty())
      ins_gap_.bind_null(2);
    else
      ins_gap_.bind(2, int64_t(item.events.front().seq));
    ins_gap_.bind(3, t_ms);
    ins_gap_.bind(4, std::string_view(item.reason));
    RC_STORE_TRY(ins_gap_.run());
    std::lock_guard<std::mutex> lock(stats_mu_);
    ++stats_.gaps;
  }
  if (item.gap_before) tree_ = ReplayTree();  // until the next snapshot
  for (const CacheEvent& e : item.events) {
    // Older than the first snapshot, or already written: skip.
    if (int64_t(e.seq) > last_seq_) {
      RC_STORE_TRY(store_event(t_ms, e));
      last_seq_ = int64_t(e.seq);
    }
    if (!tree_.valid() || e.seq < tree_.next_seq()) continue;
    if (e.kind == CacheEventKind::match) RC_STORE_TRY(on_match(e));
    // A gap or an inconsistency: stop trusting the tree until a snapshot.
    if (!tree_.apply(e).empty()) tree_ = ReplayTree();
    if (tree_.valid() && replay_exact_ && ++since_snapshot_ >= options_.snapshot_every)
      RC_STORE_TRY(store_snapshot(t_ms, tree_.to_snapshot(header_), "replay"));
  }
  return {};
}

Status Recorder::Writer::store_event(double t_ms, const CacheEvent& e) {
  ins_event_.reset();
  ins_event_.bind(1, int64_t(e.seq));
  ins_event_.bind(2, t_ms);
  ins_event_.bind(3, int(e.kind));
  auto bind_node = [&](int i, NodeId n) {
    if (n == kNoNode)
      ins_event_.bind_null(i);
    else
      ins_event_.bind(i, int64_t(n));
  };
  bind_node(4, e.node);
  bind_node(5, e.parent);
  bind_node(6, e.other);
  ins_event_.bind(7, int64_t(e.token_count));
  ins_event_.bind(8, int64_t(e.page_count));
  ins_event_.bind(9, int64_t(e.tick));
  if (e.tokens.empty()) {
    ins_event_.bind_null(10);
    ins_event_.bind_null(11);
  } else {
    const std::string t = encode_ids(stored_ids(e.tokens)), p = encode_ids(e.pages);
    ins_event_.bind_blob(10, t.data(), t.size());
    ins_event_.bind_blob(11, p.data(), p.size());
  }
  RC_STORE_TRY(ins_event_.run());
  ++uncommitted_;
  std::lock_guard<std::mutex> lock(stats_mu_);
  ++stats_.events;
  return {};
}

// Several requests in flight may share the matched path (a system
// prompt), so a match event alone cannot name its request; the matched
// length reported when the request finishes settles it.
Status Recorder::Writer::on_match(const CacheEvent& e) {
  std::vector<Token> path = tree_.path_tokens(e.node);
  path.resize(std::min<size_t>(path.size(), e.token_count));
  matches_.push_back({e.seq, e.node, std::move(path)});
  if (matches_.size() > 4096) matches_.pop_front();
  std::vector<uint64_t> finished;
  for (const auto& [id, p] : pending_)
    if (p.cached >= 0) finished.push_back(id);
  for (uint64_t id : finished) RC_STORE_TRY(resolve(id));
  return {};
}

Status Recorder::Writer::resolve(uint64_t id) {
  auto req = pending_.find(id);
  if (req == pending_.end() || req->second.cached < 0) return {};
  for (auto it = matches_.begin(); it != matches_.end(); ++it) {
    if (int64_t(it->path.size()) != req->second.cached ||
        !starts_with(req->second.prompt, it->path))
      continue;
    const MatchSeen m = *it;
    matches_.erase(it);
    pending_.erase(req);
    return set_match(id, m.seq, m.node, m.path.size());
  }
  return {};
}

Status Recorder::Writer::set_match(uint64_t id, uint64_t seq, NodeId node, size_t tokens) {
  upd_match_.reset();
  upd_match_.bind(1, int64_t(seq));
  upd_match_.bind(2, int64_t(node));
  upd_match_.bind(3, int64_t(tokens));
  upd_match_.bind(4, int64_t(id));
  return upd_match_.run();
}

Status Recorder::Writer::write(double t_ms, ArrivalItem& item) {
  RC_STORE_TRY(begin());
  if (item.render && options_.render) {
    auto r = options_.render(item.messages);
    if (r.ok()) item.prompt = std::move(r.value());
  }
  const std::string blob = encode_ids(stored_ids(item.prompt));
  ins_request_.reset();
  ins_request_.bind(1, int64_t(item.id));
  ins_request_.bind(2, t_ms);
  ins_request_.bind(3, last_seq_ + 1);
  ins_request_.bind(4, int64_t(item.prompt.size()));
  ins_request_.bind_blob(5, blob.data(), blob.size());
  RC_STORE_TRY(ins_request_.run());
  {
    std::lock_guard<std::mutex> lock(stats_mu_);
    ++stats_.requests;
  }
  const uint64_t id = item.id;
  pending_[id] = Pending{std::move(item.prompt), -1};
  // Bounded: a request that never finishes must not pin memory forever.
  if (pending_.size() > 8192) pending_.erase(pending_.begin());
  auto early = early_finish_.find(id);
  if (early != early_finish_.end()) {
    auto [when, finish] = std::move(early->second);
    early_finish_.erase(early);
    return write(when, finish);
  }
  return {};
}

Status Recorder::Writer::write(double t_ms, FinishItem& item) {
  RC_STORE_TRY(begin());
  const RequestMetrics& m = item.metrics;
  const std::string blob = encode_ids(stored_ids(item.output));
  upd_finish_.reset();
  upd_finish_.bind(1, m.cached_tokens);
  upd_finish_.bind(2, m.ttft_ms);
  upd_finish_.bind(3, m.total_ms);
  upd_finish_.bind(4, m.output_tokens);
  upd_finish_.bind_blob(5, blob.data(), blob.size());
  upd_finish_.bind(6, std::string_view(item.reason));
  upd_finish_.bind(7, t_ms);
  upd_finish_.bind(8, int64_t(item.id));
  RC_STORE_TRY(upd_finish_.run());
  if (sqlite3_changes(db_) == 0) {
    if (early_finish_.size() < 4096) early_finish_[item.id] = {t_ms, std::move(item)};
    return {};
  }
  auto p = pending_.find(item.id);
  // Cancelled or failed before its first token: it may never have matched.
  if (p != pending_.end() && m.output_tokens == 0 && item.reason != "stop" &&
      item.reason != "length") {
    pending_.erase(p);
  } else if (p != pending_.end()) {
    p->second.cached = m.cached_tokens;
    RC_STORE_TRY(resolve(item.id));
  }
  return {};
}

}  // namespace rc::recording
