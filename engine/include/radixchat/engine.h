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
#include "radixchat/sampling.h"
#include "radixchat/status.h"
#include "radixchat/structured-output.h"
#include "radixchat/tier-stats.h"

namespace rc {

struct EngineConfig {
  std::string model_path;        // empty: the bundled model
  std::string backend = "auto";  // auto | cpu | cuda
  int n_threads = 0;             // 0: all cores
  std::string cache = "radix";   // radix | radix-page16 | hash16 | off
  int64_t kv_pool_tokens = 0;    // 0: 8 x the model's context, at least 16k tokens
                                 //    (CPU: at most 1 GiB of KV)
  std::string kv_type = "f16";   // KV pool elements: f16 | bf16 | f32 (f32: twice the
                                 // bytes per token, so half the tokens in 1 GiB)
  int context_length = 0;        // 0: the model's trained context
  int prefill_chunk = 256;       // tokens of one prompt per step (chunked prefill)
  int max_batch_tokens = 512;    // tokens of one forward pass, all requests together
  int max_running = 16;          // requests decoding at once
  int max_queue_age_steps = 64;  // cache-aware ordering never delays a request longer
  // Drafted decoding: "tree" drafts tokens from the cache tree and the
  // prompt and verifies them in one forward pass (the same tokens as "off",
  // faster where replies repeat what the engine has seen, and only where a
  // draft is expected to pay: docs/architecture.md section 20); "off"
  // decodes one token per step.
  std::string speculate = "tree";
  std::string chat_template;  // empty: chosen from the model's metadata
  // Cache tiers below the pool (docs/architecture.md section 8). KV of whole
  // blocks of kv_block_tokens tokens is written through to each tier and
  // loaded back when a prompt's prefix left the pool (or the process).
  int64_t kv_host_bytes = 0;  // host-memory tier; 0: none
  std::string kv_disk;        // disk tier folder; "": none; "default":
                              // $XDG_CACHE_HOME/radixchat/kv
  int64_t kv_disk_bytes = int64_t(2) << 30;
  std::string kv_redis;  // redis://[:password@]host:port[/db]; "": none
  std::string kv_redis_tenant = "default";
  int64_t kv_redis_ttl_seconds = int64_t(7) * 24 * 3600;  // expiry of Redis values; 0: none
  // The keys that seal the disk and Redis tiers' blocks (docs/architecture.md
  // section 8): files of 64 hex digits, 0600, made on first use. "": the
  // defaults, $XDG_DATA_HOME/radixchat/kv-disk.key, and for Redis the
  // RADIXCHAT_REDIS_KEY variable when set, else
  // $XDG_DATA_HOME/radixchat/redis-<tenant>.key (copy it to every machine
  // that shares the tenant).
  std::string kv_disk_key_file;
  std::string kv_redis_key_file;
  int kv_block_tokens = 64;
  // CPU: run on a copy of the weights in huge pages where the backend
  // prefers it (faster decode, the same resident memory: the file
  // mapping's pages go back to the kernel). False keeps the mapping, whose
  // pages other engines on the same file share (the panel's lessons).
  bool weight_copies = true;
  // Called on the creating thread while create() loads, with the fraction
  // done in [0, 1]; returning false cancels the load (create() then fails
  // with StatusCode::cancelled). Loading reads every weight page once, so
  // the first reply does not pay for page faults.
  std::function<bool(float)> load_progress;
};

struct ChatMessage {
  std::string role;  // system | user | assistant
  std::string content;
  // Assistant messages, optional: the ids the reply was generated as (the
  // StreamEvent tokens, end-of-generation excluded). When they stream to
  // exactly `content` and the template writes the content verbatim, the
  // prompt holds these ids instead of the re-encoded text, so the cached
  // reply keeps matching (tokenizer/chat-exact.h). Without them the engine
  // uses the ids of a recent reply it generated with exactly this text.
  std::vector<int32_t> tokens = {};
};

struct GenerateRequest {
  // Exactly one of these is used: messages (the chat template is applied and
  // the assistant turn opened), else prompt (plain text, BOS added as the
  // model says), else tokens (used as given).
  std::vector<ChatMessage> messages;
  std::string prompt;
  std::vector<int32_t> tokens;

  SamplingParams sampling;
  int max_tokens = 256;
  std::vector<std::string> stop;     // stop strings (not included in the output)
  std::vector<int32_t> stop_tokens;  // besides the model's end-of-generation ids
  bool ignore_eos = false;           // benchmarks: always generate max_tokens
  // JSON output (structured-output.h): submit() refuses a schema that does
  // not compile with invalid_argument; the reply ends when the JSON does.
  ResponseFormat response_format;
};

using RequestId = uint64_t;

enum class FinishReason { none, stop, length, cancelled, error };
const char* finish_reason_name(FinishReason r);

struct RequestMetrics {
  int prompt_tokens = 0;
  int cached_tokens = 0;    // prompt tokens served from the cache (pool or tiers)
  int loaded_tokens = 0;    // of those, loaded from the tiers below the pool
  int tier_recomputed = 0;  // prompt tokens the tiers held that the cost model
                            // chose to recompute (prefill was faster than the load)
  int computed_tokens = 0;  // prompt tokens prefilled
  int output_tokens = 0;
  double queue_ms = 0;      // submit -> first scheduled
  double ttft_ms = 0;       // submit -> first token
  double itl_ms_mean = 0;   // mean inter-token latency after the first
  double total_ms = 0;      // submit -> finished
  int drafted_tokens = 0;   // drafted decoding: draft tokens verified
  int accepted_tokens = 0;  // of those, kept (each saved one decode step)
};

struct StreamEvent {
  RequestId id = 0;
  std::string text;    // new text; may be empty (e.g. a partial UTF-8 character)
  int32_t token = -1;  // the token that produced it (-1 on the finished event)
  bool finished = false;
  FinishReason reason = FinishReason::none;
  Status error;            // set when reason == error
  RequestMetrics metrics;  // final on the finished event
};

using StreamCallback = std::function<bool(const StreamEvent&)>;

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
};

// What Engine::forget removed.
struct ForgetResult {
  int64_t tree_tokens = 0;  // tokens dropped from the pool's tree
  int64_t tier_blocks = 0;  // blocks erased from the tiers below the pool
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
  // Prefills and caches these prompts (pinned, so LRU keeps them) and
  // returns when they are cached. Used for saved system prompts. Blocks
  // until done: call it from a worker thread, never from a callback.
  virtual Status warmup(const std::vector<std::vector<ChatMessage>>& conversations) = 0;

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
