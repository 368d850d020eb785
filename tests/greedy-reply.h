// A greedy reply through the public Engine API, for tests: submits the
// messages with ignore_eos and waits for the finished event. Blocks the
// calling thread (never call it from a stream callback).
#pragma once

#include <gtest/gtest.h>

#include <future>
#include <vector>

#include "radixchat/engine.h"

namespace rc::test {

struct Reply {
  std::vector<int32_t> tokens;
  RequestMetrics metrics;
};

// `n` tokens exactly (ignore_eos), greedy; a refused submit is a test
// failure and an empty reply.
inline Reply greedy(Engine& e, const std::vector<ChatMessage>& messages, int n) {
  GenerateRequest req;
  req.messages = messages;
  req.max_tokens = n;
  req.ignore_eos = true;
  Reply out;
  std::promise<void> done;
  auto id = e.submit(req, [&](const StreamEvent& ev) {
    if (ev.token >= 0) out.tokens.push_back(ev.token);
    if (ev.finished) {
      out.metrics = ev.metrics;
      done.set_value();
    }
    return true;
  });
  EXPECT_TRUE(id.ok()) << id.status().to_string();
  if (id.ok()) done.get_future().wait();
  return out;
}

}  // namespace rc::test
