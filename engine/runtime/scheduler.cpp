#include "scheduler.h"

#include <algorithm>

#include "rc-assert.h"

namespace rc::runtime {

namespace {

double ms_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

int64_t pages_for(int64_t tokens, int page_size) { return (tokens + page_size - 1) / page_size; }

// Steps with at least this many prefill tokens time the prefill speed.
constexpr int kTimedPrefillTokens = 64;

}  // namespace

Scheduler::Scheduler(const SchedulerConfig& config, KvCache& cache, ModelRunner& runner,
                     const tok::Tokenizer& tokenizer, tiers::KvTiers* tiers)
    : cfg_(config),
      cache_(cache),
      runner_(runner),
      tok_(tokenizer),
      tiers_(tiers),
      page_size_(cache.config().page_size) {}

void Scheduler::add(std::unique_ptr<Request> request) {
  request->enqueued_step = step_;
  waiting_.push_back(std::move(request));
}

void Scheduler::cancel(RequestId id) { cancel_.insert(id); }

void Scheduler::apply_cancellations() {
  if (cancel_.empty()) return;
  for (auto it = waiting_.begin(); it != waiting_.end();) {
    if (cancel_.count((*it)->id)) {
      finish(**it, FinishReason::cancelled);
      it = waiting_.erase(it);
    } else {
      ++it;
    }
  }
  for (auto& r : running_) {
    if (cancel_.count(r->id)) finish(*r, FinishReason::cancelled);
  }
  cancel_.clear();
  drop_finished();
}

// A waiting request whose unmatched prompt starts with what a running
// prefill is computing right now waits one step: once that prefill's chunk
// is inserted, the request gets it from the cache instead of computing it
// again (in-batch prefix sharing).
bool Scheduler::prefill_overlaps_running(const Request& r) const {
  const int64_t cached = cache_.peek_prefix(r.prompt);
  for (const auto& other : running_) {
    if (other->state != RequestState::prefill) continue;
    const int n = std::min(r.prompt_len(), other->prompt_len());
    int common = 0;
    while (common < n && r.prompt[common] == other->prompt[common]) ++common;
    if (common > cached + page_size_) return true;
  }
  return false;
}

void Scheduler::admit() {
  if (waiting_.empty() || static_cast<int>(running_.size()) >= cfg_.max_running) return;
  // Order: requests past the age limit first (oldest first), then the
  // longest cached prefix first, so hits are taken before LRU loses them.
  std::vector<std::pair<int64_t, size_t>> order;
  order.reserve(waiting_.size());
  for (size_t i = 0; i < waiting_.size(); ++i) {
    const Request& r = *waiting_[i];
    const bool aged = step_ - r.enqueued_step >= static_cast<uint64_t>(cfg_.max_queue_age_steps);
    const int64_t key = aged ? INT64_MAX - static_cast<int64_t>(i) : cache_.peek_prefix(r.prompt);
    order.emplace_back(key, i);
  }
  std::stable_sort(order.begin(), order.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });

  std::vector<bool> admitted(waiting_.size(), false);
  for (const auto& [key, i] : order) {
    if (static_cast<int>(running_.size()) >= cfg_.max_running) break;
    Request& r = *waiting_[i];
    const bool aged = key > INT64_MAX / 2;
    if (!aged && prefill_overlaps_running(r)) continue;
    if (!reserve(r)) break;  // pool short: wait for running requests to finish
    admitted[i] = true;
    r.state = RequestState::prefill;
    r.times.scheduled = Clock::now();
    running_.push_back(std::move(waiting_[i]));
  }
  std::deque<std::unique_ptr<Request>> rest;
  for (size_t i = 0; i < waiting_.size(); ++i) {
    if (!admitted[i]) rest.push_back(std::move(waiting_[i]));
  }
  waiting_.swap(rest);
}

