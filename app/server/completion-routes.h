// POST /v1/chat/completions and /v1/completions (streaming and not), and
// GET /v1/models. The request body has already been read and the caller
// authorised; these only parse, run the engine and answer.
//
// Streaming: the worker thread writes SSE chunks as the engine produces
// text (see generation.h). When a write fails, the client has gone: the
// request is cancelled and its pages return to the cache. While waiting
// (queued behind other requests) an SSE comment is written every
// `heartbeat`, which both keeps proxies from timing out and notices a
// client that left before its first token.
//
// Non-streaming: the worker waits for the whole text. A client that drops
// the connection is noticed only when the answer is written (httplib gives
// no earlier signal), so such a request runs to its max_tokens.
#pragma once

#include <string>

#include <httplib.h>

#include "openai-request.h"
#include "server-context.h"

namespace rc::server {

void handle_completion(ServerContext& ctx, Endpoint endpoint, const std::string& body,
                       httplib::Response& res);
void handle_models(ServerContext& ctx, httplib::Response& res);
void handle_model(ServerContext& ctx, const std::string& id, httplib::Response& res);

}  // namespace rc::server
