// Lesson mode without a model or a window: the demo runner's pacing against
// a scripted engine (a paused or still-queued panel holds it; Next step
// overrides the hold; "done" waits for the queue), the lesson engine's
// asynchronous build, cancel and failure, and the lesson's engine config
// and pool size.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <thread>

#include "panel/demo-scenarios.h"
#include "panel/lesson-engine.h"

namespace rc::ui::panel {
namespace {

// An engine whose requests finish when the test says so, with the metrics
// the test gives; it counts what it was asked.
class ScriptedEngine final : public Engine {
 public:
  Result<RequestId> submit(GenerateRequest request, StreamCallback callback) override {
    requests.push_back(std::move(request));
    callbacks.push_back(std::move(callback));
    return RequestId(callbacks.size());
  }
  void cancel(RequestId id) override { cancelled.push_back(id); }
  Status warmup(const std::vector<std::vector<ChatMessage>>&) override { return Status(); }
  Result<std::vector<float>> last_logits(const std::vector<int32_t>&) override {
    return Status(StatusCode::invalid_argument, "not scripted");
  }
  EngineStats stats() const override { return stats_; }
  CacheSnapshot cache_snapshot() const override { return {}; }
  std::vector<CacheEvent> drain_events(bool* overflowed) override {
    if (overflowed) *overflowed = false;
    return {};
  }
  const ModelInfo& model_info() const override { return info_; }
  Result<std::vector<int32_t>> tokenize(const std::string& text, bool) const override {
    return std::vector<int32_t>(text.size(), 7);
  }
  std::string detokenize(const std::vector<int32_t>&) const override { return ""; }
  Result<std::vector<int32_t>> render_chat(const std::vector<ChatMessage>& m) const override {
    size_t n = 0;
    for (const ChatMessage& c : m) n += c.content.size() + 4;
    return std::vector<int32_t>(n, 7);
  }

  // Finishes request `i` (0-based) with these metrics, as the engine thread
  // would: a text piece, then the finished event.
  void finish(size_t i, int prompt, int cached, uint64_t evicted_now = 0, uint64_t written_now = 0,
              int loaded = 0) {
    stats_.cache.evicted_tokens += evicted_now;
    stats_.tiers.blocks_queued += written_now;
    StreamEvent piece;
    piece.text = "reply " + std::to_string(i);
    piece.token = 5;
    callbacks.at(i)(piece);
    StreamEvent done;
    done.finished = true;
    done.reason = FinishReason::stop;
    done.metrics.prompt_tokens = prompt;
    done.metrics.cached_tokens = cached;
    done.metrics.computed_tokens = prompt - cached;
    done.metrics.ttft_ms = 12;
    done.metrics.loaded_tokens = loaded;
    callbacks.at(i)(done);
  }

