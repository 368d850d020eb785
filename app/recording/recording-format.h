// The recording file format: one SQLite database per recording, so a
// recording is queryable with the sqlite3 shell (docs/architecture.md section 15).
//
// Tables (schema version 1, PRAGMA user_version):
//   meta(key, value)          recording facts: format, started, source, policy,
//                             page_size, total_pages, model, stopped (why the
//                             recorder stopped early, e.g. the size cap)
//   event_kinds(kind, name)   CacheEventKind values and their names
//   events(seq, t_ms, kind, node, parent, other, token_count, page_count,
//          tick, tokens, pages)
//                             every cache event, seq as the engine numbered it;
//                             tokens/pages are little-endian int32 blobs (only
//                             insert events carry them)
//   snapshots(id, next_seq, t_ms, source, tick, nodes, stats, data)
//                             whole trees: source 'engine' (Engine::cache_snapshot)
//                             or 'replay' (the writer's own replay, for quick
//                             seeking); data is encode_snapshot()'s blob
//   requests(id, arrival_ms, arrival_seq, match_seq, prompt_tokens, prompt,
//            matched_tokens, matched_node, ttft_ms, total_ms, output_tokens,
//            output, finish, finish_ms)
//                             one row per request; prompt/output are token-id
//                             blobs; finish is NULL while (or if killed while)
//                             the request ran
//   gaps(after_seq, resume_seq, t_ms, reason)
//                             events lost (engine queue overflow or a recorder
//                             that fell behind): replay cannot cross a gap
//                             except from a snapshot taken after it
//   events_named              a view of events with the kind's name
// Times are milliseconds since the recording started (steady clock).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <sqlite3.h>

#include "radixchat/cache.h"
#include "radixchat/status.h"

namespace rc::recording {

inline constexpr int kFormatVersion = 1;

// Token ids or page ids <-> little-endian int32 blob bytes.
std::string encode_ids(const std::vector<int32_t>& ids);
std::vector<int32_t> decode_ids(const void* data, size_t bytes);

// A snapshot's node list (ids, parents, spans, pages, refs, recency, hits)
// as one blob, and back. decode_snapshot_nodes fails with corrupt_data on a
// truncated or inconsistent blob instead of reading past it.
std::string encode_snapshot_nodes(const std::vector<CacheNodeInfo>& nodes);
Result<std::vector<CacheNodeInfo>> decode_snapshot_nodes(const void* data, size_t bytes);

// Opens (create: makes a new file, replacing nothing: an existing file is
// an error) or opens for reading. WAL with synchronous=NORMAL: a killed
// process loses only the transaction it had not committed.
Result<sqlite3*> open_recording_db(const std::string& path, bool create);
// Creates the tables of a new recording.
Status create_schema(sqlite3* db);
// Checks user_version and the tables of an opened recording.
Status check_schema(sqlite3* db);

}  // namespace rc::recording
