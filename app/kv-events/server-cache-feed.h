// A RadixChat server's cache followed over HTTP: its /v1/cache/events
// server-sent events (a snapshot, then one message per cache event, a new
// snapshot with "resync" when the viewer fell behind) mapped onto the same
// blocks `serve --kv-events` publishes (kv_events::CacheBlockMapper), so
// cache-watch --url and the panel show it exactly like a KV-events stream.
//
// A reader thread holds the HTTP stream and queues each message; poll()
// applies them on the owner's thread. The stream ending (server stopped,
// network gone) shows as stats().connected == false with the reason.
#pragma once

#include <memory>
#include <string>

#include "block-feed.h"
#include "radixchat/status.h"

namespace rc::kv_events {

class ServerCacheFeed final : public BlockFeed {
 public:
  // url: http://HOST:PORT (a trailing /v1 or / is accepted). Checks the
  // server answers /v1/cache with this key before streaming: not_found
  // when it cannot be reached, invalid_argument for a refused key or URL.
  static Result<std::unique_ptr<ServerCacheFeed>> connect(const std::string& url,
                                                          const std::string& api_key);
  ~ServerCacheFeed() override;  // ends the stream and joins the reader

  void poll(int timeout_ms) override;
  const BlockTree& tree() const override { return tree_; }
  SubscriberStats stats() const override;

  struct Impl;

 private:
  ServerCacheFeed();
  void handle(const std::string& message);
  std::unique_ptr<Impl> impl_;
  BlockTree tree_;
};

}  // namespace rc::kv_events
