// A KV-events publisher over ZeroMQ in vLLM's protocol: an XPUB socket
// (wire-compatible with PUB; it also reports subscriptions) sends
// (topic, 8-byte big-endian sequence, msgpack batch) per message, numbered
// 0, 1, 2...; an optional ROUTER replay socket answers an 8-byte start
// sequence with every buffered (sequence, batch) from there on, then
// (-1, empty). The buffer is a bounded ring of the latest messages.
//
// Thread contract: ZeroMQ sockets belong to one thread; create, publish()
// and serve_replay() on that thread only. No authentication exists in
// ZeroMQ's plain transport: bind loopback unless CURVE is on
// (kv-security.h; callers check the endpoint with check_publish_endpoint).
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <utility>

#include "radixchat/kv-events.h"
#include "radixchat/status.h"

namespace rc::kv_events {

struct PublisherOptions {
  std::string endpoint;         // e.g. tcp://*:5557 or tcp://127.0.0.1:* (any port)
  std::string replay_endpoint;  // "" for none
  std::string topic = "kv-events";
  size_t buffer_messages = 10000;  // replayable messages kept
  // Z85 CURVE secret key (kv-security.h): both sockets become CURVE
  // servers, and only subscribers holding the public key get anything.
  // "" for vLLM's plain format.
  std::string curve_secret_key;
};

class Publisher {
 public:
  // Binds both sockets; invalid_argument naming the endpoint that failed.
  static Result<std::unique_ptr<Publisher>> bind(const PublisherOptions& options);
  ~Publisher();

  // Encodes and sends `batch` with the next sequence number; returns it.
  uint64_t publish(const Batch& batch);
  // Answers the replay requests waiting now (up to `limit`); never blocks.
  void serve_replay(int limit = 16);
  // True when a subscriber subscribed since the last call: a new one, or
  // one that lost messages and subscribed again to ask for a snapshot (the
  // PUB socket is an XPUB that reports every subscription). Never blocks.
  bool take_subscriptions();

  // The endpoints as bound (a "*" port resolved), for printing.
  const std::string& endpoint() const { return bound_; }
  const std::string& replay_endpoint() const { return replay_bound_; }
  uint64_t next_seq() const { return next_seq_; }
  uint64_t replay_requests() const { return replay_requests_; }

  struct Impl;

 private:
  Publisher();
  std::unique_ptr<Impl> impl_;
  std::string bound_, replay_bound_;
  uint64_t next_seq_ = 0;
  uint64_t replay_requests_ = 0;
};

}  // namespace rc::kv_events
