#include "cache-json.h"

namespace rc::server {

using nlohmann::json;

namespace {

json node_id(NodeId id) { return id == kNoNode ? json(nullptr) : json(id); }

json node_json(const CacheNodeInfo& n, const TokenDecoder& decode, const CacheJsonOptions& o) {
  json j = {{"id", n.id},
            {"parent", node_id(n.parent)},
            {"token_count", n.tokens.size()},
            {"lock_ref", n.lock_ref},
            {"pin_ref", n.pin_ref},
            {"pinned", n.pin_ref > 0},
            {"last_access", n.last_access},
            {"hits", n.hits}};
  if (o.tokens) j["tokens"] = n.tokens;
  if (o.text && decode) j["text"] = n.tokens.empty() ? std::string() : decode(n.tokens);
  if (o.pages) j["pages"] = n.pages;
  return j;
}

}  // namespace

json cache_stats_json(const CacheStats& s) {
  return {{"total_pages", s.total_pages},
          {"free_pages", s.free_pages},
          {"evictable_pages", s.evictable_pages},
          {"protected_pages", s.protected_pages},
          {"held_pages", s.held_pages},
          {"pinned_pages", s.pinned_pages},
          {"cached_tokens", s.cached_tokens},
          {"nodes", s.nodes},
          {"match_calls", s.match_calls},
          {"prompt_tokens", s.prompt_tokens},
          {"hit_tokens", s.hit_tokens},
          {"hit_rate", s.hit_rate()},
          {"mean_match_tokens", s.mean_match_tokens()},
          {"inserts", s.inserts},
          {"inserted_tokens", s.inserted_tokens},
          {"evictions", s.evictions},
          {"evicted_tokens", s.evicted_tokens},
          {"splits", s.splits},
          {"merges", s.merges},
          {"bytes_per_page", s.bytes_per_page}};
}

json cache_snapshot_json(const CacheSnapshot& snap, const TokenDecoder& decode,
                         const CacheJsonOptions& options) {
  json nodes = json::array();
  for (const CacheNodeInfo& n : snap.nodes) nodes.push_back(node_json(n, decode, options));
  return {{"policy", cache_policy_name(snap.policy)},
          {"page_size", snap.page_size},
          {"total_pages", snap.total_pages},
          {"tick", snap.tick},
          {"next_seq", snap.next_seq},
          {"nodes", std::move(nodes)},
          {"stats", cache_stats_json(snap.stats)}};
}

json cache_event_json(const CacheEvent& e, const TokenDecoder& decode) {
  json j = {{"type", cache_event_kind_name(e.kind)},
            {"seq", e.seq},
            {"node", node_id(e.node)},
            {"parent", node_id(e.parent)},
            {"other", node_id(e.other)},
            {"token_count", e.token_count},
            {"page_count", e.page_count},
            {"tick", e.tick}};
  if (e.kind == CacheEventKind::draft) {  // page_count carries the accepted tokens
    j["drafted"] = e.token_count;
    j["accepted"] = e.page_count;
  }
  if (e.kind == CacheEventKind::insert) {
    j["tokens"] = e.tokens;
    j["pages"] = e.pages;
    if (decode) j["text"] = e.tokens.empty() ? std::string() : decode(e.tokens);
  }
  return j;
}

}  // namespace rc::server
