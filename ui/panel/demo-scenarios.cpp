#include "panel/demo-scenarios.h"

#include <mutex>

namespace rc::ui::panel {

namespace {

ChatMessage sys(std::string s) { return {"system", std::move(s)}; }
ChatMessage user(std::string s) { return {"user", std::move(s)}; }
ChatMessage reply(int step) { return {"assistant", "{reply:" + std::to_string(step) + "}"}; }

const char* kHelper =
    "You are RadixChat, a friendly assistant running on this computer. Answer in two or three "
    "short sentences, in plain words, and say so when you are not sure.";

std::vector<DemoScenario> build() {
  std::vector<DemoScenario> v;

  DemoScenario shared{"Shared system prompt",
                      "three chats with the same system prompt share one cached prefix",
                      0,
                      {}};
  shared.steps = {
      {"Chat 1: nothing is cached yet, so the whole prompt is computed and inserted as a new "
       "branch (green).",
       {sys(kHelper), user("What is a KV cache?")}},
      {"Chat 2 has the same system prompt: the match (gold path) reuses it, and the node splits "
       "where the questions differ.",
       {sys(kHelper), user("Why does reusing a prefix save time?")}},
      {"Chat 3: the shared prefix now has three children. Only the new question is computed; "
       "watch the hit rate climb.",
       {sys(kHelper), user("Give me one tip for a shorter prompt.")}},
  };
  v.push_back(shared);

  const std::string shots =
      "Turn each word into its plural.\nword: cat\nplural: cats\nword: box\nplural: "
      "boxes\nword: city\nplural: cities\nword: child\nplural: children\nword: ";
  DemoScenario few{"Few-shot prompt", "the same worked examples before every question", 0, {}};
  few.steps = {
      {"A few-shot prompt: four worked examples, then the question. All of it is new, so all "
       "of it is computed.",
       {user(shots + "mouse\nplural:")},
       8},
      {"Same examples, new word: the examples are matched from the cache; only the last line "
       "is computed.",
       {user(shots + "leaf\nplural:")},
       8},
      {"Again: the examples node gains a third child. Long shared examples make few-shot "
       "prompting cheap.",
       {user(shots + "bus\nplural:")},
       8},
  };
  v.push_back(few);

  DemoScenario turns{
      "Multi-turn chat", "each turn resends the conversation; the cache keeps it", 0, {}};
  turns.steps = {
      {"Turn 1: a new conversation. Its prompt and the reply are inserted as one path.",
       {sys(kHelper), user("Hi! Can you help me plan a short trip to the sea?")}},
      {"Turn 2 resends turn 1 and its reply: all of it is matched (gold), only the new message "
       "is computed.",
       {sys(kHelper), user("Hi! Can you help me plan a short trip to the sea?"), reply(0),
        user("What should I pack?")}},
      {"Turn 3: the path grows one node per turn. The longer the chat, the more the cache saves.",
       {sys(kHelper), user("Hi! Can you help me plan a short trip to the sea?"), reply(0),
        user("What should I pack?"), reply(1), user("And what if it rains?")}},
  };
  v.push_back(turns);

  DemoScenario branch{
      "Branch an old message", "edit an earlier message: the tree forks there", 0, {}};
  const std::string q1 = "Tell me a fun fact about octopuses.";
  branch.steps = {
      {"A two-turn chat is cached as one path.", {sys(kHelper), user(q1)}},
      {"Second turn: the path grows.",
       {sys(kHelper), user(q1), reply(0), user("How many hearts do they have?")}},
      {"Now edit the second message: everything before it is matched, and the tree forks right "
       "there (split, white flash).",
       {sys(kHelper), user(q1), reply(0), user("Can they change colour?")}},
      {"Edit the first message instead: the fork moves up to just after the system prompt.",
       {sys(kHelper), user("Tell me a fun fact about owls.")}},
  };
  v.push_back(branch);

  DemoScenario evict{"Eviction (small pool)",
                     "a tiny KV pool fills up; least recently used leaves are evicted",
                     320,
                     {}};
  // Each request reserves its prompt and max_tokens of output up front, so
  // a 320-token pool holds about three of these before LRU leaves must go.
  const char* topics[] = {"the moon", "bread",    "volcanoes", "bees",
                          "trains",   "glaciers", "chess",     "rain"};
  for (int i = 0; i < 8; ++i) {
    DemoStep s;
    s.messages = {sys(i % 2 ? kHelper : "You are a cheerful tutor. Keep answers short."),
                  user(std::string("Tell me something surprising about ") + topics[i] + ".")};
    s.max_tokens = 48;
    s.caption = i < 3 ? "Filling the 320-token pool: each chat adds a branch."
                      : "The pool is full: to make room, the least recently used leaves are "
                        "evicted (red, fading out; see the event log).";
    evict.steps.push_back(std::move(s));
  }
  v.push_back(evict);
  return v;
}

}  // namespace

const std::vector<DemoScenario>& demo_scenarios() {
  static const std::vector<DemoScenario> v = build();
  return v;
}

struct DemoRunner::Shared {
  std::mutex mu;
  uint64_t generation = 0;  // callbacks of an older generation are ignored
  std::string text;
  bool finished = false;
  std::string error;
};

DemoRunner::DemoRunner() : shared_(std::make_shared<Shared>()) {}
DemoRunner::~DemoRunner() {
  std::lock_guard<std::mutex> g(shared_->mu);
  ++shared_->generation;
}

size_t DemoRunner::steps() const {
  return scenario_ < 0 ? 0 : demo_scenarios()[size_t(scenario_)].steps.size();
}

bool DemoRunner::start(size_t scenario, Engine* engine, const std::string& policy, double now) {
  if (!engine || scenario >= demo_scenarios().size()) return false;
  stop(engine);
  const DemoScenario& s = demo_scenarios()[scenario];
  scenario_ = int(scenario);
  step_ = 0;
  replies_.assign(s.steps.size(), std::string());
  status_.clear();
  phase_at_ = now;
  if (note) note("demo: " + s.name + " started");
  if (s.pool_tokens > 0 && engine->model_info().kv_pool_tokens > s.pool_tokens * 2 &&
      request_pool) {
    phase_ = Phase::wait_pool;
    status_ =
        "Asking for a " + std::to_string(s.pool_tokens) + "-token KV pool so eviction shows...";
    request_pool(policy == "off" ? "radix" : policy, s.pool_tokens);
  } else {
    phase_ = Phase::submit;
  }
  return true;
}

void DemoRunner::stop(Engine* engine) {
  if (engine && phase_ == Phase::running && request_) engine->cancel(request_);
  {
    std::lock_guard<std::mutex> g(shared_->mu);
    ++shared_->generation;
  }
  if (scenario_ >= 0 && phase_ != Phase::done && note) note("demo: stopped");
  scenario_ = -1;
  phase_ = Phase::idle;
  request_ = 0;
  status_.clear();
}

void DemoRunner::engine_changed(Engine* engine, double now) {
  if (scenario_ < 0) return;
  {
    std::lock_guard<std::mutex> g(shared_->mu);
    ++shared_->generation;  // the old engine's requests died with it
  }
  if (!engine) {
    stop(nullptr);
    return;
  }
  if (phase_ == Phase::wait_pool || phase_ == Phase::running) {
    // The new engine has an empty cache: start the scenario from its top.
    step_ = 0;
    phase_ = Phase::submit;
    phase_at_ = now;
    status_.clear();
  }
}

bool DemoRunner::submit_step(Engine* engine, double now) {
  const DemoStep& st = demo_scenarios()[size_t(scenario_)].steps[step_];
  GenerateRequest req;
  req.messages = st.messages;
  for (ChatMessage& m : req.messages) {
    if (m.role == "assistant" && m.content.rfind("{reply:", 0) == 0) {
      const size_t k = size_t(std::stoi(m.content.substr(7)));
      m.content = k < replies_.size() ? replies_[k] : std::string();
    }
  }
  req.max_tokens = st.max_tokens;
  uint64_t gen;
  {
    std::lock_guard<std::mutex> g(shared_->mu);
    gen = ++shared_->generation;
    shared_->text.clear();
    shared_->finished = false;
    shared_->error.clear();
  }
  std::weak_ptr<Shared> weak = shared_;
  auto cb = [weak, gen](const StreamEvent& ev) {
    auto s = weak.lock();
    if (!s) return false;
    std::lock_guard<std::mutex> g(s->mu);
    if (s->generation != gen) return false;
    s->text += ev.text;
    if (ev.finished) {
      s->finished = true;
      if (ev.reason == FinishReason::error) s->error = ev.error.message();
    }
    return true;
  };
  Result<RequestId> id = engine->submit(std::move(req), cb);
  if (!id.ok()) {
    status_ = "Step " + std::to_string(step_ + 1) + " refused: " + id.status().message();
    if (note) note("demo: " + status_);
    phase_ = Phase::done;
    return false;
  }
  request_ = id.value();
  phase_ = Phase::running;
  phase_at_ = now;
  if (note) note("demo step " + std::to_string(step_ + 1) + ": " + st.caption);
  return true;
}

void DemoRunner::poll(Engine* engine, double now) {
  if (scenario_ < 0 || !engine) return;
  const DemoScenario& s = demo_scenarios()[size_t(scenario_)];
  switch (phase_) {
    case Phase::wait_pool:
      // Nobody answered the request (a bare panel): run on this pool.
      if (now - phase_at_ > 4.0) {
        status_.clear();
        phase_ = Phase::submit;
      }
      break;
    case Phase::submit:
      submit_step(engine, now);
      break;
    case Phase::running: {
      std::lock_guard<std::mutex> g(shared_->mu);
      if (!shared_->finished) break;
      replies_[step_] = shared_->text;
      if (!shared_->error.empty()) status_ = "Step failed: " + shared_->error;
      phase_ = Phase::pause;
      phase_at_ = now;
      break;
    }
    case Phase::pause:
      if (now - phase_at_ < seconds_per_step) break;
      if (step_ + 1 < s.steps.size()) {
        ++step_;
        phase_ = Phase::submit;
      } else {
        phase_ = Phase::done;
        status_ = s.name + ": done. Hover the nodes to see what each one holds.";
        if (note) note("demo: " + s.name + " finished");
      }
      break;
    case Phase::idle:
    case Phase::done:
      break;
  }
}

std::string DemoRunner::caption() const {
  if (scenario_ < 0) return "";
  if (!status_.empty()) return status_;
  const DemoScenario& s = demo_scenarios()[size_t(scenario_)];
  return "Step " + std::to_string(step_ + 1) + "/" + std::to_string(s.steps.size()) + ": " +
         s.steps[step_].caption;
}

std::string DemoRunner::reply() const {
  std::lock_guard<std::mutex> g(shared_->mu);
  return shared_->text;
}

}  // namespace rc::ui::panel
