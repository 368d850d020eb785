#include "metrics-text.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>

namespace rc::server {

const char* const kMetricsContentType = "text/plain; version=0.0.4; charset=utf-8";

namespace {

// Label values escape backslash, double quote and newline.
std::string label_value(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\' || c == '"') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string number(double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.17g", v);
  return buf;
}

class Writer {
 public:
  // A metric family: HELP and TYPE once, then its samples.
  Writer& family(const char* name, const char* type, const char* help) {
    name_ = name;
    out_ << "# HELP " << name << ' ' << help << "\n# TYPE " << name << ' ' << type << '\n';
    return *this;
  }
  Writer& sample(double v, const std::string& labels = {}) {
    out_ << name_;
    if (!labels.empty()) out_ << '{' << labels << '}';
    out_ << ' ' << number(v) << '\n';
    return *this;
  }
  Writer& gauge(const char* name, const char* help, double v) {
    return family(name, "gauge", help).sample(v);
  }
  Writer& counter(const char* name, const char* help, double v) {
    return family(name, "counter", help).sample(v);
  }
  std::string str() const { return out_.str(); }

 private:
  std::ostringstream out_;
  std::string name_;
};

std::string label(const char* key, const std::string& value) {
  return std::string(key) + "=\"" + label_value(value) + "\"";
}

// Per-tier figures of the cache tiers below the pool, labelled by tier.
void write_tier_metrics(Writer& w, const TierStats& t) {
  if (!t.enabled) return;
  auto per_tier = [&](const char* name, const char* type, const char* help, auto field) {
    w.family(name, type, help);
    for (const TierInfo& i : t.tiers) w.sample(double(field(i)), label("tier", i.name));
  };
  per_tier("radixchat_tier_up", "gauge", "1 while the tier answers, 0 while it is down.",
           [](const TierInfo& i) { return i.state == "up" ? 1 : 0; });
  per_tier("radixchat_tier_bytes", "gauge", "Bytes the tier holds (-1: the store cannot say).",
           [](const TierInfo& i) { return i.bytes; });
  per_tier("radixchat_tier_budget_bytes", "gauge", "The tier's byte budget (Redis: its maxmemory, 0 none set, -1 not known).",
           [](const TierInfo& i) { return i.budget_bytes; });
  per_tier("radixchat_tier_hits_total", "counter", "KV blocks read from the tier.",
           [](const TierInfo& i) { return i.hits; });
  per_tier("radixchat_tier_puts_total", "counter", "KV blocks written to the tier.",
           [](const TierInfo& i) { return i.puts; });
  per_tier("radixchat_tier_refused_total", "counter",
           "Truncated, corrupt or foreign blocks refused (recomputed, never loaded).",
           [](const TierInfo& i) { return i.refused; });
  per_tier("radixchat_tier_evictions_total", "counter", "Blocks the tier's budget evicted.",
           [](const TierInfo& i) { return i.evictions; });
  per_tier("radixchat_tier_errors_total", "counter", "I/O or connection failures.",
           [](const TierInfo& i) { return i.errors; });
  per_tier("radixchat_tier_loaded_tokens_total", "counter",
           "Prompt tokens loaded from the tier instead of prefilled.",
           [](const TierInfo& i) { return i.loaded_tokens; });
  per_tier("radixchat_tier_load_seconds_total", "counter", "Time spent reading those blocks.",
           [](const TierInfo& i) { return i.load_ms / 1000.0; });
  w.counter("radixchat_tier_loads_total", "Requests that loaded blocks back into the pool.",
            double(t.loads));
  w.counter("radixchat_tier_recomputes_total",
            "Requests whose held blocks the cost model chose to recompute.", double(t.recomputes));
  w.counter("radixchat_tier_blocks_dropped_total",
            "Blocks not written below because the write queue was full.", double(t.blocks_dropped));
  w.gauge("radixchat_tier_write_queue_bytes", "Bytes waiting to be written below.",
          double(t.queue_bytes));
}

}  // namespace

