#include "panel/lesson-engine.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <filesystem>
#include <system_error>

#include "panel/demo-scenarios.h"

namespace rc::ui::panel {

EngineConfig lesson_config(const ModelInfo& user, CacheSetting policy, int64_t pool_tokens) {
  EngineConfig c;
  c.model_path = user.path;
  // ModelInfo names the backend ("cpu", "" before one ran) and the KV type
  // ("F16") of the user's engine; what does not parse keeps the default.
  if (Result<BackendSetting> b = parse_backend_setting(user.backend); b.ok()) c.backend = *b;
  c.cache = policy;
  c.eviction = Eviction::lru;  // the lessons narrate least-recently-used eviction
  c.kv_pool_tokens = pool_tokens;
  std::string kv = user.kv_type;
  for (char& ch : kv) ch = char(std::tolower(static_cast<unsigned char>(ch)));
  if (Result<KvType> t = parse_kv_type(kv); t.ok()) c.kv_type = *t;
  c.context_length = user.context_length;
  c.weight_copies = false;  // share the file mapping's pages instead of a second copy
  return c;
}

EngineConfig scenario_config(const ModelInfo& user, const DemoScenario& s, CacheSetting policy,
                             int64_t pool_tokens) {
  EngineConfig c = lesson_config(user, s.disk_tier ? CacheSetting::radix : policy, pool_tokens);
  // Only the drafting lesson drafts: in the others, draft marks would be
  // noise beside what they teach.
  c.speculate = s.speculate ? SpeculateSetting::tree : SpeculateSetting::off;
  return c;
}

int64_t lesson_pool_tokens(size_t scenario, int64_t fallback,
                           const std::function<int64_t(size_t step)>& prompt_tokens) {
  const DemoScenario& s = demo_scenarios().at(scenario);
  int64_t pool = s.pool_tokens > 0 ? s.pool_tokens : fallback;
  int64_t longest = 0;
  for (size_t i = 0; i < s.steps.size(); ++i) {
    const int64_t n = prompt_tokens ? prompt_tokens(i) : -1;
    if (n >= 0) longest = std::max<int64_t>(longest, n + s.steps[i].max_tokens);
  }
  // A scenario that asks for a small pool (eviction) gets it as long as its
  // longest request fits; the others hold three requests at least.
  return s.pool_tokens > 0 ? std::max(pool, longest + 16) : std::max(pool, longest * 3);
}

LessonEngine::LessonEngine() : factory(&Engine::create) {}

LessonEngine::~LessonEngine() { release(); }

void LessonEngine::build(const EngineConfig& config, bool temp_disk) {
  release();
  config_ = config;
  error_.clear();
  cancel_ = std::make_shared<std::atomic<bool>>(false);
  EngineConfig c = config;
  if (temp_disk) {
    static std::atomic<int> serial{0};
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::path dir =
        fs::temp_directory_path(ec) /
        ("radixchat-lesson-kv-" + std::to_string(::getpid()) + "-" + std::to_string(++serial));
    fs::remove_all(dir, ec);
    fs::create_directories(dir, ec);
    temp_disk_ = dir.string();
    c.kv_disk = config_.kv_disk = temp_disk_;
  }
  c.load_progress = [flag = cancel_](float) { return !flag->load(); };
  pending_ = std::async(std::launch::async, [f = factory, c] { return f(c); });
  state_ = State::building;
}

LessonEngine::State LessonEngine::poll() {
  if (state_ != State::building) return state_;
  if (pending_.wait_for(std::chrono::seconds(0)) != std::future_status::ready) return state_;
  Result<std::unique_ptr<Engine>> r = pending_.get();
  if (r.ok()) {
    engine_ = std::move(r.value());
    state_ = State::ready;
  } else {
    error_ = r.status().message();
    state_ = State::failed;
  }
  return state_;
}

void LessonEngine::release() {
  if (state_ == State::building) {
    cancel_->store(true);  // the load stops at its next progress report
    pending_.wait();
    pending_ = {};
  }
  engine_.reset();  // writes its queued blocks and unlocks the folder first
  if (!temp_disk_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(temp_disk_, ec);
    temp_disk_.clear();
  }
  state_ = State::none;
}

namespace {

class LessonFeed final : public CacheFeed {
 public:
  explicit LessonFeed(Engine& e) : e_(e), inner_(make_engine_feed(e)) {}
  CacheSnapshot snapshot() override { return inner_->snapshot(); }
  std::vector<CacheEvent> drain(bool* overflowed) override { return inner_->drain(overflowed); }
  CacheStats cache_stats() override { return inner_->cache_stats(); }
  bool request_totals(RequestTotals* out) override { return inner_->request_totals(out); }
  bool tier_stats(TierStats* out) override { return inner_->tier_stats(out); }
  std::string detokenize(const std::vector<Token>& tokens) override {
    return inner_->detokenize(tokens);
  }
  Engine* engine() override { return &e_; }
  std::string cache_setting() override { return inner_->cache_setting(); }
  int64_t pool_tokens() override { return inner_->pool_tokens(); }
  std::string describe() override { return "lesson cache (yours is untouched)"; }

 private:
  Engine& e_;
  std::unique_ptr<CacheFeed> inner_;
};

}  // namespace

std::unique_ptr<CacheFeed> make_lesson_feed(Engine& engine) {
  return std::make_unique<LessonFeed>(engine);
}

}  // namespace rc::ui::panel