// Matches the prompt, locks the hit and reserves pages for the rest of the
// prompt and the whole output. Leaves the cache unchanged on failure.
bool Scheduler::reserve(Request& r) {
  // The last prompt token is always computed: its logits start the reply.
  const int key_len = r.max_tokens > 0 ? r.prompt_len() - 1 : r.prompt_len();
  const std::span<const Token> key(r.prompt.data(), key_len);
  MatchResult m = cache_.match_prefix(key);
  RC_ASSERT(cache_.lock(m.node).ok());
  if (tiers_) promote(r, key, m);
  const int64_t total = pages_for(r.prompt_len() + r.max_tokens, page_size_);
  std::vector<PageId> pages = std::move(m.pages);
  if (!cache_.alloc_pages(total - static_cast<int64_t>(pages.size()), pages).ok()) {
    RC_ASSERT(cache_.unlock(m.node).ok());
    return false;
  }
  r.kv.pages = std::move(pages);
  r.kv.locked = m.node;
  r.kv.has_lock = true;
  r.kv.cached_tokens = static_cast<int>(m.tokens);
  r.kv.filled = static_cast<int>(m.tokens);
  r.kv.inserted = static_cast<int>(m.tokens);
  return true;
}

void Scheduler::promote(Request& r, std::span<const Token> key, MatchResult& m) {
  const tiers::KvTiers::Plan plan = tiers_->plan(key, m.tokens);
  if (plan.tokens == 0) return;
  if (!plan.load) {
    tiers_->note_recompute();
    r.kv.tier_recomputed = static_cast<int>(plan.tokens);
    return;
  }
  std::vector<PageId> fresh;
  if (!cache_.alloc_pages(plan.tokens / page_size_, fresh).ok()) return;
  const int64_t loaded = tiers_->load(plan, fresh);
  const size_t used = static_cast<size_t>(loaded / page_size_);
  if (used < fresh.size()) {
    RC_ASSERT(cache_.free_pages(std::span<const PageId>(fresh).subspan(used)).ok());
  }
  if (loaded == 0) return;
  std::vector<PageId> table = std::move(m.pages);
  table.insert(table.end(), fresh.begin(), fresh.begin() + static_cast<long>(used));
  Result<InsertResult> ins =
      cache_.insert(key.first(static_cast<size_t>(m.tokens + loaded)), table);
  RC_ASSERT_MSG(ins.ok(), ins.status().message().c_str());
  RC_ASSERT(cache_.lock(ins->node).ok());
  RC_ASSERT(cache_.unlock(m.node).ok());
  cache_.note_promoted(ins->node, loaded);
  m.tokens += loaded;
  m.pages = std::move(ins->pages);
  m.node = ins->node;
  r.kv.loaded_tokens = static_cast<int>(loaded);
}

// Hands positions [0, upto) (page-aligned down) to the cache so other
// requests can share them, and moves this request's lock to the new node.
void Scheduler::cache_prefix(Request& r, int upto) {
  const int aligned = upto / page_size_ * page_size_;
  if (aligned <= r.kv.inserted) return;
  std::vector<Token> key(aligned);
  for (int i = 0; i < aligned; ++i) key[i] = r.token_at(i);
  Result<InsertResult> ins =
      cache_.insert(key, std::span<const PageId>(r.kv.pages.data(), aligned / page_size_));
  RC_ASSERT_MSG(ins.ok(), ins.status().message().c_str());
  std::copy(ins->pages.begin(), ins->pages.end(), r.kv.pages.begin());
  if (tiers_) tiers_->store(key, ins->pages);
  RC_ASSERT(cache_.lock(ins->node).ok());
  if (r.kv.has_lock) RC_ASSERT(cache_.unlock(r.kv.locked).ok());
  r.kv.locked = ins->node;
  r.kv.has_lock = true;
  r.kv.inserted = aligned;
}

