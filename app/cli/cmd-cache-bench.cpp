// `radixchat-cli cache-bench`: replay a token trace through a KV cache the
// way a server would, and print hit rate and per-token costs (thread CPU
// time per phase, so a loaded machine does not inflate them).
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
#include <memory>
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

// The calling thread's CPU time. Timing each phase with it (not with a wall
// clock) leaves out the time the thread spent descheduled, so the figures
// hold on a shared, loaded machine without any scaling. Reading it is a
// system call; its own cost, measured at start, is taken off every interval.
class ThreadClock {
 public:
  ThreadClock() {
    constexpr int kReads = 2000;
    const double t0 = now();
    for (int i = 0; i < kReads; ++i) now();
    overhead_ns_ = (now() - t0) / (kReads + 1);
  }
  static double now() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return double(ts.tv_sec) * 1e9 + double(ts.tv_nsec);
  }
  // CPU time since `start`, less one read of the clock.
  double since(double start) const { return std::max(0.0, now() - start - overhead_ns_); }
  double overhead_ns() const { return overhead_ns_; }

 private:
  double overhead_ns_ = 0;
};

struct Totals {
  uint64_t hit = 0, evicted = 0, failed = 0, new_tokens = 0, events_seen = 0;
  double match_ns = 0, insert_ns = 0, evict_ns = 0;  // thread CPU time per phase
};

// One request of the protocol (see the top of this file); drains `events`
// after it when given.
Status serve_request(PrefixCache& cache, std::span<const Token> key, const ThreadClock& clock,
                     CacheEventQueue* events, Totals& t) {
  const int64_t ps = cache.config().page_size;
  double c0 = ThreadClock::now();
  MatchResult m = cache.match_prefix(key);
  t.match_ns += clock.since(c0);
  t.hit += uint64_t(m.tokens);
  if (Status s = cache.lock(m.node); !s.ok()) return s;
  const int64_t need = (int64_t(key.size()) - m.tokens + ps - 1) / ps;
  if (const int64_t free_pages = cache.free_page_count(); free_pages < need) {
    c0 = ThreadClock::now();
    t.evicted += uint64_t(cache.evict((need - free_pages) * ps));
    t.evict_ns += clock.since(c0);
  }
  std::vector<PageId> table = std::move(m.pages);
  if (!cache.alloc_pages(need, table).ok()) {
    ++t.failed;  // a request longer than the pool: served uncached
    return cache.unlock(m.node);
  }
  const size_t aligned = key.size() / size_t(ps) * size_t(ps);
  c0 = ThreadClock::now();
  auto ins = cache.insert(key.first(aligned), std::span(table).first(aligned / size_t(ps)));
  t.insert_ns += clock.since(c0);
  if (!ins.ok()) return ins.status();
  t.new_tokens += aligned - uint64_t(ins->cached_tokens);
  if (table.size() > aligned / size_t(ps)) {
    if (Status s = cache.free_pages(std::span(table).subspan(aligned / size_t(ps))); !s.ok())
      return s;
  }
  if (Status s = cache.unlock(m.node); !s.ok()) return s;
  if (events) {
    std::vector<CacheEvent> drained;
    events->drain(drained);
    t.events_seen += drained.size();
  }
  return {};
}

struct Report {
  const BenchOptions& o;
  const Trace& t;
  const CacheStats& st;
  const Totals& tot;
  int64_t pool_tokens;
  double clock_overhead_ns, wall_s, cpu_s;

  double per(double ns, double n) const { return n > 0 ? ns / n : 0.0; }
  double total() const { return double(t.tokens.size()); }
  double hit_rate() const { return double(tot.hit) / total(); }

  void json() const {
    std::printf(
        "{\"cache\": \"%s\", \"page_size\": %d, \"pool_tokens\": %lld, \"requests\": %zu, "
        "\"total_tokens\": %zu, \"hit_tokens\": %llu, \"hit_rate\": %.6f, \"nodes\": %lld, "
        "\"evicted_tokens\": %llu, \"evictions\": %llu, \"failed_requests\": %llu, "
        "\"new_tokens\": %llu, \"match_ns_per_token\": %.3f, \"insert_ns_per_token\": %.3f, "
        "\"insert_ns_per_new_token\": %.3f, \"evict_ns_per_evicted_token\": %.3f, "
        "\"timer\": \"thread_cpu\", \"timer_overhead_ns\": %.1f, \"cpu_s\": %.3f, "
        "\"wall_s\": %.3f}\n",
        o.cache.c_str(), o.page_size, (long long)pool_tokens, t.requests(), t.tokens.size(),
        (unsigned long long)tot.hit, hit_rate(), (long long)st.nodes,
        (unsigned long long)tot.evicted, (unsigned long long)st.evictions,
        (unsigned long long)tot.failed, (unsigned long long)tot.new_tokens,
        per(tot.match_ns, total()), per(tot.insert_ns, total()),
        per(tot.insert_ns, double(tot.new_tokens)), per(tot.evict_ns, double(tot.evicted)),
        clock_overhead_ns, cpu_s, wall_s);
  }

