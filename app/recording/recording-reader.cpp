#include "recording/recording-reader.h"

#include <sqlite3.h>

#include "recording/recording-format.h"
#include "recording/replay-tree.h"
#include "store/sqlite-util.h"

namespace rc::recording {

using store::detail::Stmt;

namespace {

std::vector<int32_t> blob_ids(const Stmt& st, int c) {
  if (st.is_null(c)) return {};
  return decode_ids(st.blob(c), st.bytes(c));
}

template <typename F>
Status each_row(sqlite3* db, const std::string& sql, F&& row, int64_t a = -1, int64_t b = -1) {
  auto st = Stmt::prepare(db, sql);
  if (!st.ok()) return st.status();
  if (a >= 0) st->bind(1, a);
  if (b >= 0) st->bind(2, b);
  for (;;) {
    auto r = st->step();
    if (!r.ok()) return r.status();
    if (!r.value()) return {};
    row(*st);
  }
}

}  // namespace

Result<std::unique_ptr<Recording>> Recording::open(const std::string& path) {
  auto db = open_recording_db(path, false);
  if (!db.ok()) return db.status();
  std::unique_ptr<Recording> r(new Recording(db.value()));
  Status s = check_schema(r->db_);
  if (!s.ok()) return Status(s.code(), path + ": " + s.message());
  s = r->load_summary();
  if (!s.ok()) return Status(s.code(), path + ": " + s.message());
  return r;
}

Recording::~Recording() { sqlite3_close(db_); }

Status Recording::load_summary() {
  RC_STORE_TRY(each_row(db_, "SELECT key, value FROM meta",
                        [&](const Stmt& st) { summary_.meta[st.text(0)] = st.text(1); }));
  RC_STORE_TRY(each_row(db_, "SELECT count(*), min(seq), max(seq), max(t_ms) FROM events",
                        [&](const Stmt& st) {
                          summary_.events = uint64_t(st.int64(0));
                          summary_.first_seq = st.is_null(1) ? -1 : st.int64(1);
                          summary_.last_seq = st.is_null(2) ? -1 : st.int64(2);
                          summary_.duration_ms = st.real(3);
                        }));
  auto policy = parse_cache_policy(summary_.meta["policy"]);
  if (policy.ok()) summary_.policy = policy.value();
  try {
    if (summary_.meta.count("page_size"))
      summary_.page_size = std::stoi(summary_.meta["page_size"]);
    if (summary_.meta.count("total_pages"))
      summary_.total_pages = std::stoll(summary_.meta["total_pages"]);
  } catch (...) {
    return Status(StatusCode::corrupt_data, "meta page_size/total_pages are not numbers");
  }
  if (summary_.page_size < 1) return Status(StatusCode::corrupt_data, "meta page_size < 1");
  return {};
}

Result<std::vector<RequestRecord>> Recording::requests() const {
  std::vector<RequestRecord> out;
  Status s = each_row(
      db_,
      "SELECT id, arrival_ms, arrival_seq, match_seq, prompt, matched_tokens, matched_node, "
      "ttft_ms, total_ms, output_tokens, output, finish, finish_ms FROM requests ORDER BY "
      "arrival_ms, id",
      [&](const Stmt& st) {
        RequestRecord r;
        r.id = uint64_t(st.int64(0));
        r.arrival_ms = st.real(1);
        r.arrival_seq = uint64_t(st.int64(2));
        r.match_seq = st.is_null(3) ? -1 : st.int64(3);
        r.prompt = blob_ids(st, 4);
        r.matched_tokens = st.is_null(5) ? -1 : st.int64(5);
        r.matched_node = st.is_null(6) ? -1 : st.int64(6);
        r.ttft_ms = st.is_null(7) ? -1 : st.real(7);
        r.total_ms = st.is_null(8) ? -1 : st.real(8);
        r.output_tokens = st.is_null(9) ? 0 : st.int64(9);
        r.output = blob_ids(st, 10);
        r.finish = st.is_null(11) ? "" : st.text(11);
        r.finish_ms = st.is_null(12) ? -1 : st.real(12);
        out.push_back(std::move(r));
      });
  if (!s.ok()) return s;
  return out;
}

Result<std::vector<SnapshotRecord>> Recording::snapshots() const {
  std::vector<SnapshotRecord> out;
  Status s = each_row(db_,
                      "SELECT id, next_seq, t_ms, source, tick, nodes, stats FROM snapshots "
                      "ORDER BY next_seq, id",
                      [&](const Stmt& st) {
                        out.push_back({st.int64(0), uint64_t(st.int64(1)), st.real(2), st.text(3),
                                       uint64_t(st.int64(4)), st.int64(5), st.text(6)});
                      });
  if (!s.ok()) return s;
  return out;
}

Result<std::vector<GapRecord>> Recording::gaps() const {
  std::vector<GapRecord> out;
  Status s = each_row(db_, "SELECT after_seq, resume_seq, reason FROM gaps ORDER BY rowid",
                      [&](const Stmt& st) {
                        out.push_back({st.int64(0), st.is_null(1) ? -1 : st.int64(1), st.text(2)});
                      });
  if (!s.ok()) return s;
  return out;
}

Result<CacheSnapshot> Recording::load_snapshot(int64_t id) const {
  auto st = Stmt::prepare(db_, "SELECT next_seq, tick, data FROM snapshots WHERE id = ?");
  if (!st.ok()) return st.status();
  st->bind(1, id);
  auto row = st->step();
  if (!row.ok()) return row.status();
  if (!row.value()) return Status(StatusCode::not_found, "no snapshot " + std::to_string(id));
  auto nodes = decode_snapshot_nodes(st->blob(2), st->bytes(2));
  if (!nodes.ok()) return nodes.status();
  CacheSnapshot snap;
  snap.policy = summary_.policy;
  snap.page_size = summary_.page_size;
  snap.total_pages = summary_.total_pages;
  snap.next_seq = uint64_t(st->int64(0));
  snap.tick = uint64_t(st->int64(1));
  snap.nodes = std::move(nodes.value());
  return snap;
}

Result<std::vector<CacheEvent>> Recording::events(uint64_t from, uint64_t to) const {
  std::vector<CacheEvent> out;
  Status s = each_row(
      db_,
      "SELECT seq, kind, node, parent, other, token_count, page_count, tick, tokens, pages "
      "FROM events WHERE seq >= ? AND seq < ? ORDER BY seq",
      [&](const Stmt& st) {
        CacheEvent e;
        e.seq = uint64_t(st.int64(0));
        e.kind = static_cast<CacheEventKind>(st.int32(1));
        e.node = st.is_null(2) ? kNoNode : NodeId(st.int64(2));
        e.parent = st.is_null(3) ? kNoNode : NodeId(st.int64(3));
        e.other = st.is_null(4) ? kNoNode : NodeId(st.int64(4));
        e.token_count = uint32_t(st.int64(5));
        e.page_count = uint32_t(st.int64(6));
        e.tick = uint64_t(st.int64(7));
        e.tokens = blob_ids(st, 8);
        e.pages = blob_ids(st, 9);
        out.push_back(std::move(e));
      },
      int64_t(from), int64_t(std::min<uint64_t>(to, uint64_t(INT64_MAX))));
  if (!s.ok()) return s;
  return out;
}

Result<std::vector<std::pair<uint64_t, double>>> Recording::event_times() const {
  std::vector<std::pair<uint64_t, double>> out;
  Status s = each_row(db_, "SELECT seq, t_ms FROM events ORDER BY seq",
                      [&](const Stmt& st) { out.emplace_back(uint64_t(st.int64(0)), st.real(1)); });
  if (!s.ok()) return s;
  return out;
}

Result<CacheSnapshot> Recording::tree_at(uint64_t seq) const {
  // The latest snapshot at or before seq that no gap separates from it.
  auto st = Stmt::prepare(db_,
                          "SELECT id FROM snapshots s WHERE next_seq <= ?1 AND NOT EXISTS ("
                          "SELECT 1 FROM gaps g WHERE g.after_seq + 1 >= s.next_seq AND "
                          "g.after_seq + 1 < ?1) ORDER BY next_seq DESC, id DESC LIMIT 1");
  if (!st.ok()) return st.status();
  st->bind(1, int64_t(seq));
  auto row = st->step();
  if (!row.ok()) return row.status();
  if (!row.value())
    return Status(StatusCode::not_found, "no snapshot reaches event " + std::to_string(seq) +
                                             " (before the first snapshot, or events were lost)");
  auto snap = load_snapshot(st->int64(0));
  if (!snap.ok()) return snap.status();
  if (snap->next_seq == seq) return snap;
  auto evs = events(snap->next_seq, seq);
  if (!evs.ok()) return evs.status();
  ReplayTree tree;
  tree.reset(snap.value());
  for (const CacheEvent& e : evs.value()) {
    const std::string why = tree.apply(e);
    if (!why.empty()) return Status(StatusCode::corrupt_data, "replay stopped: " + why);
  }
  if (tree.next_seq() != seq)
    return Status(StatusCode::not_found, "the recording ends at event " +
                                             std::to_string(tree.next_seq()) + ", before " +
                                             std::to_string(seq));
  return tree.to_snapshot(snap.value());
}

}  // namespace rc::recording
