// A KV-events subscriber over ZeroMQ: one SUB socket per publisher endpoint
// (vLLM and SGLang run one publisher per data-parallel rank), each with an
// optional replay endpoint asked for the messages a sequence gap lost. The
// decoded batches feed one BlockTree. No authentication exists in ZeroMQ's
// plain transport: point it at loopback or a private network only.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "radixchat/kv-block-tree.h"
#include "radixchat/status.h"

namespace rc::kv_events {

struct Endpoint {
  std::string pub;     // e.g. tcp://127.0.0.1:5557
  std::string replay;  // "" when the publisher has no replay socket
};

struct SubscriberStats {
  uint64_t messages = 0;            // messages applied (live and replayed)
  uint64_t replayed_messages = 0;   // of which recovered through replay
  uint64_t malformed_messages = 0;  // wrong frame count, sequence or batch
  uint64_t dropped_messages = 0;    // lost in gaps and not recovered
  uint64_t seq_gaps = 0;
  uint64_t publisher_restarts = 0;
  std::string last_error;  // the latest malformed message's reason
};

class Subscriber {
 public:
  // Connects every endpoint. topic filters by prefix ("" takes all).
  static Result<std::unique_ptr<Subscriber>> connect(const std::vector<Endpoint>& endpoints,
                                                     const std::string& topic);
  ~Subscriber();

  // Waits up to timeout_ms for messages and applies all that are ready.
  // A gap is replayed (bounded by replay_timeout_ms per reply) before the
  // message that revealed it is applied, so the tree sees events in order.
  void poll(int timeout_ms, int replay_timeout_ms = 500);

  const BlockTree& tree() const { return tree_; }
  SubscriberStats stats() const;

  struct Impl;

 private:
  Subscriber();
  void poll_once(int timeout_ms, int replay_timeout_ms);
  std::unique_ptr<Impl> impl_;
  BlockTree tree_;
};

}  // namespace rc::kv_events
