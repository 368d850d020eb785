#include "recording/layout-advisor.h"

#include <algorithm>
#include <map>

namespace rc::recording {

namespace {

using Ids = std::vector<int32_t>;

uint64_t hash_prefix(const Ids& p, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n && i < p.size(); ++i) h = (h ^ uint32_t(p[i])) * 1099511628211ull;
  return h;
}

// One varying span: the prefix before it and the shared part after it.
struct SpanGroup {
  int64_t position = 0;
  Ids prefix;  // prompt[0, position)
  Ids shared;  // the part every member has right after its span
  std::vector<const RequestMiss*> members;
  std::vector<const RequestRecord*> prompts;
};

// Moves the span of `p` (from `position` to where `shared` starts, found
// within `window` tokens) after the shared part. False: `p` does not have
// this layout, left as is.
bool move_span(const SpanGroup& g, int window, const Ids& p, Ids& out) {
  const size_t d = size_t(g.position), n = g.shared.size();
  if (p.size() < d + n + 1 || !std::equal(g.prefix.begin(), g.prefix.end(), p.begin()))
    return false;
  for (size_t i = 1; i <= size_t(window) && d + i + n <= p.size(); ++i) {
    if (!std::equal(g.shared.begin(), g.shared.end(), p.begin() + ptrdiff_t(d + i))) continue;
    out.assign(p.begin(), p.begin() + ptrdiff_t(d));
    out.insert(out.end(), g.shared.begin(), g.shared.end());
    out.insert(out.end(), p.begin() + ptrdiff_t(d), p.begin() + ptrdiff_t(d + i));
    out.insert(out.end(), p.begin() + ptrdiff_t(d + i + n), p.end());
    return true;
  }
  return false;
}

// What two prompts share after their spans. Each side may start with a few
// tokens that only happened to agree with the path it was compared with
// (a span ending in the same word): the shared part starts at the earliest
// point where both agree from there on.
Ids shared_part(const Ids& a, const Ids& b, int window) {
  size_t best_len = 0, best_u = 0;
  for (size_t u = 0; u <= size_t(window) && u < a.size(); ++u) {
    for (size_t v = 0; v <= size_t(window) && v < b.size(); ++v) {
      size_t n = 0;
      while (u + n < a.size() && v + n < b.size() && a[u + n] == b[v + n]) ++n;
      if (n > best_len) best_len = n, best_u = u;
    }
    if (best_len > 0 && best_len + u >= a.size()) break;  // nothing longer is possible
  }
  return Ids(a.begin() + ptrdiff_t(best_u), a.begin() + ptrdiff_t(best_u + best_len));
}

std::vector<SpanGroup> group_misses(const std::vector<RequestRecord>& requests,
                                    const std::vector<RequestMiss>& misses, int64_t min_shared,
                                    int window) {
  std::map<uint64_t, const RequestRecord*> by_id;
  for (const RequestRecord& r : requests) by_id[r.id] = &r;
  std::map<std::pair<int64_t, uint64_t>, SpanGroup> groups;
  for (const RequestMiss& m : misses) {
    if (!m.why.realigned || m.why.run_after < min_shared || m.why.prompt_span.empty()) continue;
    const RequestRecord* r = by_id[m.id];
    const size_t d = size_t(m.why.divergence);
    SpanGroup& g = groups[{m.why.divergence, hash_prefix(r->prompt, d)}];
    const Ids after(r->prompt.begin() + ptrdiff_t(d + m.why.prompt_span.size()),
                    r->prompt.begin() + ptrdiff_t(d + m.why.prompt_span.size() + m.why.run_after));
    if (g.members.empty()) {
      g.position = m.why.divergence;
      g.prefix.assign(r->prompt.begin(), r->prompt.begin() + ptrdiff_t(d));
      g.shared = after;
    } else {
      g.shared = shared_part(g.shared, after, window);
    }
    g.members.push_back(&m);
    g.prompts.push_back(r);
  }
  std::vector<SpanGroup> out;
  for (auto& [key, g] : groups)
    if (int64_t(g.shared.size()) >= min_shared) out.push_back(std::move(g));
  return out;
}

}  // namespace

