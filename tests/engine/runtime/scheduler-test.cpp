// Scheduler behaviour on the bundled model: batching does not change
// results, cancellation frees everything, an oversubscribed pool completes
// every request, chunked prefill does not stall decodes, and old requests
// are not starved by cache-aware ordering.
#include <gtest/gtest.h>

#include "runtime-fixture.h"

namespace rc::runtime::testing {

namespace {

std::string long_text(int sentences) {
  std::string s;
  for (int i = 0; i < sentences; ++i) {
    s += "The radix tree keeps sentence number " + std::to_string(i) + " in its pages. ";
  }
  return s;
}

RuntimeRig::Options small_batches() {
  RuntimeRig::Options o;
  o.sched.prefill_chunk = 32;
  o.sched.max_batch_tokens = 64;
  o.sched.max_running = 8;
  return o;
}

}  // namespace

TEST(Scheduler, BatchedResultsEqualOneAtATime) {
  const std::vector<std::string> prompts = {
      "What is a radix tree?", "What is a radix tree used for in a KV cache?",
      "Tell me about prefix caching.", "Why does LRU eviction keep hot prefixes?"};
  std::vector<std::vector<int32_t>> alone;
  for (const std::string& p : prompts) {
    RuntimeRig rig(small_batches());
    const RequestId id = rig.add(rig.tokens_of(p), 12);
    rig.run_to_completion();
    alone.push_back(rig.result(id).tokens);
  }
  RuntimeRig rig(small_batches());
  std::vector<RequestId> ids;
  for (const std::string& p : prompts) ids.push_back(rig.add(rig.tokens_of(p), 12));
  rig.run_to_completion();
  for (size_t i = 0; i < prompts.size(); ++i) {
    EXPECT_EQ(rig.result(ids[i]).tokens, alone[i]) << prompts[i];
    EXPECT_EQ(rig.result(ids[i]).reason, FinishReason::length);
  }
  rig.expect_all_released();
}

TEST(Scheduler, SecondRequestHitsTheCacheAndGivesSameTokens) {
  RuntimeRig rig(small_batches());
  const std::vector<int32_t> prompt = rig.tokens_of(long_text(6) + "Summarise.");
  const RequestId a = rig.add(prompt, 10);
  rig.run_to_completion();
  const RequestId b = rig.add(prompt, 10);
  rig.run_to_completion();
  EXPECT_EQ(rig.result(a).metrics.cached_tokens, 0);
  EXPECT_EQ(rig.result(b).metrics.cached_tokens, static_cast<int>(prompt.size()) - 1);
  EXPECT_EQ(rig.result(a).tokens, rig.result(b).tokens);
  rig.expect_all_released();
}

TEST(Scheduler, CancelMidPrefillFreesEverything) {
  RuntimeRig rig(small_batches());
  const RequestId id = rig.add(rig.tokens_of(long_text(20)), 8);
  ASSERT_TRUE(rig.sched().step());
  ASSERT_TRUE(rig.sched().step());
  rig.sched().cancel(id);
  rig.run_to_completion();
  EXPECT_EQ(rig.result(id).reason, FinishReason::cancelled);
  EXPECT_TRUE(rig.result(id).tokens.empty());
  rig.expect_all_released();
}

TEST(Scheduler, CancelMidDecodeFreesEverything) {
  RuntimeRig rig(small_batches());
  const RequestId id = rig.add(rig.tokens_of("Hello there."), 200);
  for (int i = 0; i < 6; ++i) ASSERT_TRUE(rig.sched().step());
  ASSERT_FALSE(rig.result(id).tokens.empty());
  rig.sched().cancel(id);
  rig.run_to_completion();
  EXPECT_EQ(rig.result(id).reason, FinishReason::cancelled);
  EXPECT_LT(rig.result(id).tokens.size(), 200u);
  rig.expect_all_released();
}

TEST(Scheduler, OversubscribedPoolCompletesEveryRequest) {
  RuntimeRig::Options o = small_batches();
  o.pool_tokens = 512;
  RuntimeRig rig(o);
  std::vector<RequestId> ids;
  int64_t demand = 0;
  for (int i = 0; i < 10; ++i) {
    std::vector<int32_t> p = rig.tokens_of("Request " + std::to_string(i) + ": " + long_text(8));
    demand += static_cast<int64_t>(p.size()) + 16;
    ids.push_back(rig.add(std::move(p), 16));
  }
  ASSERT_GE(demand, 2 * 512);
  rig.run_to_completion();
  for (RequestId id : ids) {
    EXPECT_EQ(rig.result(id).reason, FinishReason::length);
    EXPECT_EQ(rig.result(id).tokens.size(), 16u);
  }
  EXPECT_GT(rig.cache().stats().evictions, 0u);
  rig.expect_all_released();
}

TEST(Scheduler, ChunkedPrefillDoesNotStallDecodes) {
  RuntimeRig rig(small_batches());
  const RequestId chatty = rig.add(rig.tokens_of("Hi."), 40);
  // Let the short request reach decode, then queue a long prompt.
  while (rig.result(chatty).tokens.empty()) ASSERT_TRUE(rig.sched().step());
  const RequestId big = rig.add(rig.tokens_of(long_text(25)), 4);
  int steps_while_prefilling = 0;
  while (rig.result(big).tokens.empty() && rig.sched().step()) {
    ++steps_while_prefilling;
    // Every step produced one more token for the decoding request.
    if (rig.result(chatty).reason == FinishReason::none) {
      EXPECT_EQ(rig.result(chatty).tokens.size(), 1u + steps_while_prefilling);
    }
  }
  EXPECT_GT(steps_while_prefilling, 3);  // the long prompt took several chunks
  rig.run_to_completion();
  rig.expect_all_released();
}

TEST(Scheduler, AgedRequestIsNotStarvedByCacheHits) {
  RuntimeRig::Options o = small_batches();
  o.sched.max_running = 1;
  o.sched.max_queue_age_steps = 8;
  RuntimeRig rig(o);
  const std::vector<int32_t> shared = rig.tokens_of(long_text(4));
  rig.add(shared, 2);
  rig.run_to_completion();
  // A cold request, then a stream of hot ones that would always sort first.
  const RequestId cold = rig.add(rig.tokens_of("A question nobody asked before."), 2);
  std::vector<RequestId> hot;
  for (int i = 0; i < 12; ++i) {
    std::vector<int32_t> p = shared;
    p.push_back(100 + i);
    hot.push_back(rig.add(p, 2));
  }
  rig.run_to_completion();
  int hot_before_cold = 0;
  for (RequestId h : hot) {
    if (rig.result(h).finish_order < rig.result(cold).finish_order) ++hot_before_cold;
  }
  EXPECT_EQ(rig.result(cold).reason, FinishReason::length);
  // Without the age limit all 12 would run first; with it, the cold one waits
  // about 8 steps (a few hot requests of ~3 steps each).
  EXPECT_LE(hot_before_cold, 6);
  rig.expect_all_released();
}

}  // namespace rc::runtime::testing
