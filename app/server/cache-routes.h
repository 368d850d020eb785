// GET /v1/cache (a snapshot of the KV cache tree as JSON) and
// GET /v1/cache/events (server-sent events so a viewer can attach to a
// running server at any time).
//
// /v1/cache?tokens=0&text=0&pages=0 leaves those arrays out (big trees).
//
// /v1/cache/events: every SSE message is "data: <json>\n\n" with a "type".
// The first is {"type":"snapshot", "seq": next_seq - 1, "next_seq", ...the
// snapshot of cache-json.h...}: the tree as of cache event seq (-1: none
// yet). Cache events follow with strictly increasing "seq" (see
// cache-json.h and the replay rules of cache-events.h). When this viewer
// fell behind, or the engine's queue overflowed, a new snapshot follows
// with "resync": true and a "reason"; the viewer replaces its tree with it.
// When the server shuts down a {"type":"shutdown"} message ends the stream.
// At most `max_event_subscribers` viewers at once (503 beyond).
#pragma once

#include <httplib.h>

#include "server-context.h"

namespace rc::server {

void handle_cache_snapshot(ServerContext& ctx, const httplib::Request& req, httplib::Response& res);
void handle_cache_events(ServerContext& ctx, httplib::Response& res);

}  // namespace rc::server