  std::vector<GenerateRequest> requests;
  std::vector<StreamCallback> callbacks;
  std::vector<RequestId> cancelled;
  EngineStats stats_;
  ModelInfo info_;
};

size_t scenario(const std::string& name) {
  const auto& all = demo_scenarios();
  for (size_t i = 0; i < all.size(); ++i)
    if (all[i].name.rfind(name, 0) == 0) return i;
  ADD_FAILURE() << "no demo " << name;
  return 0;
}

TEST(DemoRunner, PacesStepsAndWaitsForThePanel) {
  ScriptedEngine e;
  DemoRunner d;
  d.lead_seconds = 1;
  d.seconds_per_step = 2;
  const size_t shared = scenario("Shared system prompt");
  ASSERT_TRUE(d.start(shared, &e, 0));
  d.poll(&e, 0.5, false);
  EXPECT_TRUE(e.requests.empty()) << "the caption leads its request";
  d.poll(&e, 1.0, true);
  EXPECT_TRUE(e.requests.empty()) << "held (paused): nothing is sent";
  d.poll(&e, 1.1, false);
  ASSERT_EQ(e.requests.size(), 1u);
  EXPECT_TRUE(d.in_flight());
  EXPECT_NE(d.caption().find("Step 1/3"), std::string::npos);

  e.finish(0, 60, 0);
  d.poll(&e, 1.2, true);  // finished while the panel still holds its events
  ASSERT_TRUE(d.results()[0].finished);
  EXPECT_EQ(d.results()[0].metrics.computed_tokens, 60);
  d.poll(&e, 9.0, true);
  d.poll(&e, 9.5, true);
  EXPECT_EQ(d.step(), 0u) << "the reading time starts when the step is on screen";
  d.poll(&e, 10.0, false);
  d.poll(&e, 11.4, false);
  EXPECT_EQ(d.step(), 0u);
  d.poll(&e, 11.6, false);
  EXPECT_EQ(d.step(), 1u);
  EXPECT_EQ(e.requests.size(), 1u) << "the next caption leads again";
  d.poll(&e, 12.7, false);
  ASSERT_EQ(e.requests.size(), 2u);
  // Step 2 quotes nothing; step 1's reply went into replies for later turns.
  EXPECT_EQ(e.requests[1].messages.back().content, "Why does reusing a prefix save time?");
}

TEST(DemoRunner, NextStepOverridesTheHoldAndDoneWaitsForTheQueue) {
  ScriptedEngine e;
  DemoRunner d;
  d.by_hand = true;
  ASSERT_TRUE(d.start(scenario("Shared system prompt"), &e, 0));
  d.poll(&e, 100, false);
  EXPECT_TRUE(e.requests.empty()) << "by hand: nothing goes without Next step";
  EXPECT_TRUE(d.can_advance());
  ASSERT_TRUE(d.next_step(100));
  d.poll(&e, 100, true);  // paused, but Next step was pressed
  ASSERT_EQ(e.requests.size(), 1u);
  EXPECT_FALSE(d.next_step(100)) << "one request at a time";
  for (size_t i = 0; i < 3; ++i) {
    e.finish(i, 60 + int(i), i == 0 ? 0 : 51, i == 2 ? 9 : 0);
    d.poll(&e, 101, true);
    if (i < 2) {
      d.poll(&e, 200, false);
      EXPECT_EQ(e.requests.size(), i + 1) << "by hand waits";
      ASSERT_TRUE(d.next_step(200));
      d.poll(&e, 200, false);
      d.poll(&e, 200, false);
      ASSERT_EQ(e.requests.size(), i + 2);
    }
  }
  // The last step is finished in the engine; the panel still holds events.
  d.poll(&e, 300, true);
  EXPECT_FALSE(d.finished()) << "not done while events wait to be shown";
  EXPECT_NE(d.caption().find("Step 3/3"), std::string::npos) << d.caption();
  d.poll(&e, 301, false);
  EXPECT_TRUE(d.finished());
  // Done: the last step's caption is still there to read, with the end.
  const DemoScenario& shared = demo_scenarios()[scenario("Shared system prompt")];
  EXPECT_NE(d.caption().find("Step 3/3: " + shared.steps.back().caption), std::string::npos)
      << d.caption();
  EXPECT_NE(d.caption().find("done"), std::string::npos) << d.caption();
  EXPECT_EQ(d.reply(), "reply 2");
  EXPECT_EQ(d.results()[1].metrics.cached_tokens, 51);
  EXPECT_EQ(d.results()[2].evicted_tokens, 9u);
  EXPECT_EQ(d.results()[1].evicted_tokens, 0u);
  // Another demo starts without the last one's reply on screen.
  ASSERT_TRUE(d.start(scenario("Shared system prompt"), &e, 400));
  EXPECT_EQ(d.reply(), "") << "stale model: line";
}

TEST(DemoRunner, StopCancelsTheStepInFlight) {
  ScriptedEngine e;
  DemoRunner d;
  d.lead_seconds = 0;
  ASSERT_TRUE(d.start(scenario("Multi-turn"), &e, 0));
  d.poll(&e, 0, false);
  ASSERT_EQ(e.requests.size(), 1u);
  d.stop(&e);
  EXPECT_EQ(e.cancelled, std::vector<RequestId>{1});
  EXPECT_FALSE(d.running());
  // A late finish of the old request is ignored.
  e.finish(0, 10, 0);
  EXPECT_FALSE(d.running());
  EXPECT_EQ(d.reply(), "");
}

TEST(LessonEngine, BuildsOnAWorkerCancelsAndReportsFailure) {
  std::atomic<int> calls{0};
  LessonEngine l;
  l.factory = [&](const EngineConfig& c) -> Result<std::unique_ptr<Engine>> {
    ++calls;
    if (c.model_path == "broken") return Status(StatusCode::invalid_argument, "no such cache");
    if (c.model_path == "slow") {
      // Loads until cancelled, reporting progress like Engine::create.
      while (c.load_progress(0.5f)) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      return Status(StatusCode::cancelled, "cancelled");
    }
    return std::unique_ptr<Engine>(new ScriptedEngine());
  };
  EngineConfig ok;
  l.build(ok);
  for (int i = 0; i < 2000 && l.poll() == LessonEngine::State::building; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ASSERT_EQ(l.state(), LessonEngine::State::ready);
  EXPECT_NE(l.engine(), nullptr);

  EngineConfig bad;
  bad.model_path = "broken";
  l.build(bad);
  EXPECT_EQ(l.engine(), nullptr) << "the previous engine was released";
  for (int i = 0; i < 2000 && l.poll() == LessonEngine::State::building; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ASSERT_EQ(l.state(), LessonEngine::State::failed);
  EXPECT_EQ(l.error(), "no such cache");

  EngineConfig slow;
  slow.model_path = "slow";
  l.build(slow);
  EXPECT_EQ(l.state(), LessonEngine::State::building);
  l.release();  // returns once the load saw the cancel
  EXPECT_EQ(l.state(), LessonEngine::State::none);
  EXPECT_EQ(calls.load(), 3);
}

TEST(LessonEngine, ConfigFollowsTheUsersModelAndPoolFitsTheDemo) {
  ModelInfo info;
  info.path = "/models/x.gguf";
  info.backend = "cuda";
  info.kv_type = "BF16";
  info.context_length = 2048;
  const EngineConfig c = lesson_config(info, CacheSetting::hash16, 512);
  EXPECT_EQ(c.model_path, "/models/x.gguf");
  EXPECT_EQ(c.backend, BackendSetting::cuda);
  EXPECT_EQ(c.kv_type, KvType::bf16);
  EXPECT_EQ(c.context_length, 2048);
  EXPECT_EQ(c.cache, CacheSetting::hash16);
  EXPECT_EQ(c.kv_pool_tokens, 512);
  EXPECT_FALSE(c.weight_copies);  // a lesson reads the file mapping, not a copy of its own

  const size_t evict = scenario("Eviction");
  const size_t shared = scenario("Shared system prompt");
  const int64_t wish = demo_scenarios()[evict].pool_tokens;
  ASSERT_GT(wish, 0);
  // Short prompts: the eviction demo keeps its small pool.
  EXPECT_EQ(lesson_pool_tokens(evict, 2048, [](size_t) { return int64_t(40); }), wish);
  // Long prompts: grown so the longest request (prompt + max_tokens) fits.
  const int64_t long_prompt = wish;
  const int64_t grown = lesson_pool_tokens(evict, 2048, [&](size_t) { return long_prompt; });
  EXPECT_GE(grown, long_prompt + demo_scenarios()[evict].steps[0].max_tokens);
  // Other demos: the default, or three of their longest requests.
  EXPECT_EQ(lesson_pool_tokens(shared, 2048, [](size_t) { return int64_t(60); }), 2048);
  EXPECT_EQ(lesson_pool_tokens(shared, 2048, [](size_t) { return int64_t(1000); }),
            3 * (1000 + demo_scenarios()[shared].steps[0].max_tokens));
  // Unknown sizes (a render failed): the wish or the default.
  EXPECT_EQ(lesson_pool_tokens(shared, 2048, [](size_t) { return int64_t(-1); }), 2048);
}

// The Tiers lesson: a disk tier of its own under a small radix pool, chats
// that overflow it, and the first chat asked again at the end; each step
// records the blocks it wrote below and what it loaded back.
TEST(DemoRunner, TiersLessonAsksTheFirstChatAgainAndCountsWhatWentBelow) {
  const size_t tiers = scenario("Tiers");
  const DemoScenario& s = demo_scenarios()[tiers];
  EXPECT_TRUE(s.disk_tier);
  EXPECT_EQ(s.pool_tokens, 512);
  ASSERT_GE(s.steps.size(), 4u);
  EXPECT_EQ(s.steps.back().messages.back().content, s.steps.front().messages.back().content);
  for (const DemoScenario& other : demo_scenarios())
    if (&other != &s) EXPECT_FALSE(other.disk_tier) << other.name;

  ScriptedEngine e;
  DemoRunner d;
  d.by_hand = true;
  ASSERT_TRUE(d.start(tiers, &e, 0));
  for (size_t i = 0; i < s.steps.size(); ++i) {
    ASSERT_TRUE(d.next_step(double(i)));
    d.poll(&e, double(i), false);  // settle -> lead
    d.poll(&e, double(i), false);  // lead -> sent
    ASSERT_EQ(e.requests.size(), i + 1);
    const bool last = i + 1 == s.steps.size();
    e.finish(i, 200, last ? 192 : 0, i >= 2 ? 150 : 0, 3, last ? 192 : 0);
    d.poll(&e, double(i), false);
  }
  ASSERT_EQ(d.results().size(), s.steps.size());
  EXPECT_EQ(d.results()[0].tier_blocks_written, 3u);
  EXPECT_EQ(d.results()[2].evicted_tokens, 150u);
  EXPECT_EQ(d.results().back().metrics.loaded_tokens, 192);
}

TEST(LessonEngine, ATempDiskTierIsItsOwnAndGoesWithTheEngine) {
  LessonEngine l;
  std::string seen;
  l.factory = [&](const EngineConfig& c) -> Result<std::unique_ptr<Engine>> {
    seen = c.kv_disk;
    return std::unique_ptr<Engine>(new ScriptedEngine());
  };
  EngineConfig c;
  l.build(c, true);
  for (int i = 0; i < 2000 && l.poll() == LessonEngine::State::building; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ASSERT_EQ(l.state(), LessonEngine::State::ready);
  ASSERT_FALSE(seen.empty());
  EXPECT_EQ(seen, l.temp_disk());
  EXPECT_EQ(l.config().kv_disk, seen);
  EXPECT_TRUE(std::filesystem::is_directory(seen));
  const std::string first = seen;
  l.build(c, true);  // a second lesson: another folder, the first one gone
  for (int i = 0; i < 2000 && l.poll() == LessonEngine::State::building; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_NE(seen, first);
  EXPECT_FALSE(std::filesystem::exists(first));
  l.release();
  EXPECT_FALSE(std::filesystem::exists(seen));
  EXPECT_EQ(l.temp_disk(), "");
  // Without it, the lesson's engine has no disk tier.
  l.build(c);
  for (int i = 0; i < 2000 && l.poll() == LessonEngine::State::building; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_EQ(seen, "");
  EXPECT_EQ(lesson_config(ModelInfo{}, CacheSetting::radix, 512).kv_disk, "");
}

}  // namespace
}  // namespace rc::ui::panel
