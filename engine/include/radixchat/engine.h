// The engine as a service (docs/architecture.md sections 3 and 12).
//
// An Engine owns one model, one KV cache and one thread (the engine thread)
// that runs the scheduler: continuous batching of chunked prefills and
// decodes over the radix cache. Every public method may be called from any
// thread; none blocks on generation. Errors are values; no exception crosses
// this API.
//
// Streaming: the callback passed to submit() runs on the engine thread, once
// per generated piece of text and once more with `finished` set. It must
// return quickly; returning false cancels the request. After the finished
// event the engine never calls that callback again.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "radixchat/cache.h"
#include "radixchat/engine-config.h"
#include "radixchat/request.h"
#include "radixchat/sampling.h"
#include "radixchat/status.h"
#include "radixchat/tier-stats.h"

namespace rc {

struct EngineStats {
  uint64_t requests_finished = 0;
  uint64_t requests_running = 0;
  uint64_t requests_waiting = 0;
  uint64_t prompt_tokens = 0;
  uint64_t cached_tokens = 0;
  uint64_t output_tokens = 0;
  double hit_rate = 0;          // cached / prompt tokens
  double mean_matched_len = 0;  // tokens, per request
  double ttft_ms_mean = 0;
  double itl_ms_mean = 0;
  CacheStats cache;
  int64_t kv_bytes_total = 0;
  int64_t kv_bytes_used_peak = 0;
  uint64_t drafted_tokens = 0;  // drafted decoding, all requests
  uint64_t accepted_tokens = 0;
  uint64_t draft_steps = 0;  // steps that verified a draft
  TierStats tiers;
};

struct ModelInfo {
  std::string name;
  std::string path;
  std::string architecture;
  int context_length = 0;
  int n_vocab = 0;
  std::string chat_template;         // its name (ChatTemplate names: chatml, qwen3, ...)
  std::string chat_template_detail;  // how it was chosen, e.g. "qwen3 (recognised in ...)"
  std::string chat_template_notice;  // set when the model's own template was not recognised
  bool reasoning = false;            // replies open with a <think> block (qwen3, deepseek-r1)
  std::string backend;               // "cpu" or "cuda"
  std::string device;                // "CPU (2 threads)" or the GPU's name
  std::string backend_reason;        // why that backend
  std::string cache;                 // policy in use
  int64_t kv_pool_tokens = 0;
  std::string kv_type;  // "F16", "BF16" or "F32"
  // What the model file recommends; empty when it has no general.sampling.*.
  // The app and the server start from it; a request's own SamplingParams rule.
  RecommendedSampling sampling;
};

// What Engine::forget removed.
struct ForgetResult {
  int64_t tree_tokens = 0;  // tokens dropped from the pool's tree
  int64_t tier_blocks = 0;  // blocks erased from the tiers below the pool
};

// Engine::locate_prefix's answer: how many leading tokens of a prompt
// each level holds.
struct PrefixResidence {
  int64_t pool_tokens = 0;  // the pool's tree (in memory), page-aligned
  int page_tokens = 1;      // the pool's page size
  int block_tokens = 0;     // the tiers' block size; 0 without tiers
  struct Tier {
    std::string name;    // "host", "disk" or "redis"
    int64_t tokens = 0;  // whole blocks from the first on, consecutively
  };
  std::vector<Tier> tiers;  // fastest first, as configured
  // The tokens `name` holds; 0 when there is no such tier.
  int64_t tier_tokens(const std::string& name) const {
    for (const Tier& t : tiers)
      if (t.name == name) return t.tokens;
    return 0;
  }
};

class Engine {
 public:
  // Loads the model, picks the backend and starts the engine thread.
  static Result<std::unique_ptr<Engine>> create(const EngineConfig& config);
  virtual ~Engine() = default;