// Caches what was computed, then returns the request's other pages.
void Scheduler::release_kv(Request& r) {
  if (r.state == RequestState::waiting) return;
  cache_prefix(r, r.kv.filled);
  if (r.pin_prefix && r.kv.has_lock) pin_warmed(r);
  const size_t owned_from = static_cast<size_t>(r.kv.inserted / page_size_);
  if (owned_from < r.kv.pages.size()) {
    RC_ASSERT(cache_
                  .free_pages(std::span<const PageId>(r.kv.pages.data() + owned_from,
                                                      r.kv.pages.size() - owned_from))
                  .ok());
  }
  r.kv.pages.clear();
  if (r.kv.has_lock) RC_ASSERT(cache_.unlock(r.kv.locked).ok());
  r.kv.has_lock = false;
}

void Scheduler::finish(Request& r, FinishReason reason, Status error) {
  release_kv(r);
  r.finished = true;
  const Clock::time_point now = Clock::now();
  StreamEvent ev;
  ev.id = r.id;
  ev.text = r.stop.flush();
  ev.finished = true;
  ev.reason = reason;
  ev.error = std::move(error);
  RequestMetrics& m = ev.metrics;
  m.prompt_tokens = r.prompt_len();
  m.cached_tokens = r.kv.cached_tokens;
  m.loaded_tokens = r.kv.loaded_tokens;
  m.tier_recomputed = r.kv.tier_recomputed;
  m.computed_tokens = r.prompt_len() - r.kv.cached_tokens;
  m.output_tokens = static_cast<int>(r.output.size());
  if (r.state != RequestState::waiting)
    m.queue_ms = ms_between(r.times.submitted, r.times.scheduled);
  if (!r.output.empty()) {
    m.ttft_ms = ms_between(r.times.submitted, r.times.first_token);
    if (r.output.size() > 1) m.itl_ms_mean = r.times.itl_sum_ms / (r.output.size() - 1);
  }
  m.total_ms = ms_between(r.times.submitted, now);
  m.drafted_tokens = r.draft.drafted_tokens;
  m.accepted_tokens = r.draft.accepted_tokens;

  totals_.finished++;
  totals_.prompt_tokens += m.prompt_tokens;
  totals_.cached_tokens += m.cached_tokens;
  totals_.output_tokens += m.output_tokens;
  if (!r.output.empty()) {
    totals_.ttft_ms_sum += m.ttft_ms;
    totals_.ttft_count++;
  }
  if (r.output.size() > 1) {
    totals_.itl_ms_sum += r.times.itl_sum_ms;
    totals_.itl_count += r.output.size() - 1;
  }
  if (before_finish_) before_finish_();
  if (r.callback) r.callback(ev);
  r.callback = nullptr;
  finished_ids_.push_back(r.id);
}

void Scheduler::drop_finished() {
  if (finished_ids_.empty()) return;
  std::erase_if(running_, [&](const std::unique_ptr<Request>& r) {
    return std::find(finished_ids_.begin(), finished_ids_.end(), r->id) != finished_ids_.end();
  });
  finished_ids_.clear();
}

void Scheduler::sample_and_stream(Request& r, std::span<float> logits) {
  const int32_t token = sample_next(r, logits);
  if (token >= 0) stream_token(r, token);
}

int32_t Scheduler::sample_next(Request& r, std::span<float> logits) {
  if (r.logits_out && r.output.empty()) r.logits_out->assign(logits.begin(), logits.end());
  if (r.constraint && !r.constraint->mask_logits(logits, !r.ignore_eos)) {
    finish(r, FinishReason::error,
           Status(StatusCode::internal, "the response format allows no further token"));
    return -1;
  }
  std::vector<int32_t> history(r.prompt);
  history.insert(history.end(), r.output.begin(), r.output.end());
  return r.sampler.sample(logits, history);
}

