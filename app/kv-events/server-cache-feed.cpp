// ServerCacheFeed (server-cache-feed.h) on cpp-httplib and nlohmann::json.
#include "server-cache-feed.h"

#include <httplib.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>

#include "http-failure.h"
#include "radixchat/kv-cache-blocks.h"

namespace rc::kv_events {

using nlohmann::json;

struct ServerCacheFeed::Impl {
  std::unique_ptr<httplib::Client> client;
  httplib::Headers headers;
  std::thread reader;
  std::atomic<bool> stop{false};
  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::string> queue;  // SSE data payloads, in order
  bool ended = false;
  std::string end_reason;
  CacheBlockMapper mapper;
  SubscriberStats stats;
  std::optional<uint64_t> last_seq;
  bool synced = false;  // a snapshot seeded the mapper
};

namespace {

std::string base_url(std::string url) {
  while (!url.empty() && url.back() == '/') url.pop_back();
  if (url.size() >= 3 && url.compare(url.size() - 3, 3, "/v1") == 0) url.resize(url.size() - 3);
  return url;
}

NodeId node_id(const json& j) { return j.is_null() ? kNoNode : j.get<NodeId>(); }

CacheSnapshot parse_snapshot(const json& j) {
  CacheSnapshot s;
  s.page_size = j.at("page_size").get<int>();
  s.next_seq = j.at("next_seq").get<uint64_t>();
  for (const json& n : j.at("nodes")) {
    CacheNodeInfo info;
    info.id = n.at("id").get<NodeId>();
    info.parent = node_id(n.at("parent"));
    info.tokens = n.at("tokens").get<std::vector<Token>>();
    s.nodes.push_back(std::move(info));
  }
  return s;
}

std::optional<CacheEvent> parse_event(const json& j) {
  const std::string type = j.at("type").get<std::string>();
  CacheEvent e;
  bool known = false;
  for (int k = 0; k <= static_cast<int>(kLastCacheEventKind); ++k) {
    if (type == cache_event_kind_name(static_cast<CacheEventKind>(k))) {
      e.kind = static_cast<CacheEventKind>(k);
      known = true;
    }
  }
  if (!known) return std::nullopt;
  e.seq = j.at("seq").get<uint64_t>();
  e.node = node_id(j.at("node"));
  e.parent = node_id(j.at("parent"));
  e.other = node_id(j.at("other"));
  e.token_count = j.at("token_count").get<uint32_t>();
  e.page_count = j.at("page_count").get<uint32_t>();
  if (j.contains("tokens")) e.tokens = j.at("tokens").get<std::vector<Token>>();
  return e;
}

// The reader thread: the SSE stream, split into "data:" payloads.
void read_stream(ServerCacheFeed::Impl& im) {
  std::string buf;
  auto push = [&](std::string msg) {
    std::lock_guard<std::mutex> lock(im.mu);
    im.queue.push_back(std::move(msg));
    im.cv.notify_all();
  };
  auto res = im.client->Get("/v1/cache/events", im.headers, [&](const char* data, size_t n) {
    buf.append(data, n);
    for (size_t end; (end = buf.find("\n\n")) != std::string::npos;) {
      std::string block = buf.substr(0, end);
      buf.erase(0, end + 2);
      std::string payload;
      for (size_t at = 0; at < block.size();) {
        size_t nl = block.find('\n', at);
        if (nl == std::string::npos) nl = block.size();
        const std::string_view line(block.data() + at, nl - at);
        if (line.rfind("data:", 0) == 0) {
          std::string_view v = line.substr(5);
          if (!v.empty() && v[0] == ' ') v.remove_prefix(1);
          if (!payload.empty()) payload += '\n';
          payload.append(v);
        }
        at = nl + 1;
      }
      if (!payload.empty()) push(std::move(payload));
    }
    return !im.stop.load();
  });
  std::lock_guard<std::mutex> lock(im.mu);
  im.ended = true;
  if (!res)
    im.end_reason = "stream ended: " + httplib::to_string(res.error());
  else if (res->status != 200)
    im.end_reason = "stream refused: HTTP " + std::to_string(res->status);
  else
    im.end_reason = "the server closed the stream";
  im.cv.notify_all();
}

}  // namespace

ServerCacheFeed::ServerCacheFeed() : impl_(std::make_unique<Impl>()) {}

ServerCacheFeed::~ServerCacheFeed() {
  impl_->stop = true;
  if (impl_->client) impl_->client->stop();
  if (impl_->reader.joinable()) impl_->reader.join();
}

Result<std::unique_ptr<ServerCacheFeed>> ServerCacheFeed::connect(const std::string& url,
                                                                  const std::string& api_key) {
  const std::string base = base_url(url);
  if (base.rfind("http://", 0) != 0 && base.rfind("https://", 0) != 0)
    return Status(StatusCode::invalid_argument,
                  "'" + url + "' is not an http:// URL of a RadixChat server");
  std::unique_ptr<ServerCacheFeed> f(new ServerCacheFeed());
  Impl& im = *f->impl_;
  im.client = std::make_unique<httplib::Client>(base);
  if (!im.client->is_valid())
    return Status(StatusCode::invalid_argument, "cannot use the URL '" + url + "'");
  im.client->set_connection_timeout(5);
  im.client->set_read_timeout(30);  // the server writes a keep-alive every few seconds
  if (!api_key.empty()) im.headers.emplace("Authorization", "Bearer " + api_key);
  auto probe = im.client->Get("/v1/cache?tokens=0&text=0&pages=0", im.headers);
  if (!probe)
    return Status(StatusCode::not_found,
                  "cannot reach " + base + ": " + http_failure(base, probe.error()));
  if (probe->status == 401 || probe->status == 403)
    return Status(StatusCode::invalid_argument,
                  base + " refused the API key (HTTP " + std::to_string(probe->status) + ")");
  if (probe->status != 200)
    return Status(StatusCode::not_found, base + "/v1/cache answered HTTP " +
                                             std::to_string(probe->status) +
                                             " (is it a RadixChat server?)");
  im.reader = std::thread([&im] { read_stream(im); });
  return f;
}

void ServerCacheFeed::poll(int timeout_ms) {
  Impl& im = *impl_;
  std::deque<std::string> ready;
  {
    std::unique_lock<std::mutex> lock(im.mu);
    im.cv.wait_for(lock, std::chrono::milliseconds(timeout_ms),
                   [&] { return !im.queue.empty() || im.ended; });
    ready.swap(im.queue);
    if (im.ended && im.stats.connected) {
      im.stats.connected = false;
      im.stats.last_error = im.end_reason;
    }
  }
  for (const std::string& m : ready) handle(m);
}

void ServerCacheFeed::handle(const std::string& message) {
  Impl& im = *impl_;
  Batch batch;
  try {
    const json j = json::parse(message);
    const std::string type = j.at("type").get<std::string>();
    if (type == "shutdown") {
      im.stats.connected = false;
      im.stats.last_error = "the server is shutting down";
      return;
    }
    if (type == "snapshot") {
      batch.events = im.mapper.reset(parse_snapshot(j));
      if (j.value("resync", false)) {
        ++im.stats.resyncs;
        ++im.stats.seq_gaps;
      }
      im.last_seq = j.at("seq").get<int64_t>() < 0
                        ? std::nullopt
                        : std::optional<uint64_t>(j.at("seq").get<uint64_t>());
      im.synced = true;
    } else {
      const std::optional<CacheEvent> e = parse_event(j);
      if (!e || !im.synced) return;  // a kind this viewer does not map
      if (im.last_seq && e->seq != *im.last_seq + 1) {
        // The server resyncs a viewer rather than skip events; count it if not.
        ++im.stats.seq_gaps;
        im.stats.dropped_messages += e->seq > *im.last_seq ? e->seq - *im.last_seq - 1 : 0;
      }
      im.last_seq = e->seq;
      if (!im.mapper.apply(*e, batch.events)) {
        im.stats.last_error = "an event named a node this viewer does not hold";
        ++im.stats.malformed_messages;
      }
    }
  } catch (const std::exception& ex) {
    ++im.stats.malformed_messages;
    im.stats.last_error = std::string("malformed cache event: ") + ex.what();
    return;
  }
  ++im.stats.messages;
  if (batch.events.empty()) return;
  tree_.apply(batch);
  if (observer_) observer_(batch);
}

SubscriberStats ServerCacheFeed::stats() const { return impl_->stats; }

}  // namespace rc::kv_events
