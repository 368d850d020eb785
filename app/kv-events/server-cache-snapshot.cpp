// fetch_server_cache (server-cache-snapshot.h) on cpp-httplib and nlohmann::json.
#include "server-cache-snapshot.h"

#include <httplib.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "http-failure.h"

namespace rc::kv_events {

using nlohmann::json;

namespace {

Result<CacheSnapshot> parse(const json& j, std::unordered_map<NodeId, std::string>& text) {
  CacheSnapshot s;
  s.page_size = j.at("page_size").get<int>();
  s.total_pages = j.value("total_pages", int64_t(0));
  s.tick = j.value("tick", uint64_t(0));
  s.next_seq = j.value("next_seq", uint64_t(0));
  for (const json& n : j.at("nodes")) {
    CacheNodeInfo info;
    info.id = n.at("id").get<NodeId>();
    info.parent = n.at("parent").is_null() ? kNoNode : n.at("parent").get<NodeId>();
    if (n.contains("tokens")) info.tokens = n.at("tokens").get<std::vector<Token>>();
    if (n.contains("pages")) info.pages = n.at("pages").get<std::vector<PageId>>();
    info.lock_ref = n.value("lock_ref", 0u);
    info.pin_ref = n.value("pin_ref", 0u);
    info.last_access = n.value("last_access", uint64_t(0));
    info.hits = n.value("hits", uint64_t(0));
    if (n.contains("text") && n.at("text").is_string()) text[info.id] = n.at("text");
    s.nodes.push_back(std::move(info));
  }
  std::sort(s.nodes.begin(), s.nodes.end(),
            [](const CacheNodeInfo& a, const CacheNodeInfo& b) { return a.id < b.id; });
  if (s.nodes.empty() || s.nodes[0].id != kRootNode)
    return Status(StatusCode::corrupt_data, "the cache has no root node");
  return s;
}

}  // namespace

Result<ServerCache> fetch_server_cache(const std::string& url, const std::string& api_key) {
  ServerCache out;
  out.base_url = url;
  while (!out.base_url.empty() && out.base_url.back() == '/') out.base_url.pop_back();
  if (out.base_url.size() >= 3 && out.base_url.compare(out.base_url.size() - 3, 3, "/v1") == 0)
    out.base_url.resize(out.base_url.size() - 3);
  if (out.base_url.rfind("http://", 0) != 0 && out.base_url.rfind("https://", 0) != 0)
    return Status(StatusCode::invalid_argument,
                  "'" + url + "' is not an http:// URL of a RadixChat server");
  httplib::Client client(out.base_url);
  if (!client.is_valid())
    return Status(StatusCode::invalid_argument, "cannot use the URL '" + url + "'");
  client.set_connection_timeout(5);
  client.set_read_timeout(60);  // a large tree with text takes a while to encode
  httplib::Headers headers;
  if (!api_key.empty()) headers.emplace("Authorization", "Bearer " + api_key);
  auto res = client.Get("/v1/cache?tokens=1&text=1&pages=1", headers);
  if (!res)
    return Status(StatusCode::not_found,
                  "cannot reach " + out.base_url + ": " + http_failure(out.base_url, res.error()));
  if (res->status == 401 || res->status == 403)
    return Status(StatusCode::invalid_argument,
                  out.base_url + " refused the API key (HTTP " + std::to_string(res->status) + ")");
  if (res->status != 200)
    return Status(StatusCode::not_found, out.base_url + "/v1/cache answered HTTP " +
                                             std::to_string(res->status) +
                                             " (is it a RadixChat server?)");
  try {
    auto snap = parse(json::parse(res->body), out.text);
    if (!snap.ok()) return snap.status();
    out.snapshot = std::move(snap.value());
  } catch (const std::exception& e) {
    return Status(StatusCode::corrupt_data,
                  out.base_url + "/v1/cache is not a cache snapshot: " + e.what());
  }
  return out;
}

}  // namespace rc::kv_events
