// What one generation request is, and what it streams back (docs/architecture.md
// section 12): the types the Engine API (radixchat/engine.h) and the
// scheduler share. Plain data; no thread or ownership rules beyond
// StreamCallback's, which Engine::submit states.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "radixchat/sampling.h"
#include "radixchat/status.h"
#include "radixchat/structured-output.h"

namespace rc {

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

}  // namespace rc
