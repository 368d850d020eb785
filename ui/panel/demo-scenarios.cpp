#include "panel/demo-scenarios.h"

#include <algorithm>
#include <mutex>

#include "radixchat/documents.h"

namespace rc::ui::panel {

namespace {

ChatMessage sys(std::string s) { return {"system", std::move(s)}; }
ChatMessage user(std::string s) { return {"user", std::move(s)}; }
ChatMessage reply(int step) { return {"assistant", "{reply:" + std::to_string(step) + "}"}; }

const char* kHelper =
    "You are RadixChat, a friendly assistant running on this computer. Answer in two or three "
    "short sentences, in plain words, and say so when you are not sure.";

// The documents lesson's system message: `system`, then each of `docs`
// under its header, as the documents' layout places them
// (radixchat/documents.h) in the order their `order` says. Counted in
// bytes against an unbounded budget: both always fit whole.
std::string with_documents(const std::string& system, const std::vector<DocumentText>& docs) {
  DocumentSet set;
  set.documents = docs;
  const DocumentLayout layout = layout_documents(
      set, 1 << 30, [](std::string_view text) { return static_cast<int>(text.size()); });
  return system_with_documents(system, layout);
}

// Two documents asked about in click order, then in canonical (library)
// order, as the app, the CLI and the server lay them out.
DemoScenario documents_lesson() {
  DemoScenario d{"Documents in two orders",
                 "the same two documents clicked in two orders share only the system prompt; "
                 "in library order they share both",
                 0,
                 {}};
  const std::string system = "Answer from the documents below, in one or two sentences.";
  const std::string a =
      "The lighthouse keeper's log, 1893. Monday: fog all day, the horn sounded every thirty "
      "seconds. Tuesday: a schooner passed the north reef and signalled her thanks. Wednesday: "
      "oil delivered, twelve barrels, two of them leaking.\n";
  const std::string b =
      "Recipe card for a country loaf. Mix five hundred grams of flour with three hundred and "
      "fifty grams of water, add ten grams of salt and a spoon of starter, fold four times, "
      "let it rise overnight and bake in a covered pot.\n";
  // `order` is library order in the canonical layout; in click order it is
  // the order the user attached them.
  auto clicked = [&](bool a_first) {
    return with_documents(system,
                          {{"log.md", a_first ? 1 : 2, a, 0}, {"loaf.md", a_first ? 2 : 1, b, 0}});
  };
  const std::string canonical = clicked(true);  // log.md is first in the library
  const char* q1 = "How many barrels leaked?";
  const char* q2 = "How long does the dough rise?";
  d.steps = {
      {"Question 1 attaches log.md, then loaf.md. Laid out in click order: the system prompt, "
       "log.md, loaf.md, the question. Nothing is cached yet: all of it is computed.",
       {sys(clicked(true)), user(q1)}},
      {"Question 2 attaches the same two documents the other way round: loaf.md, then log.md. "
       "In click order its prompt differs right after the system prompt, so only the system "
       "prompt matches (gold), the tree forks there and both documents are computed again.",
       {sys(clicked(false)), user(q2)}},
      {"Canonical order, as RadixChat lays documents out: question 2 again with its documents "
       "in library order (log.md, then loaf.md), whatever order they were clicked in. Now it "
       "shares the system prompt and both documents with question 1: only the question is "
       "computed.",
       {sys(canonical), user(q2)}},
  };
  d.orientation = 1;
  return d;
}

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
  shared.orientation = 1;
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
  few.orientation = 1;
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
  turns.orientation = 2;
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
  branch.orientation = 2;
  v.push_back(branch);

  DemoScenario evict{"Eviction (small pool)",
                     "a tiny KV pool fills up; least recently used leaves are evicted",
                     256,
                     {}};
  // Each request reserves its prompt and max_tokens of output up front, so
  // a 256-token pool holds about three of these before LRU leaves must go.
  const char* topics[] = {"the moon", "bread",    "volcanoes", "bees",
                          "trains",   "glaciers", "chess",     "rain"};
  for (int i = 0; i < 8; ++i) {
    DemoStep s;
    s.messages = {sys(i % 2 ? kHelper : "You are a cheerful tutor. Keep answers short."),
                  user(std::string("Tell me something surprising about ") + topics[i] + ".")};
    s.max_tokens = 48;
    s.caption = i < 3 ? "Filling the small pool: each chat adds a branch."
                      : "The pool is nearly full: when a chat needs more room than is free, the "
                        "least recently used leaves are evicted (red, fading out; the card says "
                        "how many tokens).";
    evict.steps.push_back(std::move(s));
  }
  evict.orientation = 1;
  v.push_back(evict);

