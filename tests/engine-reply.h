// A reply through the public Engine API, for tests: submit a request and
// wait for its finished event. Blocks the calling thread (never call these
// from a stream callback).
#pragma once

#include <gtest/gtest.h>

#include <future>
#include <string>
#include <utility>
#include <vector>

#include "radixchat/engine.h"

namespace rc::test {

struct Reply {
  std::string text;
  std::vector<int32_t> tokens;  // the streamed ids
  RequestMetrics metrics;
  FinishReason reason = FinishReason::none;
};

// The whole reply to `req`; a refused submit is a test failure and an empty
// reply.
inline Reply run_request(Engine& e, GenerateRequest req) {
  Reply out;
  std::promise<void> done;
  auto id = e.submit(std::move(req), [&](const StreamEvent& ev) {
    out.text += ev.text;
    if (ev.token >= 0) out.tokens.push_back(ev.token);
    if (ev.finished) {
      out.metrics = ev.metrics;
      out.reason = ev.reason;
      done.set_value();
    }
    return true;
  });
  EXPECT_TRUE(id.ok()) << id.status().to_string();
  if (id.ok()) done.get_future().wait();
  return out;
}

// `n` tokens exactly (ignore_eos), greedy.
inline Reply greedy(Engine& e, const std::vector<ChatMessage>& messages, int n) {
  GenerateRequest req;
  req.messages = messages;
  req.max_tokens = n;
  req.ignore_eos = true;
  return run_request(e, std::move(req));
}

}  // namespace rc::test
