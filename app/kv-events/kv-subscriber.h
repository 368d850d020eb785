// A KV-events subscriber over ZeroMQ: one SUB socket per publisher endpoint
// (vLLM and SGLang run one publisher per data-parallel rank), each with an
// optional replay endpoint asked for the messages a sequence gap lost. The
// decoded batches feed one BlockTree. No authentication exists in ZeroMQ's
// plain transport: point it at loopback, or use CURVE (Endpoint::
// curve_server_key) for a publisher elsewhere.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "block-feed.h"
#include "radixchat/kv-block-tree.h"
#include "radixchat/status.h"

namespace rc::kv_events {

struct Endpoint {
  std::string pub;     // e.g. tcp://127.0.0.1:5557
  std::string replay;  // "" when the publisher has no replay socket
  // The publisher's Z85 CURVE public key (kv-security.h); "" for plain.
  // With a wrong key no handshake completes and nothing arrives.
  std::string curve_server_key;
};

class Subscriber final : public BlockFeed {
 public:
  // Connects every endpoint. topic filters by prefix ("" takes all). With a
  // replay endpoint, the first poll() asks for everything the publisher
  // still buffers and applies it before any live message (attaching late).
  // A gap replay cannot fill asks for a resync by subscribing again: a
  // RadixChat publisher answers with a snapshot (AllBlocksCleared, then
  // every block); stats() says whether one came.
  static Result<std::unique_ptr<Subscriber>> connect(const std::vector<Endpoint>& endpoints,
                                                     const std::string& topic);
  ~Subscriber() override;

  // Waits up to timeout_ms for messages and applies all that are ready.
  // A gap is replayed (bounded by replay_timeout_ms per reply) before the
  // message that revealed it is applied, so the tree sees events in order.
  void poll(int timeout_ms) override;
  void set_replay_timeout_ms(int ms) { replay_timeout_ms_ = ms; }

  const BlockTree& tree() const override { return tree_; }
  SubscriberStats stats() const override;

  struct Impl;

 private:
  Subscriber();
  void poll_once(int timeout_ms, int replay_timeout_ms);
  std::unique_ptr<Impl> impl_;
  BlockTree tree_;
  int replay_timeout_ms_ = 500;
};

}  // namespace rc::kv_events