  // Four chats about different documents overflow a 512-token pool; the
  // first comes back last. Each document is several 64-token blocks long, so
  // the disk tier holds most of each chat when its leaf is evicted.
  DemoScenario tiers{"Tiers (disk cache)",
                     "a full pool sinks old chats to disk; asking again loads them back",
                     512,
                     {}};
  tiers.disk_tier = true;
  const char* docs[] = {
      "Notes on the lighthouse keeper's log, 1893. Monday: fog all day, the horn sounded every "
      "thirty seconds from dawn until dusk. Tuesday: a schooner passed close to the north reef "
      "and signalled her thanks. Wednesday: oil delivered, twelve barrels, two of them leaking. "
      "Thursday: gales from the west; the lamp glass cracked and was replaced by noon. Friday: "
      "calm, the keeper painted the gallery rail and mended the boat.",
      "Recipe card for a country loaf. Mix five hundred grams of flour with three hundred and "
      "fifty grams of water and leave it for an hour. Add ten grams of salt and a spoon of "
      "starter. Fold the dough four times over two hours, then shape it and let it rise "
      "overnight in a cool place. Bake in a covered pot at two hundred and fifty degrees for "
      "twenty minutes, then uncovered until the crust is dark.",
      "Minutes of the village garden club. The spring show moves to the church hall because "
      "the field is flooded. Mrs Hale will judge the roses and Mr Okafor the vegetables. The "
      "seed swap raised forty pounds for the new greenhouse. Members asked for a talk on "
      "composting and one on pruning fruit trees. The next meeting is on the first Tuesday "
      "of May, and tea will be provided by the Lin family.",
      "Field guide entry: the common swift. It spends almost its whole life in the air, "
      "eating, drinking and even sleeping on the wing. It arrives in Europe in late April and "
      "leaves in August for Africa. Its nest is a cup of feathers and straw glued with "
      "saliva, built under roof tiles. Young swifts may fly for two or three years before "
      "they first land to breed.",
  };
  const char* questions[] = {"What went wrong on Thursday?", "How long does the loaf bake?",
                             "Where will the spring show be held?", "When do swifts leave?"};
  auto chat = [&](int i) {
    return std::vector<ChatMessage>{sys(kHelper),
                                    user(std::string(docs[i]) + "\n\n" + questions[i])};
  };
  tiers.steps = {
      {"Chat 1 about a document: computed, and its whole 64-token blocks written through to "
       "disk (blue stripe, \"disk\" tag).",
       chat(0)},
      {"Chat 2, another document: the pool fills up.", chat(1)},
      {"Chat 3: no room left. The least recently used leaf goes: chat 1's short reply, less "
       "than one 64-token block, so none of it is on disk and it fades out (red).",
       chat(2)},
      {"Chat 4: more room is needed. Chat 1's document is evicted too, but its whole blocks "
       "stay on disk: it sinks (dark blue) instead of vanishing.",
       chat(3)},
      {"Chat 1 again: its blocks load back from disk (cyan, \"loaded\") instead of being "
       "computed.",
       chat(0)},
  };
  for (DemoStep& s : tiers.steps) s.max_tokens = 16;
  tiers.orientation = 1;
  v.push_back(tiers);