  // Queues a request and returns its id at once. Refuses with a Status a
  // request that can never run (empty, over the context, over the pool).
  virtual Result<RequestId> submit(GenerateRequest request, StreamCallback callback) = 0;
  // Cancels a queued or running request; its finished event reports
  // FinishReason::cancelled. Unknown or finished ids are ignored.
  virtual void cancel(RequestId id) = 0;
  // Prefills and caches these prompts (pinned, so eviction keeps them) and
  // returns when they are cached. Used for saved system prompts and for
  // documents kept warm (docs/architecture.md section 21). A prompt holds
  // one pin however often it is warmed: warming it again moves its pin to
  // the node that holds it now (the same one unless pressure evicted it)
  // instead of adding a second. Blocks until done: call it from a worker
  // thread, never from a callback.
  virtual Status warmup(const std::vector<std::vector<ChatMessage>>& conversations) = 0;
  // Releases the pin warmup() holds for each of these prompts (rendered as
  // warmup renders them): exactly that pin, so a prefix another warmed
  // prompt shares stays pinned by that one. A prompt without a pin is
  // skipped. The KV stays cached, for eviction to take when the pool needs
  // room. Returns how many pins were released. Blocks until done (not from
  // a callback).
  virtual Result<int> unpin_warmup(const std::vector<std::vector<ChatMessage>>& conversations) {
    (void)conversations;
    return Status(StatusCode::unsupported, "this engine keeps no pins");
  }

  // Logits of the last position of `tokens` (used as given), computed by the
  // same scheduler path as generation: the cached prefix is reused and the
  // tokens are cached afterwards. Blocks until done (not from a callback).
  virtual Result<std::vector<float>> last_logits(const std::vector<int32_t>& tokens) = 0;

  virtual EngineStats stats() const = 0;
  // Empties the host and disk cache tiers (a shared Redis is left alone);
  // the pool keeps its tree. Blocks until done (not from a callback). ok
  // and nothing done without tiers.
  virtual Status clear_tier_cache() { return Status(); }
  // Forgets what only `gone` used: the prompts of a deleted conversation or
  // document, each as the tokens the cache holds for it (render_chat of a
  // request, and a reply's tokens after it). Their tree nodes that no path
  // of `kept` (the prompts still in use) reaches and no request or pin
  // holds are dropped with everything below them, and the blocks of those
  // prefixes are erased from every tier, Redis included, unless a kept path
  // or a node still cached holds the same prefix (docs/architecture.md
  // section 8). Blocks until done (not from a callback).
  virtual Result<ForgetResult> forget(const std::vector<std::vector<int32_t>>& gone,
                                      const std::vector<std::vector<int32_t>>& kept) {
    (void)gone;
    (void)kept;
    return Status(StatusCode::unsupported, "this engine keeps no cache to forget");
  }
  // Forgets a document removed from a library (docs/architecture.md
  // section 21), whatever prompts held it: `text` is tokenized alone and
  // found as runs of its tokens. Pins holding it are released; every tree
  // path holding it is dropped from just before the document on (the
  // system prompt and the documents before it stay); and every tier block
  // holding it, with every block chained below, is erased from every tier,
  // Redis included. An error when a tier could not be swept whole (run it
  // again when the tier is back). Blocks until done (not from a callback).
  virtual Result<ForgetResult> forget_document(const std::string& text) {
    (void)text;
    return Status(StatusCode::unsupported, "this engine keeps no cache to forget");
  }
  // Where the KV of `tokens` lies, by lookups only (docs/architecture.md
  // sections 8 and 21): nothing is loaded or computed, and no recency, hit
  // count or event changes. The pool's part runs on the engine thread; the
  // tiers' part (their indexes, a Redis round trip per block) on the
  // caller's. Blocks (not from a callback).
  virtual Result<PrefixResidence> locate_prefix(const std::vector<int32_t>& tokens) const {
    (void)tokens;
    return Status(StatusCode::unsupported, "this engine keeps no cache to look in");
  }
  virtual CacheSnapshot cache_snapshot() const = 0;
  // Cache events since the last call; `overflowed` is set when some were
  // lost and the consumer must resync from cache_snapshot().
  virtual std::vector<CacheEvent> drain_events(bool* overflowed) = 0;
  virtual const ModelInfo& model_info() const = 0;

  // Token helpers for callers that show token counts or spans.
  virtual Result<std::vector<int32_t>> tokenize(const std::string& text, bool add_bos) const = 0;
  virtual std::string detokenize(const std::vector<int32_t>& tokens) const = 0;
  // The exact tokens a conversation renders to (with the assistant turn open).
  virtual Result<std::vector<int32_t>> render_chat(
      const std::vector<ChatMessage>& messages) const = 0;
};

}  // namespace rc
