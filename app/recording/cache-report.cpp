// The report's summary and per-request misses; the advisor's findings are
// in layout-advisor.cpp.
#include "recording/cache-report.h"

#include <algorithm>

#include "recording/layout-advisor.h"
#include "recording/replay-tree.h"

namespace rc::recording {

namespace {

// The event seq a request is explained at: just before its match event
// (the tree it was matched against), else at its arrival.
uint64_t explain_seq(const RequestRecord& r) {
  return r.match_seq >= 0 ? uint64_t(r.match_seq) : r.arrival_seq;
}

// Walks the recording forward once, explaining each missing request at its
// seq; re-seeks (tree_at) only where forward replay cannot continue.
Status collect_misses(const Recording& rec, const std::vector<RequestRecord>& reqs,
                      const MissOptions& o, std::vector<RequestMiss>& out) {
  std::vector<const RequestRecord*> order;
  for (const RequestRecord& r : reqs) {
    const int64_t key = int64_t(r.prompt.size()) - (r.output_tokens > 0 ? 1 : 0);
    if (r.finish.empty() || r.prompt.empty() || r.matched_tokens >= key) continue;
    order.push_back(&r);
  }
  std::stable_sort(order.begin(), order.end(), [](const RequestRecord* a, const RequestRecord* b) {
    return explain_seq(*a) < explain_seq(*b);
  });
  ReplayTree tree;
  CacheSnapshot header;
  for (const RequestRecord* r : order) {
    const uint64_t seq = explain_seq(*r);
    bool forward = tree.valid() && tree.next_seq() <= seq;
    if (forward) {
      auto evs = rec.events(tree.next_seq(), seq);
      if (!evs.ok()) return evs.status();
      for (const CacheEvent& e : evs.value())
        if (!tree.apply(e).empty()) {
          forward = false;
          break;
        }
      forward = forward && tree.next_seq() == seq;
    }
    if (!forward) {
      auto snap = rec.tree_at(seq);
      if (!snap.ok()) continue;  // lost events around it: nothing to compare with
      header = snap.value();
      tree.reset(header);
    }
    RequestMiss m;
    m.id = r->id;
    m.at_seq = seq;
    m.matched_tokens = r->matched_tokens;
    m.why = explain_miss(tree.to_snapshot(header), r->prompt, o);
    out.push_back(std::move(m));
  }
  return {};
}

}  // namespace

Result<CacheReport> make_cache_report(const Recording& rec, const ReportOptions& options) {
  CacheReport rep;
  rep.summary = rec.summary();
  auto reqs = rec.requests();
  if (!reqs.ok()) return reqs.status();
  rep.requests = int64_t(reqs->size());
  for (const RequestRecord& r : reqs.value()) {
    if (r.finish.empty()) continue;
    ++rep.finished;
    rep.prompt_tokens += int64_t(r.prompt.size());
    rep.matched_tokens += std::max<int64_t>(0, r.matched_tokens);
  }
  rep.hit_rate = rep.prompt_tokens ? double(rep.matched_tokens) / double(rep.prompt_tokens) : 0;
  MissOptions miss = options.miss;
  miss.closing_tokens = recorded_closing_tokens(rep.summary.meta, miss.closing_tokens);
  if (Status s = collect_misses(rec, reqs.value(), miss, rep.misses); !s.ok()) return s;
  auto advice = advise_layout(rep.summary, reqs.value(), rep.misses, options);
  if (!advice.ok()) return advice.status();
  rep.sim_hit_tokens = advice->baseline_hit_tokens;
  rep.findings = std::move(advice->findings);
  return rep;
}

}  // namespace rc::recording