  // Greedy demo requests: the question asked again decodes the same reply,
  // so every token drafted from the first one is kept.
  DemoScenario drafts{"Drafted decoding",
                      "asking again drafts the reply from the tree; the model keeps what it "
                      "would write",
                      0,
                      {}};
  drafts.speculate = true;
  const std::vector<ChatMessage> ask{sys(kHelper), user("What is a KV cache?")};
  drafts.steps = {
      {"A question: its prompt is computed, and the reply decoded one token per step and "
       "cached after it.",
       ask, 40},
      {"The same question again (Regenerate at temperature 0): each step drafts what the tree "
       "holds after the text so far, the first reply, and the model checks the draft in one "
       "pass, keeping what it would write itself. That reply's node glows yellow-green "
       "(\"drafted N \xC2\xB7 kept M\"); the stats line counts drafted, accepted and wasted "
       "tokens.",
       ask, 40},
      {"A new question: nothing cached follows it, so the tree offers no draft and the reply "
       "decodes one token per step (a reply that copies its prompt drafts from the prompt: "
       "counted, no node marked).",
       {sys(kHelper), user("Why does a radix tree help a chat?")},
       40},
  };
  v.push_back(drafts);
  v.push_back(documents_lesson());
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
  RequestMetrics metrics;
};

DemoRunner::DemoRunner() : shared_(std::make_shared<Shared>()) {}
DemoRunner::~DemoRunner() {
  std::lock_guard<std::mutex> g(shared_->mu);
  ++shared_->generation;
}

size_t DemoRunner::steps() const {
  return scenario_ < 0 ? 0 : demo_scenarios()[size_t(scenario_)].steps.size();
}

bool DemoRunner::start(size_t scenario, Engine* engine, double now) {
  if (!engine || scenario >= demo_scenarios().size()) return false;
  stop(engine);
  {
    // The previous demo's reply is not this one's ("model: ..." went stale).
    std::lock_guard<std::mutex> g(shared_->mu);
    shared_->text.clear();
  }
  const DemoScenario& s = demo_scenarios()[scenario];
  scenario_ = int(scenario);
  step_ = 0;
  replies_.assign(s.steps.size(), std::string());
  results_.assign(s.steps.size(), DemoStepResult());
  status_.clear();
  advance_ = false;
  phase_ = Phase::lead;
  phase_at_ = now;
  if (note) note("demo: " + s.name + " started");
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
    shared_->metrics = RequestMetrics();
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
      s->metrics = ev.metrics;
      if (ev.reason == FinishReason::error) s->error = ev.error.message();
    }
    return true;
  };
  const EngineStats before = engine->stats();
  evicted_before_ = before.cache.evicted_tokens;
  written_before_ = before.tiers.blocks_queued;
  Result<RequestId> id = engine->submit(std::move(req), cb);
  if (!id.ok()) {
    status_ = "Step " + std::to_string(step_ + 1) + " refused: " + id.status().message();
    results_[step_].finished = true;
    results_[step_].error = id.status().message();
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

bool DemoRunner::can_advance() const {
  if (scenario_ < 0) return false;
  if (phase_ == Phase::lead) return true;
  return phase_ == Phase::settle && step_ + 1 < steps();
}

bool DemoRunner::next_step(double now) {
  if (!can_advance()) return false;
  advance_ = true;
  phase_at_ = std::min(phase_at_, now);
  return true;
}

double DemoRunner::seconds_to_next(double now) const {
  if (by_hand || scenario_ < 0) return -1;
  if (phase_ == Phase::lead) return std::max(0.0, lead_seconds - (now - phase_at_));
  if (phase_ == Phase::settle && step_ + 1 < steps())
    return std::max(0.0, seconds_per_step + lead_seconds - (now - phase_at_));
  return -1;
}

void DemoRunner::poll(Engine* engine, double now, bool hold) {
  if (scenario_ < 0 || !engine) return;
  const DemoScenario& s = demo_scenarios()[size_t(scenario_)];
  switch (phase_) {
    case Phase::lead: {
      // The caption is up; its request goes after the lead time (or on
      // Next step), never while the panel holds events back.
      const bool due = advance_ || (!by_hand && !hold && now - phase_at_ >= lead_seconds);
      if (!due) break;
      advance_ = false;
      submit_step(engine, now);
      break;
    }
    case Phase::running: {
      std::lock_guard<std::mutex> g(shared_->mu);
      if (!shared_->finished) break;
      replies_[step_] = shared_->text;
      results_[step_].finished = true;
      results_[step_].metrics = shared_->metrics;
      results_[step_].error = shared_->error;
      const EngineStats after = engine->stats();
      results_[step_].evicted_tokens = after.cache.evicted_tokens - evicted_before_;
      results_[step_].tier_blocks_written = after.tiers.blocks_queued - written_before_;
      if (!shared_->error.empty()) status_ = "Step failed: " + shared_->error;
      phase_ = Phase::settle;
      phase_at_ = now;
      break;
    }
    case Phase::settle:
      // While held (paused, or events still queued) the settle clock
      // restarts: the reading time counts from when the step is on screen.
      if (hold && !advance_) {
        phase_at_ = now;
        break;
      }
      if (step_ + 1 < s.steps.size()) {
        if (!advance_ && (by_hand || now - phase_at_ < seconds_per_step)) break;
        ++step_;
        phase_ = Phase::lead;
        // Next step sends at once; otherwise the new caption leads.
        phase_at_ = now;
      } else {
        phase_ = Phase::done;
        advance_ = false;
        // The last step's caption stays: by hand, Next step sends at once,
        // so this is where it is read.
        if (status_.empty())
          status_ = "Step " + std::to_string(s.steps.size()) + "/" +
                    std::to_string(s.steps.size()) + ": " + s.steps.back().caption + "\n" + s.name +
                    ": done. Hover the nodes to see what each one holds.";
        if (note) note("demo: " + s.name + " finished");
      }
      break;
    case Phase::idle:
    case Phase::done:
      break;
  }
}

const DemoStepResult* DemoRunner::last_result() const {
  for (size_t i = results_.size(); i-- > 0;)
    if (results_[i].finished) return &results_[i];
  return nullptr;
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