void Scheduler::stream_token(Request& r, int32_t token) {
  const Clock::time_point now = Clock::now();
  if (r.output.empty()) {
    r.times.first_token = now;
  } else {
    r.times.itl_sum_ms += ms_between(r.times.last_token, now);
  }
  r.times.last_token = now;
  r.output.push_back(token);

  const bool end_of_generation =
      !r.ignore_eos && (tok_.is_eog(token) || std::find(r.stop_tokens.begin(), r.stop_tokens.end(),
                                                        token) != r.stop_tokens.end());
  if (end_of_generation) {
    finish(r, FinishReason::stop);
    return;
  }
  if (r.constraint && !r.constraint->accept(token)) {
    finish(r, FinishReason::error,
           Status(StatusCode::internal, "a sampled token broke the response format"));
    return;
  }
  bool stopped = false;
  StreamEvent ev;
  ev.id = r.id;
  ev.token = token;
  ev.text = r.stop.feed(r.decoder.push(token), &stopped);
  const bool keep_going = !r.callback || r.callback(ev);
  if (stopped) {
    finish(r, FinishReason::stop);
  } else if (!keep_going) {
    finish(r, FinishReason::cancelled);
  } else if (r.constraint && r.constraint->finished()) {
    // The document is complete: nothing may follow. Closed early to fit
    // max_tokens, it still ends for the length limit.
    finish(r, r.constraint->steered() ? FinishReason::length : FinishReason::stop);
  } else if (static_cast<int>(r.output.size()) >= r.max_tokens) {
    finish(r, FinishReason::length);
  }
}

void Scheduler::plan_decode(Request& r, int max_draft, int step_tokens) {
  r.draft.step_tokens.assign(1, r.output.back());
  r.draft.source = DraftSource::none;
  // Drafts need free logit rows and room before max_tokens (the step's last
  // token is sampled after them); structured output masks each position by
  // the state before it, so it decodes one token at a time.
  const int room = r.max_tokens - static_cast<int>(r.output.size()) - 1;
  const int k = std::min(max_draft, room);
  if (!cfg_.speculate || r.constraint || k < DraftBudget::kMinTokens) return;
  std::vector<int32_t> seq(r.prompt);
  seq.insert(seq.end(), r.output.begin(), r.output.end());
  const Draft d = propose_draft(cache_, seq, r.draft.budget, k);
  if (static_cast<int>(d.tokens.size()) < DraftBudget::kMinTokens) return;
  // A greedy request's tree draft is near certain (drafter.h) and always
  // verified; any other draft only where it is expected to pay.
  const bool certain = d.source == DraftSource::tree && r.draft.budget.greedy();
  if (!certain && !draft_costs_.worth(d.source, static_cast<int>(d.tokens.size()), step_tokens))
    return;
  r.draft.step_tokens.insert(r.draft.step_tokens.end(), d.tokens.begin(), d.tokens.end());
  r.draft.source = d.source;
  r.draft.node = d.node;
}

void Scheduler::verify_draft(Request& r, float* logits, int vocab) {
  const int base = r.kv.filled;
  const int drafted = static_cast<int>(r.draft.step_tokens.size()) - 1;
  // Counted before each token streams: the request may finish on any of
  // them, and finish() reports the request's counts and publishes the
  // engine's.
  r.draft.drafted_tokens += drafted;
  totals_.drafted_tokens += static_cast<uint64_t>(drafted);
  if (drafted > 0) totals_.draft_steps++;
  int accepted = 0;
  for (int i = 0; i <= drafted; ++i) {
    // Positions base .. base + i hold the last token and the draft tokens
    // kept so far; row i's logits follow them.
    r.kv.filled = base + 1 + i;
    const int32_t token = sample_next(r, std::span<float>(logits + size_t(i) * vocab, vocab));
    if (token < 0) break;
    const bool kept = i < drafted && token == r.draft.step_tokens[size_t(i) + 1];
    if (kept) {
      ++accepted;
      ++r.draft.accepted_tokens;
      ++totals_.accepted_tokens;
    }
    stream_token(r, token);
    if (r.finished || !kept) break;
  }
  if (drafted == 0) return;
  r.draft.budget.update(r.draft.source, drafted, accepted);
  if (!(r.draft.source == DraftSource::tree && r.draft.budget.greedy())) {
    draft_costs_.note_draft(r.draft.source, drafted, accepted);
  }
  cache_.note_draft(r.draft.node, drafted, accepted);
}

