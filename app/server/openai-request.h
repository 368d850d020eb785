// OpenAI request bodies -> engine requests, with the validation OpenAI
// clients expect: a wrong type or value is a 400 naming the field (`param`),
// never a crash or a silently ignored setting.
//
// Supported: model, messages (text content, string or text parts) / prompt
// (string, one-element array, or token ids), max_tokens and
// max_completion_tokens, temperature, top_p, seed, stop (string or array),
// stream, stream_options.include_usage, n (1 only). Extensions other local
// servers also accept: top_k, min_p, repetition_penalty, ignore_eos.
// Accepted and ignored (type-checked): frequency_penalty, presence_penalty,
// user, metadata, store, parallel_tool_calls, service_tier. Refused with a
// 400 because we cannot honour them: n > 1, best_of > 1, logprobs,
// top_logprobs, echo, suffix, tools, functions, logit_bias.
// response_format (text, json_object, json_schema) constrains the output
// (response-format.h). Unknown fields are ignored, as OpenAI-compatible servers
// do (clients add vendor fields).
//
// Defaults: a sampling field the request leaves out takes the model's
// recommendation (its file's general.sampling.*, ModelInfo::sampling), else
// OpenAI's default (temperature 1, top_p 1, no top_k, min_p or repetition
// penalty), as llama.cpp's server does. A fresh random seed when none is
// given, max_tokens up to the context for chat and 16 for legacy completions.
#pragma once

#include <string>
#include <string_view>

#include "api-error.h"
#include "radixchat/engine.h"
#include "radixchat/structured-output.h"

namespace rc::server {

enum class Endpoint { chat, completions };

struct CompletionRequest {
  Endpoint endpoint = Endpoint::chat;
  GenerateRequest generate;
  std::string model;  // as the client named it; empty when absent
  bool stream = false;
  bool include_usage = false;  // stream_options.include_usage
};

// Parses and validates a request body for `endpoint`; a response_format
// schema compiles under `limits` (response-format.h); `model_sampling` fills
// the sampling fields the body leaves out. Never throws.
ApiResult<CompletionRequest> parse_completion_request(
    Endpoint endpoint, std::string_view body, const CompileLimits& limits = {},
    const RecommendedSampling& model_sampling = {});

}  // namespace rc::server