Result<int64_t> simulate_hits(
    const RecordingSummary& summary, const std::vector<RequestRecord>& requests,
    const std::function<bool(const std::vector<int32_t>&, std::vector<int32_t>&)>& rewrite) {
  CacheConfig cfg;
  cfg.policy = summary.policy;
  cfg.page_size = summary.page_size;
  cfg.total_pages = summary.total_pages > 0 ? summary.total_pages : 1 << 20;
  cfg.events = false;
  auto made = make_kv_cache(cfg);
  if (!made.ok()) return made.status();
  PrefixCache& cache = *made.value();  // the what-if serves requests only
  std::vector<const RequestRecord*> order;
  for (const RequestRecord& r : requests)
    if (!r.finish.empty() && !r.prompt.empty()) order.push_back(&r);
  std::stable_sort(order.begin(), order.end(), [](const RequestRecord* a, const RequestRecord* b) {
    const bool am = a->match_seq >= 0, bm = b->match_seq >= 0;
    if (am && bm) return a->match_seq < b->match_seq;
    return a->arrival_ms < b->arrival_ms;
  });
  const int64_t ps = cfg.page_size;
  int64_t hits = 0;
  Ids prompt, seq;
  for (const RequestRecord* r : order) {
    if (!rewrite || !rewrite(r->prompt, prompt)) prompt = r->prompt;
    // As the scheduler: the last prompt token is always computed; prompt
    // and reply (all but the last token) are cached when it finishes.
    const size_t key = prompt.size() - (r->output.empty() ? 0 : 1);
    MatchResult m = cache.match_prefix(std::span<const Token>(prompt.data(), key));
    hits += m.tokens;
    seq = prompt;
    seq.insert(seq.end(), r->output.begin(), r->output.end());
    const int64_t total = (int64_t(seq.size()) + ps - 1) / ps;
    const int64_t keep = (int64_t(seq.size()) - (r->output.empty() ? 0 : 1)) / ps;
    if (!cache.lock(m.node).ok()) continue;
    std::vector<PageId> pages = m.pages;
    if (!cache.alloc_pages(total - int64_t(pages.size()), pages).ok()) {
      (void)cache.unlock(m.node);
      continue;  // the engine would have waited; the what-if skips it
    }
    auto ins = cache.insert(std::span<const Token>(seq.data(), size_t(keep * ps)),
                            std::span<const PageId>(pages.data(), size_t(keep)));
    (void)cache.unlock(m.node);
    if (!ins.ok()) return ins.status();
    (void)cache.free_pages(std::span<const PageId>(pages.data() + keep, pages.size() - keep));
  }
  return hits;
}

Result<LayoutAdvice> advise_layout(const RecordingSummary& summary,
                                   const std::vector<RequestRecord>& requests,
                                   const std::vector<RequestMiss>& misses,
                                   const ReportOptions& options) {
  LayoutAdvice out;
  auto base = simulate_hits(summary, requests, nullptr);
  if (!base.ok()) return base.status();
  out.baseline_hit_tokens = base.value();
  int64_t prompt_tokens = 0;
  for (const RequestRecord& r : requests)
    if (!r.finish.empty()) prompt_tokens += int64_t(r.prompt.size());
  for (SpanGroup& g : group_misses(requests, misses, options.min_shared, options.miss.window)) {
    SpanFinding f;
    f.position = g.position;
    f.before.assign(g.prefix.end() - std::min<ptrdiff_t>(16, ptrdiff_t(g.prefix.size())),
                    g.prefix.end());
    f.example_span = g.members.front()->why.prompt_span;
    f.other_span = g.members.front()->why.cached_span;
    f.shared_after = g.shared;
    f.misses = int64_t(g.members.size());
    double span_sum = 0;
    for (const RequestMiss* m : g.members) span_sum += double(m->why.prompt_span.size());
    f.mean_span_tokens = span_sum / double(g.members.size());
    int64_t moved = 0;
    auto after = simulate_hits(summary, requests, [&](const Ids& p, Ids& o) {
      const bool ok = move_span(g, options.miss.window, p, o);
      moved += ok;
      return ok;
    });
    if (!after.ok()) return after.status();
    f.requests_moved = moved;
    f.sim_hit_tokens_before = out.baseline_hit_tokens;
    f.sim_hit_tokens_after = after.value();
    f.tokens_saved = after.value() - out.baseline_hit_tokens;
    f.hit_rate_before = prompt_tokens ? double(f.sim_hit_tokens_before) / double(prompt_tokens) : 0;
    f.hit_rate_after = prompt_tokens ? double(f.sim_hit_tokens_after) / double(prompt_tokens) : 0;
    if (f.tokens_saved > 0) out.findings.push_back(std::move(f));
  }
  // A span whose first tokens happened to agree with another prompt's
  // diverges a little later: the same finding seen from fewer requests.
  std::vector<SpanFinding> kept;
  for (const SpanFinding& f : out.findings) {
    bool same = false;
    for (const SpanFinding& o : out.findings)
      same = same || (&o != &f && o.position < f.position && o.shared_after == f.shared_after &&
                      o.tokens_saved >= f.tokens_saved);
    if (!same) kept.push_back(f);
  }
  out.findings = std::move(kept);
  std::sort(
      out.findings.begin(), out.findings.end(),
      [](const SpanFinding& a, const SpanFinding& b) { return a.tokens_saved > b.tokens_saved; });
  if (out.findings.size() > options.max_findings) out.findings.resize(options.max_findings);
  return out;
}

}  // namespace rc::recording