// Prefill chunks for this step, shortest remaining prompt first (requests
// past the age limit before all others). A step costs about its token
// count and a request's first token waits for its whole step, so packing
// several big prefills into one step (processor sharing) delays every one
// of them: on the random workload that made TTFT p50 2.4x that of the
// off policy, which happened to run prefills one at a time. So the first
// chunk takes up to prefill_chunk tokens, and further requests join only
// while the step's prefill tokens stay within max(that chunk,
// kSharedPrefillTokens): big prefills run one after another, small ones
// (cache hits with a short new suffix) share one step and its fixed costs.
void Scheduler::add_prefill_chunks(int& budget, int& logit_rows) {
  constexpr int kSharedPrefillTokens = 64;
  prefill_order_.clear();
  for (auto& r : running_) {
    if (r->state == RequestState::prefill) prefill_order_.push_back(r.get());
  }
  auto aged = [&](const Request* r) {
    return step_ - r->enqueued_step >= static_cast<uint64_t>(cfg_.max_queue_age_steps);
  };
  std::stable_sort(prefill_order_.begin(), prefill_order_.end(),
                   [&](const Request* a, const Request* b) {
                     if (aged(a) != aged(b)) return aged(a);
                     return a->prompt_len() - a->kv.filled < b->prompt_len() - b->kv.filled;
                   });
  int step_tokens = 0, cap = 0;
  for (Request* r : prefill_order_) {
    if (budget <= 0) break;
    const int n = std::min({cfg_.prefill_chunk, budget, r->prompt_len() - r->kv.filled});
    if (step_tokens > 0 && step_tokens + n > cap) break;
    const bool last_chunk = r->kv.filled + n == r->prompt_len();
    const bool want = last_chunk && r->max_tokens > 0 && logit_rows < runner_.max_logit_rows();
    if (last_chunk && r->max_tokens > 0 && !want) continue;  // no logit row left this step
    batch_.add(r->kv.pages, r->kv.filled, r->prompt.data() + r->kv.filled, n, want);
    batch_owner_.push_back(r);
    budget -= n;
    logit_rows += want ? 1 : 0;
    if (step_tokens == 0) cap = std::max(n, kSharedPrefillTokens);
    step_tokens += n;
  }
}

