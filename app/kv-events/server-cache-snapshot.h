// One snapshot of a RadixChat server's cache: GET /v1/cache (cache-json.h
// in app/server fixes the JSON), for `radixchat-cli cache-export --url`.
// The server decodes each node's text with its own tokenizer, so no local
// model is needed to label the tree.
#pragma once

#include <string>
#include <unordered_map>

#include "radixchat/cache.h"
#include "radixchat/status.h"

namespace rc::kv_events {

struct ServerCache {
  CacheSnapshot snapshot;                        // nodes sorted by id, root first
  std::unordered_map<NodeId, std::string> text;  // the server's label per node
  std::string base_url;                          // http://HOST:PORT
};

// url: http://HOST:PORT (a trailing /v1 or / is accepted). not_found when
// the server cannot be reached or has no /v1/cache; invalid_argument for a
// refused key or a bad URL; corrupt_data when the answer is not a cache.
Result<ServerCache> fetch_server_cache(const std::string& url, const std::string& api_key);

}  // namespace rc::kv_events
