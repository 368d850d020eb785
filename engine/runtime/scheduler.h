// Continuous batching over the radix cache (docs/architecture.md section 3).
//
// Each step() builds one forward batch: one decode token for every running
// request (followed by draft tokens to verify when speculating: drafter.h),
// then prefill chunks of at most `prefill_chunk` tokens while the
// batch has room (so a long prompt never stalls running decodes). Waiting
// requests are admitted in cache-aware order (longest cached prefix first),
// except that one waiting longer than `max_queue_age_steps` steps goes first
// so nothing starves. Admission reserves pages for prompt + max_tokens, so a
// running request never runs out of KV memory; when the pool is short even
// after evicting LRU leaves, requests wait for others to finish.
// With cache tiers (tiers/kv-tiers.h), admission also loads the whole blocks
// of the prompt that left the pool back into it (promotion) when the cost
// model says loading beats prefill, and every prefix cached is written
// through to the tiers.
//
// Threading: engine thread only. Callbacks run on that thread.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <unordered_set>
#include <vector>

#include "draft-costs.h"
#include "model-runner.h"
#include "radixchat/cache.h"
#include "radixchat/request.h"
#include "request.h"
#include "tiers/kv-tiers.h"

namespace rc::runtime {

struct SchedulerConfig {
  int prefill_chunk = 256;
  int max_batch_tokens = 512;
  int max_running = 16;
  int max_queue_age_steps = 64;
  // Drafted decoding (drafter.h): a decoding request's step may carry draft
  // tokens after its last token; the runner's logit rows verify them.
  bool speculate = false;
};

struct SchedulerTotals {
  uint64_t finished = 0;
  uint64_t prompt_tokens = 0;
  uint64_t cached_tokens = 0;
  uint64_t output_tokens = 0;
  double ttft_ms_sum = 0;
  uint64_t ttft_count = 0;
  double itl_ms_sum = 0;
  uint64_t itl_count = 0;
  int64_t peak_used_pages = 0;
  uint64_t drafted_tokens = 0;   // draft tokens verified
  uint64_t accepted_tokens = 0;  // of those, kept
  uint64_t draft_steps = 0;      // steps that verified a draft
};

class Scheduler {
 public:
  // `tiers` may be null (no tiers below the pool); it must outlive the scheduler.
  Scheduler(const SchedulerConfig& config, KvCache& cache, ModelRunner& runner,
            const tok::Tokenizer& tokenizer, tiers::KvTiers* tiers = nullptr);

  // Queues a request (already validated by the engine).
  void add(std::unique_ptr<Request> request);
  // Cancels a waiting or running request at the start of the next step.
  void cancel(RequestId id);
  // Runs one batch. Returns false when there was nothing to do.
  bool step();
  // Finishes every request with `reason` (engine shutdown).
  void abort_all(FinishReason reason, const Status& why);

  // Called after a request's KV is released and the totals counted, just
  // before its finished event: lets the engine publish stats that already
  // include it, so a caller woken by that event reads current figures.
  void set_before_finish(std::function<void()> hook) { before_finish_ = std::move(hook); }

  // Warmed prompts (Request::pin_prefix) hold one pin each, keyed by the
  // prompt's tokens: a prompt warmed again moves its pin to the node that
  // holds it now rather than adding one. Releases the pin of the warmed
  // prompt `prompt`; false when it holds none.
  bool unpin_prompt(std::span<const Token> prompt);
  // Unpins every warmed prompt whose tokens hold a run of `windows'`
  // needle, so a removed document's purge can drop it (purge.h). Returns
  // how many pins it released.
  int unpin_holding(const tiers::TokenWindows& windows);
  size_t waiting() const { return waiting_.size(); }
  size_t running() const { return running_.size(); }
  const SchedulerTotals& totals() const { return totals_; }

 private:
  void apply_cancellations();
  void admit();
  bool prefill_overlaps_running(const Request& r) const;
  bool reserve(Request& r);
  // Extends the locked match `m` of `key` by the blocks the tiers hold, when
  // the cost model chooses to load them; the lock moves to the longer node.
  void promote(Request& r, std::span<const Token> key, MatchResult& m);
  void add_prefill_chunks(int& budget, int& logit_rows);
  void cache_prefix(Request& r, int upto);
  void sample_and_stream(Request& r, std::span<float> logits);
  // sample_and_stream's halves: the next token from `logits` (-1 when the
  // response format allows none: the request is finished with an error),
  // then appending it to the output, streaming it and finishing the request
  // when it ends the reply.
  int32_t sample_next(Request& r, std::span<float> logits);
  void stream_token(Request& r, int32_t token);
  // The tokens a decoding request computes this step: its last token, then
  // a draft when speculating (at most max_draft tokens), where the step
  // decodes step_tokens tokens without it (DraftCosts::worth).
  void plan_decode(Request& r, int max_draft, int step_tokens);
  // Samples each logit row of a drafted step in turn, keeping draft tokens
  // while the model's own choice equals them (the first differing choice
  // is the step's last token), so the output is what plain decoding gives;
  // then tells the cache what was drafted and kept (a draft event).
  void verify_draft(Request& r, float* logits, int vocab);
  void finish(Request& r, FinishReason reason, Status error = Status());
  void release_kv(Request& r);
  void drop_finished();

  SchedulerConfig cfg_;
  KvCache& cache_;
  ModelRunner& runner_;
  const tok::Tokenizer& tok_;
  tiers::KvTiers* tiers_;
  const int page_size_;

  std::deque<std::unique_ptr<Request>> waiting_;
  std::vector<std::unique_ptr<Request>> running_;
  std::unordered_set<RequestId> cancel_;
  std::vector<RequestId> finished_ids_;
  uint64_t step_ = 0;
  SchedulerTotals totals_;
  DraftCosts draft_costs_;  // step times and keep rates: which drafts pay
  ForwardBatch batch_;
  std::vector<Request*> batch_owner_;
  std::vector<Request*> prefill_order_;  // add_prefill_chunks' scratch
  std::vector<float> logits_;
  std::function<void()> before_finish_;
  struct Pin {
    std::vector<Token> prompt;  // the warmed prompt: the pin's key
    NodeHandle node;            // where its cached prefix ends
  };
  // One per warmed prompt (release_kv), for unpin_prompt and unpin_holding.
  std::vector<Pin> pins_;
  // Pins the node `r` holds as the warmed prompt's one pin.
  void pin_warmed(const Request& r);
};

}  // namespace rc::runtime
