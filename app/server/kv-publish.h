// `serve --kv-events`: the server's own cache published in the vLLM/SGLang
// KV-event format, so a Dynamo-style router or any KV-events viewer can
// follow a RadixChat server.
//
// One thread, never the engine's: it attaches to the EventHub like an SSE
// viewer (snapshot, then events; it holds one of the --max-viewers slots),
// maps cache events to block events (kv_events::CacheBlockMapper) and owns
// the ZeroMQ sockets, answering replay requests between batches. When the
// hub says events were lost (this thread fell behind) it takes a new
// snapshot and publishes AllBlocksCleared plus every block again, so a
// subscriber's view is exact once it has applied that batch. A new
// subscription (a subscriber joining late, or one that lost messages and
// subscribed again) is answered the same way, so attaching late to a
// RadixChat server always gives the whole tree.
#pragma once

#include <atomic>
#include <memory>
#include <thread>

#include "event-hub.h"
#include "kv-publisher.h"
#include "radixchat/status.h"

namespace rc::server {

class KvEventsPublisher {
 public:
  // Binds the sockets and starts the thread; invalid_argument if an
  // endpoint cannot be bound or no viewer slot is free.
  static Result<std::unique_ptr<KvEventsPublisher>> start(Engine& engine, EventHub& hub,
                                                          const kv_events::PublisherOptions& o);
  // Stops the thread (it also ends when the hub closes).
  ~KvEventsPublisher();

  const std::string& endpoint() const { return pub_->endpoint(); }
  const std::string& replay_endpoint() const { return pub_->replay_endpoint(); }

 private:
  KvEventsPublisher() = default;
  void run();

  Engine* engine_ = nullptr;
  EventHub* hub_ = nullptr;
  std::shared_ptr<EventSubscription> sub_;
  std::unique_ptr<kv_events::Publisher> pub_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace rc::server