std::string render_metrics(const MetricsInput& in) {
  const EngineStats& e = in.engine;
  const CacheStats& c = e.cache;
  Writer w;
  w.family("radixchat_info", "gauge", "The model and engine this server runs (always 1).")
      .sample(1, label("model", in.model.name) + "," + label("backend", in.model.backend) + "," +
                     label("device", in.model.device) + "," + label("cache", in.model.cache) + "," +
                     label("version", in.version));

  w.family("radixchat_http_responses_total", "counter", "HTTP responses by route and status.");
  if (in.http.empty()) w.sample(0, label("route", "none") + "," + label("code", "0"));
  for (const auto& [key, n] : in.http) {
    w.sample(static_cast<double>(n),
             label("route", key.first) + "," + label("code", std::to_string(key.second)));
  }

  const GenerationTracker::Counts& g = in.generations;
  w.counter("radixchat_server_requests_total", "Generation requests accepted by the server.",
            g.started);
  w.family("radixchat_server_requests_finished_total", "counter",
           "Generation requests by how they ended.")
      .sample(g.stopped, label("reason", "stop"))
      .sample(g.length, label("reason", "length"))
      .sample(g.cancelled, label("reason", "cancelled"))
      .sample(g.errors, label("reason", "error"));
  w.gauge("radixchat_server_requests_active", "Generation requests in flight.", g.active);
  w.gauge("radixchat_server_streams_open", "Streaming responses being written.", in.streams_open);
  w.counter("radixchat_server_client_disconnects_total",
            "Streams whose client went away before the end (the request was cancelled).",
            g.client_disconnects);

  w.counter("radixchat_requests_finished_total", "Requests the engine finished, any reason.",
            e.requests_finished);
  w.gauge("radixchat_requests_running", "Requests prefilling or decoding.", e.requests_running);
  w.gauge("radixchat_requests_waiting", "Requests queued for admission.", e.requests_waiting);
  w.counter("radixchat_prompt_tokens_total", "Prompt tokens of finished requests.",
            e.prompt_tokens);
  w.counter("radixchat_cached_prompt_tokens_total",
            "Prompt tokens served from the KV cache instead of prefilled.", e.cached_tokens);
  w.counter("radixchat_output_tokens_total", "Generated tokens.", e.output_tokens);
  w.gauge("radixchat_cache_hit_rate", "Cached prompt tokens / prompt tokens.", e.hit_rate);
  w.gauge("radixchat_mean_matched_tokens", "Mean cached prefix length per request, tokens.",
          e.mean_matched_len);
  w.gauge("radixchat_ttft_seconds_mean", "Mean time to first token.", e.ttft_ms_mean / 1000.0);
  w.gauge("radixchat_itl_seconds_mean", "Mean inter-token latency after the first token.",
          e.itl_ms_mean / 1000.0);

  w.family("radixchat_draft_tokens_total", "counter",
           "Drafted decoding: draft tokens verified, and those the model kept.")
      .sample(e.drafted_tokens, label("state", "drafted"))
      .sample(e.accepted_tokens, label("state", "accepted"));
  w.counter("radixchat_draft_steps_total", "Decode steps that verified a draft.", e.draft_steps);

  w.gauge("radixchat_kv_pages_total", "Pages in the KV pool.", c.total_pages);
  w.family("radixchat_kv_pages", "gauge",
           "KV pool pages by state (protected includes held; pinned is part of evictable).")
      .sample(c.free_pages, label("state", "free"))
      .sample(c.evictable_pages, label("state", "evictable"))
      .sample(c.protected_pages, label("state", "protected"))
      .sample(c.held_pages, label("state", "held"))
      .sample(c.pinned_pages, label("state", "pinned"));
  w.gauge("radixchat_kv_page_tokens", "Tokens per KV page.",
          c.total_pages ? double(in.model.kv_pool_tokens) / c.total_pages : 0);
  w.gauge("radixchat_kv_bytes", "Bytes of the KV pool.", e.kv_bytes_total);
  w.gauge("radixchat_kv_bytes_used_peak", "Most KV bytes in use at once.", e.kv_bytes_used_peak);
  w.gauge("radixchat_cache_nodes", "Nodes in the cache tree (without the root).", c.nodes);
  w.gauge("radixchat_cache_tokens", "Tokens held in the cache tree.", c.cached_tokens);
  w.counter("radixchat_cache_match_calls_total", "Prefix lookups.", c.match_calls);
  w.counter("radixchat_cache_inserts_total", "Insert calls.", c.inserts);
  w.counter("radixchat_cache_inserted_tokens_total", "Tokens newly added to the tree.",
            c.inserted_tokens);
  w.counter("radixchat_cache_evictions_total", "Nodes (hash: blocks) evicted.", c.evictions);
  w.counter("radixchat_cache_evicted_tokens_total", "Tokens evicted.", c.evicted_tokens);
  w.counter("radixchat_cache_splits_total", "Node splits on partial matches.", c.splits);
  w.counter("radixchat_cache_merges_total", "Node merges after eviction.", c.merges);
  w.counter("radixchat_cache_demoted_tokens_total",
            "Evicted tokens the tiers below the pool still hold.", c.demoted_tokens);
  w.counter("radixchat_cache_promoted_tokens_total",
            "Tokens loaded back into the pool from the tiers.", c.promoted_tokens);

  write_tier_metrics(w, e.tiers);

  w.gauge("radixchat_cache_event_viewers", "Clients attached to /v1/cache/events.",
          in.events.subscribers);
  w.counter("radixchat_cache_events_total", "Cache events drained from the engine.",
            in.events.events);
  w.counter("radixchat_cache_event_resyncs_total",
            "Viewers sent a fresh snapshot because they fell behind.", in.events.resyncs);
  w.counter("radixchat_cache_event_overflows_total", "Times the engine's event queue lost events.",
            in.events.engine_overflows);

  w.gauge("process_resident_memory_bytes", "Resident memory size in bytes.", in.resident_bytes);
  return w.str();
}

int64_t resident_memory_bytes() {
  std::ifstream in("/proc/self/statm");
  int64_t size = 0, resident = 0;
  if (!(in >> size >> resident)) return 0;
  return resident * static_cast<int64_t>(sysconf(_SC_PAGESIZE));
}

}  // namespace rc::server