  void text() const {
    std::printf("cache-bench: %s cache, page size %d, pool %lld tokens%s\n", o.cache.c_str(),
                o.page_size, (long long)pool_tokens, o.no_merge ? ", no merge" : "");
    std::printf("  requests        %zu\n", t.requests());
    std::printf("  total tokens    %zu\n", t.tokens.size());
    std::printf("  hit tokens      %llu (hit rate %.6f)\n", (unsigned long long)tot.hit,
                hit_rate());
    std::printf("  nodes           %lld\n", (long long)st.nodes);
    std::printf("  evicted tokens  %llu in %llu nodes\n", (unsigned long long)tot.evicted,
                (unsigned long long)st.evictions);
    if (tot.failed)
      std::printf("  failed          %llu requests longer than the pool\n",
                  (unsigned long long)tot.failed);
    std::printf("  match           %.3f ns/token\n", per(tot.match_ns, total()));
    std::printf("  insert          %.3f ns/token, %.3f ns/new token (%llu new)\n",
                per(tot.insert_ns, total()), per(tot.insert_ns, double(tot.new_tokens)),
                (unsigned long long)tot.new_tokens);
    std::printf("  evict           %.3f ns/evicted token\n",
                per(tot.evict_ns, double(tot.evicted)));
    if (o.events)
      std::printf("  events          %llu drained\n", (unsigned long long)tot.events_seen);
    std::printf("  times           thread CPU time per phase (clock read %.0f ns, subtracted)\n",
                clock_overhead_ns);
    std::printf("  total           %.2f s CPU, %.2f s wall\n", cpu_s, wall_s);
  }
};

Result<std::unique_ptr<KvCache>> make_bench_cache(const BenchOptions& o, const Trace& t,
                                                  int64_t& pool_tokens) {
  auto policy = parse_cache_policy(o.cache);
  if (!policy.ok()) return policy.status();
  if (o.page_size < 1)
    return Status(StatusCode::invalid_argument, "--page-size must be at least 1");
  const int64_t ps = o.page_size;
  const int64_t want = o.pool_tokens > 0 ? o.pool_tokens : int64_t(t.tokens.size()) + ps;
  CacheConfig cfg;
  cfg.policy = *policy;
  cfg.page_size = o.page_size;
  cfg.total_pages = want / ps;
  cfg.events = o.events;
  cfg.merge_after_evict = !o.no_merge;
  pool_tokens = cfg.total_pages * ps;
  return make_kv_cache(cfg);
}

int run_cache_bench(const BenchOptions& o) {
  auto trace = read_trace(o.trace);
  if (!trace.ok()) return fail(trace.status());
  const Trace& t = *trace;
  int64_t pool_tokens = 0;
  auto made = make_bench_cache(o, t, pool_tokens);
  if (!made.ok()) return fail(made.status());
  KvCache& cache = **made;
  CacheEventQueue* events = o.events ? &cache.events() : nullptr;

  const ThreadClock clock;
  Totals tot;
  const auto wall0 = std::chrono::steady_clock::now();
  const double cpu0 = ThreadClock::now();
  for (size_t r = 0; r < t.requests(); ++r) {
    std::span<const Token> key(t.tokens.data() + t.starts[r], t.starts[r + 1] - t.starts[r]);
    if (Status s = serve_request(cache, key, clock, events, tot); !s.ok()) return fail(s);
  }
  const double cpu_s = (ThreadClock::now() - cpu0) * 1e-9;
  const double wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  const CacheStats st = cache.stats();
  const Report rep{o, t, st, tot, pool_tokens, clock.overhead_ns(), wall_s, cpu_s};
  if (o.json)
    rep.json();
  else
    rep.text();
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
