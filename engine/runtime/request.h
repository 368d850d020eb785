// The engine thread's view of one request, from submit to finish.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "drafter.h"
#include "radixchat/cache.h"
#include "radixchat/request.h"
#include "sampler.h"
#include "stop-matcher.h"
#include "structured/json-constraint.h"
#include "tokenizer/tokenizer.h"

namespace rc::runtime {

using Clock = std::chrono::steady_clock;

enum class RequestState { waiting, prefill, decode };

// KV bookkeeping. `pages` is the page table: the matched prefix's pages
// (the cache's), then pages held by this request. `locked` is the cache
// node protecting the cached part.
struct RequestKv {
  std::vector<PageId> pages;
  NodeHandle locked;
  bool has_lock = false;
  int cached_tokens = 0;    // prompt tokens served by the cache (pool or tiers)
  int loaded_tokens = 0;    // of those, loaded from the tiers below the pool
  int tier_recomputed = 0;  // tokens the tiers held that the cost model recomputed
  int filled = 0;           // positions whose K/V are in the pool
  int inserted = 0;         // positions handed to the cache so far
};

// Drafted decoding (docs/architecture.md section 20): this step's tokens
// (the last output token, then the draft), where the draft came from (its
// source, and for a tree draft the node: Draft::node), the adaptive draft
// length, and what was drafted and kept.
struct RequestDrafts {
  std::vector<int32_t> step_tokens;
  DraftSource source = DraftSource::none;
  NodeHandle node;
  DraftBudget budget;
  int drafted_tokens = 0;
  int accepted_tokens = 0;
};

struct RequestTimes {
  Clock::time_point submitted = Clock::now();
  Clock::time_point scheduled;
  Clock::time_point first_token;
  Clock::time_point last_token;
  double itl_sum_ms = 0;
};

struct Request {
  Request(RequestId id, std::vector<int32_t> prompt, const GenerateRequest& params,
          StreamCallback callback, const tok::Tokenizer& tokenizer)
      : id(id),
        prompt(std::move(prompt)),
        max_tokens(params.max_tokens),
        stop_tokens(params.stop_tokens),
        ignore_eos(params.ignore_eos),
        callback(std::move(callback)),
        sampler(params.sampling),
        stop(params.stop),
        decoder(tokenizer) {
    draft.budget = DraftBudget(params.sampling.temperature <= 0 || params.sampling.top_k == 1);
  }

  RequestId id;
  std::vector<int32_t> prompt;
  int max_tokens;
  std::vector<int32_t> stop_tokens;
  bool ignore_eos;
  bool pin_prefix = false;  // warmup: pin the cached prompt so LRU keeps it
  // When set, the raw logits of the first sampled position are copied here
  // (before penalties and temperature).
  std::shared_ptr<std::vector<float>> logits_out;
  StreamCallback callback;

  RequestState state = RequestState::waiting;
  uint64_t enqueued_step = 0;

  RequestKv kv;

  std::vector<int32_t> output;
  Sampler sampler;
  StopMatcher stop;
  tok::StreamDecoder decoder;
  // Structured output (response_format): masks each step's logits; null
  // for free text.
  std::unique_ptr<structured::JsonConstraint> constraint;

  bool finished = false;  // set by Scheduler::finish

  RequestDrafts draft;
  RequestTimes times;

  int prompt_len() const { return static_cast<int>(prompt.size()); }
  // The token at position `pos` of the sequence prompt + output.
  int32_t token_at(int pos) const {
    return pos < prompt_len() ? prompt[pos] : output[pos - prompt_len()];
  }
};

}  // namespace rc::runtime
