// `radixchat-cli cache-bench`: replay a token trace through a KV cache the
// way a server would, and print hit rate and per-token costs.
//
// Protocol (../shared/traces/README.md, so figures compare across
// implementations): for each request, match the whole key; lock the matched
// node; if the pool has fewer free pages than the unmatched suffix needs,
// evict exactly the shortfall; allocate; insert the page-aligned key with the
// matched plus new pages; free the unaligned tail; unlock.
#include <time.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "commands.h"
#include "radixchat/cache.h"

namespace rc::cli {
namespace {

struct Trace {
  std::vector<Token> tokens;
  std::vector<size_t> starts;  // request i is tokens[starts[i], starts[i + 1])
  size_t requests() const { return starts.size() - 1; }
};

Result<Trace> read_trace(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status(StatusCode::not_found, "cannot open trace file '" + path + "'");
  std::stringstream buf;
  buf << in.rdbuf();
  const std::string text = buf.str();
  Trace t;
  t.starts.push_back(0);
  const char* p = text.data();
  const char* end = p + text.size();
  size_t line = 1;
  bool line_has_tokens = false;
  while (p < end) {
    char ch = *p;
    if (ch == '\n') {
      if (line_has_tokens) t.starts.push_back(t.tokens.size());
      line_has_tokens = false;
      ++line;
      ++p;
      continue;
    }
    if (ch == ' ' || ch == '\t' || ch == '\r') {
      ++p;
      continue;
    }
    const char* word_end = p;
    while (word_end < end && *word_end != ' ' && *word_end != '\t' && *word_end != '\r' &&
           *word_end != '\n')
      ++word_end;
    Token v = 0;
    auto [ptr, ec] = std::from_chars(p, word_end, v);
    if (ec != std::errc() || ptr != word_end || v < 0)
      return Status(StatusCode::invalid_argument, path + ":" + std::to_string(line) + ": '" +
                                                      std::string(p, word_end) +
                                                      "' is not a token id");
    t.tokens.push_back(v);
    line_has_tokens = true;
    p = word_end;
  }
  if (line_has_tokens) t.starts.push_back(t.tokens.size());
  if (t.requests() == 0)
    return Status(StatusCode::invalid_argument, "trace '" + path + "' has no requests");
  return t;
}

struct BenchOptions {
  std::string trace;
  int page_size = 1;
  int64_t pool_tokens = 0;  // 0: the whole trace fits (no eviction)
  std::string cache = "radix";
  bool json = false;
  bool no_merge = false;
  bool events = false;
};

int run_cache_bench(const BenchOptions& o) {
  auto policy = parse_cache_policy(o.cache);
  if (!policy.ok()) return fail(policy.status());
  if (o.page_size < 1) return fail("--page-size must be at least 1");
  auto trace = read_trace(o.trace);
  if (!trace.ok()) return fail(trace.status());
  const Trace& t = *trace;
  const int64_t ps = o.page_size;
  const int64_t pool_tokens = o.pool_tokens > 0 ? o.pool_tokens : int64_t(t.tokens.size()) + ps;
  CacheConfig cfg;
  cfg.policy = *policy;
  cfg.page_size = o.page_size;
  cfg.total_pages = pool_tokens / ps;
  cfg.events = o.events;
  cfg.merge_after_evict = !o.no_merge;
  auto made = make_kv_cache(cfg);
  if (!made.ok()) return fail(made.status());
  KvCache& cache = **made;

  using clock = std::chrono::steady_clock;
  auto ns = [](clock::time_point a, clock::time_point b) {
    return double(std::chrono::duration_cast<std::chrono::nanoseconds>(b - a).count());
  };
  double match_ns = 0, insert_ns = 0, evict_ns = 0;
  uint64_t evicted = 0, failed = 0, hit = 0;
  std::vector<PageId> table;
  std::vector<CacheEvent> drained;
  uint64_t events_seen = 0;
  auto thread_cpu_ns = [] {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return double(ts.tv_sec) * 1e9 + double(ts.tv_nsec);
  };
  const auto wall0 = clock::now();
  const double cpu0 = thread_cpu_ns();
  for (size_t r = 0; r < t.requests(); ++r) {
    std::span<const Token> key(t.tokens.data() + t.starts[r], t.starts[r + 1] - t.starts[r]);
    auto t0 = clock::now();
    MatchResult m = cache.match_prefix(key);
    auto t1 = clock::now();
    match_ns += ns(t0, t1);
    hit += uint64_t(m.tokens);
    if (Status s = cache.lock(m.node); !s.ok()) return fail(s);
    const int64_t need = (int64_t(key.size()) - m.tokens + ps - 1) / ps;
    const int64_t free_pages = cache.free_page_count();
    if (free_pages < need) {
      auto e0 = clock::now();
      evicted += uint64_t(cache.evict((need - free_pages) * ps));
      evict_ns += ns(e0, clock::now());
    }
    table = std::move(m.pages);
    if (!cache.alloc_pages(need, table).ok()) {
      ++failed;  // a request longer than the pool: served uncached
      if (Status s = cache.unlock(m.node); !s.ok()) return fail(s);
      continue;
    }
    const size_t aligned = key.size() / size_t(ps) * size_t(ps);
    auto i0 = clock::now();
    auto ins = cache.insert(key.first(aligned), std::span(table).first(aligned / size_t(ps)));
    insert_ns += ns(i0, clock::now());
    if (!ins.ok()) return fail(ins.status());
    if (table.size() > aligned / size_t(ps)) {
      if (Status s = cache.free_pages(std::span(table).subspan(aligned / size_t(ps))); !s.ok())
        return fail(s);
    }
    if (Status s = cache.unlock(m.node); !s.ok()) return fail(s);
    if (o.events) {
      cache.events().drain(drained);
      events_seen += drained.size();
      drained.clear();
    }
  }
  const double wall_ns = ns(wall0, clock::now());
  const double wall_s = wall_ns * 1e-9;
  // Per-operation times are wall-clock intervals. On a shared machine a
  // descheduled thread inflates them; scaling by the loop's on-CPU share
  // (thread CPU time / wall time, 1.0 on an idle machine) estimates the time
  // the cache itself took.
  const double cpu_share = std::min(1.0, (thread_cpu_ns() - cpu0) / wall_ns);
  match_ns *= cpu_share;
  insert_ns *= cpu_share;
  evict_ns *= cpu_share;
  const CacheStats st = cache.stats();
  const double total = double(t.tokens.size());
  const double hit_rate = double(hit) / total;
  const double match_pt = match_ns / total;
  const double insert_pt = insert_ns / total;
  const double evict_pt = evicted ? evict_ns / double(evicted) : 0.0;
  if (o.json) {
    std::printf(
        "{\"cache\": \"%s\", \"page_size\": %d, \"pool_tokens\": %lld, \"requests\": %zu, "
        "\"total_tokens\": %zu, \"hit_tokens\": %llu, \"hit_rate\": %.6f, \"nodes\": %lld, "
        "\"evicted_tokens\": %llu, \"evictions\": %llu, \"failed_requests\": %llu, "
        "\"match_ns_per_token\": %.3f, \"insert_ns_per_token\": %.3f, "
        "\"evict_ns_per_evicted_token\": %.3f, \"cpu_share\": %.3f, \"wall_s\": %.3f}\n",
        o.cache.c_str(), o.page_size, (long long)(cfg.total_pages * ps), t.requests(),
        t.tokens.size(), (unsigned long long)hit, hit_rate, (long long)st.nodes,
        (unsigned long long)evicted, (unsigned long long)st.evictions, (unsigned long long)failed,
        match_pt, insert_pt, evict_pt, cpu_share, wall_s);
    return 0;
  }
  std::printf("cache-bench: %s cache, page size %d, pool %lld tokens%s\n", o.cache.c_str(),
              o.page_size, (long long)(cfg.total_pages * ps), o.no_merge ? ", no merge" : "");
  std::printf("  requests        %zu\n", t.requests());
  std::printf("  total tokens    %zu\n", t.tokens.size());
  std::printf("  hit tokens      %llu (hit rate %.6f)\n", (unsigned long long)hit, hit_rate);
  std::printf("  nodes           %lld\n", (long long)st.nodes);
  std::printf("  evicted tokens  %llu in %llu nodes\n", (unsigned long long)evicted,
              (unsigned long long)st.evictions);
  if (failed)
    std::printf("  failed          %llu requests longer than the pool\n",
                (unsigned long long)failed);
  std::printf("  match           %.3f ns/token\n", match_pt);
  std::printf("  insert          %.3f ns/token\n", insert_pt);
  std::printf("  evict           %.3f ns/evicted token\n", evict_pt);
  if (o.events) std::printf("  events          %llu drained\n", (unsigned long long)events_seen);
  std::printf("  wall            %.2f s (on CPU %.0f%% of it; times above are scaled to that)\n",
              wall_s, cpu_share * 100);
  return 0;
}

}  // namespace

Command add_cache_bench_command(CLI::App& root) {
  auto* app = root.add_subcommand("cache-bench", "Replay a token trace through a KV cache");
  auto o = std::make_shared<BenchOptions>();
  app->add_option("--trace", o->trace, "trace file: one request per line, space-separated ids")
      ->required();
  app->add_option("--page-size", o->page_size, "tokens per KV page (default 1)");
  app->add_option("--pool-tokens", o->pool_tokens,
                  "KV pool size in tokens (default: the whole trace, no eviction)");
  app->add_option("--cache", o->cache, "radix, hash or off (default radix)");
  app->add_flag("--json", o->json, "print one JSON object");
  app->add_flag("--no-merge", o->no_merge, "radix: keep split nodes apart after eviction");
  app->add_flag("--events", o->events, "emit cache events and drain them after each request");
  return {app, [o] { return run_cache_bench(*o); }};
}

}  // namespace rc::cli
