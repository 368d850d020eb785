// radixchat's local OpenAI-compatible HTTP server (docs/architecture.md sections 17, 18).
//
// Routes (all behind the access rules of access.h):
//   POST /v1/chat/completions   chat, streaming (SSE) or not
//   POST /v1/completions        plain-text completion, streaming or not
//   GET  /v1/models             the one model served, with backend/device
//   GET  /v1/models/{id}
//   GET  /metrics               Prometheus text: engine, cache, server
//   GET  /v1/cache              snapshot of the KV cache tree (JSON)
//   GET  /v1/cache/events       SSE: a snapshot, then every cache event
//   GET  /v1/documents          the document library (document-routes.h)
//   GET  /health                {"status":"ok"} once serving
// Anything else, a malformed or oversize body, a wrong type, an unknown
// model: a 4xx with an OpenAI-style error body; the server keeps serving.
//
// Threads: run() serves on the calling thread with a pool of HTTP worker
// threads (one per request being answered; a streaming response holds its
// worker until it ends). A connection holds no worker while its request
// head arrives or while it idles between requests; /health has workers of
// its own; requests beyond the pool and a short wait are answered 503 with
// Retry-After by overflow workers (connection-queue.h). The engine
// is shared and outlives the server. shutdown() may be called from any
// thread except an HTTP worker. Destroy the Server
// only after run() has returned (the destructor calls shutdown()).
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "radixchat/engine.h"
#include "radixchat/status.h"

#include "request-observer.h"

namespace rc::server {

class EventSubscription;  // event-hub.h
class DocumentSource;     // document-routes.h

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;      // 0: any free port (see Server::port())
  std::string api_key;  // empty: no key; then only loopback hosts may bind
  size_t max_body_bytes = 1 << 20;
  int http_threads = 64;           // requests answered at once (workers)
  int max_event_subscribers = 16;  // /v1/cache/events viewers at once
  size_t subscriber_buffer_events = 4096;
  std::chrono::milliseconds shutdown_grace{5000};  // for requests in flight
  // Slow clients (docs/server.md, "Limits"): a request's line and headers
  // must arrive within head_timeout, its body within read_timeout after
  // them; one client address holds at most max_client_connections workers
  // (more of its requests are answered 503 with Retry-After; 0: half of
  // http_threads, so one client cannot starve the others).
  std::chrono::milliseconds head_timeout{10000};
  std::chrono::milliseconds read_timeout{30000};
  int max_client_connections = 0;
  // `--allow-origin`: browser origins ("https://app.example") whose pages
  // may call the API; a request with any other Origin header is refused
  // with 403. Empty: no browser page may.
  std::vector<std::string> allowed_origins;
  std::chrono::milliseconds heartbeat{2000};  // SSE comment when idle
  std::string version = "dev";                // goes into system_fingerprint
  // A chat request longer than the context: rolling-window / truncate-middle
  // drop whole old turns in steps (rc::fit_context) and say so in the
  // X-RadixChat-Dropped-Messages header; stop answers 400
  // context_length_exceeded.
  std::string context_overflow = "rolling-window";
  // `--kv-events`: publish the cache as vLLM-format KV events on this
  // ZeroMQ endpoint (kv-publish.h); "" for none. Holds one viewer slot.
  std::string kv_events_endpoint;
  std::string kv_events_replay;  // replay ROUTER endpoint, "" for none
  std::string kv_events_topic = "kv-events";
  // Z85 CURVE secret key: the KV-event sockets encrypt and admit only
  // subscribers holding the public key (kv-security.h); "" for plain.
  std::string kv_events_curve_secret;
  // serve --record: told of every generation (request-observer.h).
  std::shared_ptr<RequestObserver> request_observer;
  // serve --library: the documents chat requests may name; null for none.
  std::shared_ptr<DocumentSource> documents;
};

class Server {
 public:
  // Checks the options (the bind rule of access.h) and binds the listening
  // socket, so the port is known and taken before run(). invalid_argument
  // for a refused host or a port already in use (the message has the
  // system's reason, "Address already in use"), internal when no port can
  // be bound at all.
  static Result<std::unique_ptr<Server>> create(Engine& engine, ServerOptions options);
  virtual ~Server() = default;

  virtual int port() const = 0;
  // The KV-events endpoints as bound ("" without --kv-events), for printing.
  virtual std::string kv_events_endpoint() const { return ""; }
  virtual std::string kv_events_replay() const { return ""; }
  // The cache-event feed for an in-process consumer (serve --record), with
  // the attach protocol of event-hub.h. Holds one viewer slot; nullptr when
  // all are taken or the server is shutting down.
  virtual std::shared_ptr<EventSubscription> subscribe_events() { return nullptr; }
  // Serves until shutdown(). Returns an error if serving stopped otherwise.
  virtual Status run() = 0;
  // Graceful stop: new generation requests get 503, event streams end,
  // requests in flight get `shutdown_grace` to finish and are then
  // cancelled, and run() returns. Idempotent; blocks until done.
  virtual void shutdown() = 0;
};

}  // namespace rc::server