bool Scheduler::step() {
  apply_cancellations();
  admit();
  if (running_.empty()) return false;
  // A prompt cached whole that wants no output (a warmup of what is
  // already cached) has nothing to compute: it ends now, and release_kv
  // pins it.
  for (auto& r : running_) {
    if (r->state == RequestState::prefill && r->max_tokens == 0 && r->kv.filled == r->prompt_len())
      finish(*r, FinishReason::length);
  }
  drop_finished();
  if (running_.empty()) return true;
  ++step_;

  // Decodes first: one token each, their K/V go to position `filled`.
  batch_.clear();
  batch_owner_.clear();
  int budget = runner_.max_batch_tokens();
  int logit_rows = 0;
  // The step's tokens without this request's draft: those planned so far
  // and one for each decoding request still to plan, this one included.
  int decoding = 0;
  for (const auto& r : running_) decoding += r->state == RequestState::decode;
  for (auto& r : running_) {
    if (r->state != RequestState::decode) continue;
    if (logit_rows == runner_.max_logit_rows()) break;
    plan_decode(*r, std::min(budget, runner_.max_logit_rows() - logit_rows) - 1,
                logit_rows + decoding--);
    const int n = static_cast<int>(r->draft.step_tokens.size());
    batch_.add(r->kv.pages, r->kv.filled, r->draft.step_tokens.data(), n, n);
    batch_owner_.push_back(r.get());
    budget -= n;
    logit_rows += n;
  }
  const int decode_tokens = batch_.n_tokens();
  add_prefill_chunks(budget, logit_rows);
  if (batch_.seqs.empty()) return false;
  const int prefill_tokens = batch_.n_tokens() - decode_tokens;

  const Clock::time_point t0 = Clock::now();
  Status st = runner_.forward(batch_, logits_);
  const double step_ms = ms_between(t0, Clock::now());
  if (st.ok()) draft_costs_.note_step(batch_.n_tokens(), step_ms);
  // The cost model's prefill speed, from steps that are mostly prefill.
  if (tiers_ && st.ok() && prefill_tokens >= kTimedPrefillTokens) {
    tiers_->note_prefill(batch_.n_tokens(), step_ms);
  }
  if (!st.ok()) {
    for (Request* r : batch_owner_) finish(*r, FinishReason::error, st);
    drop_finished();
    return true;
  }

  const int vocab = runner_.config().n_vocab;
  int row = 0;
  for (size_t i = 0; i < batch_.seqs.size(); ++i) {
    Request& r = *batch_owner_[i];
    const BatchSequence& s = batch_.seqs[i];
    if (r.state == RequestState::decode) {
      verify_draft(r, logits_.data() + static_cast<size_t>(row) * vocab, vocab);
      row += s.n_logits;
      continue;
    }
    r.kv.filled += s.n_new;
    if (r.state == RequestState::prefill) {
      cache_prefix(r, std::min(r.kv.filled, r.prompt_len()));
      if (r.kv.filled == r.prompt_len()) {
        if (r.max_tokens == 0) {
          finish(r, FinishReason::length);
          continue;
        }
        r.state = RequestState::decode;
      }
    }
    if (s.n_logits > 0) {
      sample_and_stream(r,
                        std::span<float>(logits_.data() + static_cast<size_t>(row) * vocab, vocab));
      ++row;
    }
  }
  const CacheStats cs = cache_.stats();
  totals_.peak_used_pages = std::max(totals_.peak_used_pages, cs.total_pages - cs.free_pages);
  drop_finished();
  return true;
}

void Scheduler::abort_all(FinishReason reason, const Status& why) {
  for (auto& r : waiting_) finish(*r, reason, why);
  waiting_.clear();
  for (auto& r : running_) finish(*r, reason, why);
  finished_ids_.clear();
  running_.clear();
}

}  // namespace rc::runtime

namespace rc::runtime {

void Scheduler::pin_warmed(const Request& r) {
  RC_ASSERT(cache_.pin(r.kv.locked).ok());
  auto same =
      std::find_if(pins_.begin(), pins_.end(), [&](const Pin& p) { return p.prompt == r.prompt; });
  if (same == pins_.end()) {
    pins_.push_back({r.prompt, r.kv.locked});
    return;
  }
  // Warmed before: the old pin goes (its handle is stale when pressure
  // evicted the node since, and then there is nothing to release).
  (void)cache_.unpin(same->node);
  same->node = r.kv.locked;
}

bool Scheduler::unpin_prompt(std::span<const Token> prompt) {
  auto it = std::find_if(pins_.begin(), pins_.end(), [&](const Pin& p) {
    return std::equal(p.prompt.begin(), p.prompt.end(), prompt.begin(), prompt.end());
  });
  if (it == pins_.end()) return false;
  (void)cache_.unpin(it->node);  // stale after an eviction: nothing held
  pins_.erase(it);
  return true;
}

int Scheduler::unpin_holding(const tiers::TokenWindows& windows) {
  int released = 0;
  std::erase_if(pins_, [&](const Pin& pin) {
    if (!windows.first_match(pin.prompt)) return false;
    // Pressure may have evicted a pinned node since: its handle is stale
    // then, and there is nothing left to release.
    if (cache_.unpin(pin.node).ok()) ++released;
    return true;
  });
  return released;
}

}  // namespace rc::runtime
