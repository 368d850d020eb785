// The panel's recordings without a window: a recording made in
// the test (a radix cache driven like the scheduler, its events, snapshots
// and requests written through the Recorder), opened through the app's
// opener (app/gui/recording-source) and shown by the panel's own state.
//
// Oracle: the first snapshot plus every event replayed from the start
// (recording::ReplayTree). Wherever the panel's cursor goes (far back, far
// forward, one event, one request), the panel's tree must be that tree,
// node for node; a miss explanation must be what cache-report says; and
// Record/Stop must write a file that opens to the engine's tree.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <random>
#include <thread>

#include "panel/cache-panel-state.h"
#include "recording-source.h"
#include "recording/cache-report.h"
#include "recording/miss-analysis.h"
#include "recording/recorder.h"
#include "recording/recording-reader.h"
#include "recording/replay-tree.h"
#include "test-paths.h"

namespace rc::ui {
namespace {

namespace fs = std::filesystem;

std::string temp_path(const std::string& name) { return rc::test::temp_path("rc-recpanel", name); }

// Prompts: one of three system prompts, a short span that varies (a date),
// a long shared part, then a question. The varying span makes misses that
// realign, so explanations and the advisor have something to say.
class Workload {
 public:
  explicit Workload(uint32_t seed, int64_t pages) : rng_(seed) {
    CacheConfig cfg;
    cfg.total_pages = pages;
    cache_ = std::move(make_kv_cache(cfg).value());
  }
  KvCache& cache() { return *cache_; }
  std::vector<CacheEvent> drain() {
    std::vector<CacheEvent> out;
    cache_->events().drain(out);
    return out;
  }
  std::vector<Token> prompt() {
    std::vector<Token> p;
    const int sys = int(rng_() % 3);
    for (int i = 0; i < 12 + sys * 5; ++i) p.push_back(Token(1000 * (sys + 1) + i));
    const int date = int(rng_() % 6);
    for (int i = 0; i < 3; ++i) p.push_back(Token(9000 + date * 10 + i));
    for (int i = 0; i < 24; ++i) p.push_back(Token(5000 + i));
    const int tail = 1 + int(rng_() % 12);
    for (int i = 0; i < tail; ++i) p.push_back(Token(100 + rng_() % 40));
    return p;
  }
  // One request as the scheduler runs it; returns the matched length.
  int64_t request(const std::vector<Token>& p) {
    MatchResult m = cache_->match_prefix(p);
    EXPECT_TRUE(cache_->lock(m.node).ok());
    std::vector<PageId> pages = m.pages;
    if (cache_->alloc_pages(int64_t(p.size()) - m.tokens, pages).ok()) {
      EXPECT_TRUE(cache_->insert(p, pages).ok());
    }
    EXPECT_TRUE(cache_->unlock(m.node).ok());
    return m.tokens;
  }

 private:
  std::mt19937 rng_;
  std::unique_ptr<KvCache> cache_;
};

void record_workload(const std::string& path, int requests) {
  recording::RecorderOptions opt;
  opt.snapshot_every = 61;  // writer snapshots every few requests: seeks start from them
  opt.commit_events = 40;
  opt.source = "test";
  auto rec = recording::Recorder::create(path, opt);
  ASSERT_TRUE(rec.ok()) << rec.status().message();
  Workload w(11, 260);  // a small pool: evictions and merges happen
  (*rec)->snapshot(w.cache().snapshot());
  for (int i = 0; i < requests; ++i) {
    const std::vector<Token> p = w.prompt();
    (*rec)->request_arrived(uint64_t(i + 1), std::vector<int32_t>(p.begin(), p.end()));
    RequestMetrics m;
    m.prompt_tokens = int(p.size());
    m.cached_tokens = int(w.request(p));
    m.output_tokens = 1;
    (*rec)->events(w.drain());
    (*rec)->request_finished(uint64_t(i + 1), m, FinishReason::stop, {7});
    if (i % 25 == 9) (*rec)->snapshot(w.cache().snapshot());
  }
  EXPECT_GT(w.cache().stats().evictions, 0u);
  ASSERT_TRUE((*rec)->close().ok());
}

// The tree at every seq from the first snapshot, by replay from the start.
std::map<uint64_t, CacheSnapshot> replay_from_start(const std::string& path) {
  std::map<uint64_t, CacheSnapshot> out;
  auto rec = recording::Recording::open(path);
  EXPECT_TRUE(rec.ok());
  auto snaps = (*rec)->snapshots();
  EXPECT_TRUE(snaps.ok() && !snaps->empty());
  auto first = (*rec)->load_snapshot(snaps->front().id);
  EXPECT_TRUE(first.ok());
  recording::ReplayTree tree;
  tree.reset(first.value());
  CacheSnapshot header = first.value();
  header.nodes.clear();
  out[tree.next_seq()] = tree.to_snapshot(header);
  auto events = (*rec)->events(tree.next_seq(), UINT64_MAX);
  EXPECT_TRUE(events.ok());
  for (const CacheEvent& e : events.value()) {
    EXPECT_EQ(tree.apply(e), "") << "event " << e.seq;
    out[tree.next_seq()] = tree.to_snapshot(header);
  }
  return out;
}

void expect_same_nodes(const CacheSnapshot& want, const CacheSnapshot& got, const std::string& at) {
  ASSERT_EQ(want.nodes.size(), got.nodes.size()) << at;
  for (size_t i = 0; i < want.nodes.size(); ++i)
    ASSERT_EQ(want.nodes[i], got.nodes[i]) << at << ", node " << want.nodes[i].id;
}

// The panel's replayed model against a snapshot, node for node.
void expect_panel_shows(const CachePanelState& st, const CacheSnapshot& want,
                        const std::string& at) {
  ASSERT_EQ(st.tree.model.size(), want.nodes.size()) << at;
  for (const CacheNodeInfo& n : want.nodes) {
    const panel::TreeNode* t = st.tree.model.find(n.id);
    ASSERT_NE(t, nullptr) << at << ": node " << n.id << " missing";
    EXPECT_EQ(t->parent, n.parent) << at << ", node " << n.id;
    EXPECT_EQ(t->tokens, n.tokens) << at << ", node " << n.id;
    EXPECT_EQ(t->pages, n.pages) << at << ", node " << n.id;
    EXPECT_EQ(t->lock_ref, n.lock_ref) << at << ", node " << n.id;
    EXPECT_EQ(t->pin_ref, n.pin_ref) << at << ", node " << n.id;
    EXPECT_EQ(t->last_access, n.last_access) << at << ", node " << n.id;
    EXPECT_EQ(t->hits, n.hits) << at << ", node " << n.id;
  }
}

class RecordingPanel : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    path_ = new std::string(temp_path("workload.rcrec"));
    record_workload(*path_, 160);
    oracle_ = new std::map<uint64_t, CacheSnapshot>(replay_from_start(*path_));
  }
  static void TearDownTestSuite() {
    fs::remove(*path_);
    delete path_;
    delete oracle_;
  }
  void SetUp() override {
    st.replay.opener = gui::make_recording_opener();
    st.replay.install = [this](std::unique_ptr<panel::CacheFeed> feed) {
      st.set_feed(std::move(feed), now);
    };
    ASSERT_EQ(st.replay.open(*path_), "");
    ASSERT_TRUE(st.replay_shown());
  }
  // One frame: the panel drains its feed (forward events, or a resync).
  void frame() {
    now += 1.0 / 60;
    st.sync(now);
  }
  void expect_at_cursor(const std::string& what) {
    const uint64_t seq = st.replay.cursor().target;
    ASSERT_EQ(st.replay.cursor().applied, seq) << what;
    ASSERT_EQ(st.replay.cursor().error, "") << what;
    ASSERT_TRUE(oracle_->count(seq)) << what << ": seq " << seq;
    expect_panel_shows(st, oracle_->at(seq), what + " at seq " + std::to_string(seq));
  }

  static std::string* path_;
  static std::map<uint64_t, CacheSnapshot>* oracle_;
  CachePanelState st;
  double now = 0;
};
std::string* RecordingPanel::path_ = nullptr;
std::map<uint64_t, CacheSnapshot>* RecordingPanel::oracle_ = nullptr;

TEST_F(RecordingPanel, TreeAtAnySeqIsTheReplayFromTheStart) {
  panel::RecordingSource& src = *st.replay.source();
  EXPECT_EQ(src.first_seq(), oracle_->begin()->first);
  EXPECT_EQ(src.end_seq(), oracle_->rbegin()->first);
  std::vector<uint64_t> seqs;
  for (const auto& [seq, snap] : *oracle_) seqs.push_back(seq);
  ASSERT_GT(seqs.size(), 500u) << "the workload is too small to cross snapshots";
  std::shuffle(seqs.begin(), seqs.end(), std::mt19937(5));
  seqs.resize(400);
  for (uint64_t seq : seqs) {
    auto t = src.tree_at(seq);
    ASSERT_TRUE(t.ok()) << seq << ": " << t.status().message();
    EXPECT_EQ(t->next_seq, seq);
    expect_same_nodes(oracle_->at(seq), t.value(), "tree_at(" + std::to_string(seq) + ")");
  }
  // The timeline's samples say what the trees hold.
  ASSERT_GT(src.samples().size(), 100u);
  for (const panel::TimelineSample& s : src.samples()) {
    int64_t tokens = 0;
    for (const CacheNodeInfo& n : oracle_->at(s.seq).nodes) tokens += int64_t(n.tokens.size());
    EXPECT_EQ(s.cached_tokens, tokens) << "sample at " << s.seq;
    EXPECT_EQ(s.nodes, int64_t(oracle_->at(s.seq).nodes.size()) - 1);
  }
}

TEST_F(RecordingPanel, ScrubbingBackAndForthShowsTheReplayedTree) {
  frame();
  expect_at_cursor("opened (the end)");
  const uint64_t first = st.replay.source()->first_seq(), end = st.replay.source()->end_seq();
  std::mt19937 rng(3);
  for (int i = 0; i < 60; ++i) {
    // Far jumps (a resync from tree_at), short forward moves (events applied
    // one by one, as the Events tab logs them), and back.
    const int kind = i % 3;
    const uint64_t at = st.replay.cursor().target;
    uint64_t to = first + rng() % (end - first + 1);
    if (kind == 1) to = std::min(end, at + 1 + rng() % 40);
    if (kind == 2) to = at > first + 30 ? at - 1 - rng() % 30 : first;
    const uint64_t resyncs = st.source.resyncs;
    st.replay.seek(to);
    frame();
    expect_at_cursor("seek " + std::to_string(i));
    if (kind == 1 && to > at) {
      EXPECT_EQ(st.source.resyncs, resyncs) << "a short forward move replays";
    }
  }
  st.replay.seek(first + (end - first) / 2);
  frame();
  for (int dir : {-1, -1, -1, 1, 1, 1, 1, -1}) {
    const uint64_t before = st.replay.cursor().target;
    st.replay.step_event(dir);
    EXPECT_EQ(st.replay.cursor().target, before + dir);
    frame();
    expect_at_cursor("step event " + std::to_string(dir));
  }
}

TEST_F(RecordingPanel, PlaysAtTheChosenSpeedToTheEnd) {
  const uint64_t first = st.replay.source()->first_seq(), end = st.replay.source()->end_seq();
  st.replay.seek(first);
  frame();
  st.replay.speed = 600;  // events per second: 10 a frame at 60 frames a second
  st.replay.playing = true;
  EXPECT_TRUE(st.wants_frames(now)) << "playing keeps the panel drawing";
  frame();  // the first tick starts the clock
  const uint64_t from = st.replay.cursor().target;
  for (int i = 0; i < 6; ++i) frame();
  EXPECT_NEAR(double(st.replay.cursor().target - from), 60.0, 1.0);
  expect_at_cursor("playing");
  while (st.replay.playing && now < 100) frame();
  EXPECT_FALSE(st.replay.playing) << "play stops at the end";
  EXPECT_EQ(st.replay.cursor().target, end);
  expect_at_cursor("played to the end");
}

TEST_F(RecordingPanel, StepsByRequestAndJumps) {
  const auto& reqs = st.replay.source()->requests();
  ASSERT_EQ(reqs.size(), 160u);
  for (size_t i = 1; i < reqs.size(); ++i) ASSERT_LE(reqs[i - 1].seq, reqs[i].seq);
  size_t matched = 0;
  for (const auto& r : reqs) matched += r.matched;
  EXPECT_EQ(matched, reqs.size()) << "every request tied to its match event";
  st.replay.jump_request(0);
  EXPECT_EQ(st.replay.selected_request, 0);
  frame();
  expect_at_cursor("request 0");
  for (size_t i = 1; i < 12; ++i) {
    ASSERT_TRUE(st.replay.step_request(1));
    EXPECT_EQ(st.replay.selected_request, int(i));
    EXPECT_EQ(st.replay.cursor().target, reqs[i].seq);
    frame();
    expect_at_cursor("request " + std::to_string(i));
  }
  for (int i = 10; i >= 5; --i) {
    ASSERT_TRUE(st.replay.step_request(-1));
    EXPECT_EQ(st.replay.selected_request, i);
    frame();
    expect_at_cursor("back to request " + std::to_string(i));
  }
  st.replay.jump_request(100);
  frame();
  EXPECT_EQ(st.replay.cursor().target, reqs[100].seq);
  expect_at_cursor("jump to request 100");
}

TEST_F(RecordingPanel, FindsNodeTextAndPromptText) {
  frame();
  // No vocabulary for this recording: tokens read as <id>. A date span is
  // its own node below a system prompt; "<5003>" is in the shared part.
  ASSERT_TRUE(st.replay_find("<5003>", now));
  ASSERT_NE(st.tree.selected, kNoNode);
  const panel::TreeNode* n = st.tree.model.find(st.tree.selected);
  ASSERT_NE(n, nullptr);
  EXPECT_NE(std::find(n->tokens.begin(), n->tokens.end(), 5003), n->tokens.end());
  EXPECT_NE(st.find_result.find("hold it here"), std::string::npos) << st.find_result;
  // Text nowhere in this tree: the first request whose prompt has it.
  st.replay.seek(st.replay.source()->first_seq());
  frame();
  ASSERT_EQ(st.tree.model.size(), 1u) << "the recording starts from an empty cache";
  const int at = st.replay.selected_request;  // the request at the cursor
  ASSERT_TRUE(st.replay_find("<5003>", now));
  const auto& reqs = st.replay.source()->requests();
  ASSERT_EQ(st.replay.selected_request, at + 1) << "the next request whose prompt has it";
  const auto& prompt = reqs[size_t(st.replay.selected_request)].prompt;
  EXPECT_NE(std::find(prompt.begin(), prompt.end(), 5003), prompt.end());
  EXPECT_EQ(st.replay.cursor().target, reqs[size_t(st.replay.selected_request)].seq);
  EXPECT_NE(st.find_result.find("prompt has it"), std::string::npos) << st.find_result;
  EXPECT_FALSE(st.replay_find("<123456>", now));
  EXPECT_EQ(st.find_result, "not found");
}

TEST_F(RecordingPanel, MissExplanationIsCacheReports) {
  auto rec = recording::Recording::open(*path_);
  ASSERT_TRUE(rec.ok());
  auto rep = recording::make_cache_report(**rec);
  ASSERT_TRUE(rep.ok()) << rep.status().message();
  ASSERT_GT(rep->misses.size(), 20u);
  const auto& reqs = st.replay.source()->requests();
  size_t realigned = 0;
  for (const recording::RequestMiss& m : rep->misses) {
    auto it = std::find_if(reqs.begin(), reqs.end(), [&](auto& r) { return r.id == m.id; });
    ASSERT_NE(it, reqs.end());
    st.replay.jump_request(size_t(it - reqs.begin()));
    const panel::MissView& v = st.replay.miss();
    ASSERT_TRUE(v.ok) << v.error;
    const std::string at = "request " + std::to_string(m.id);
    EXPECT_EQ(v.at_seq, m.at_seq) << at;
    EXPECT_EQ(v.matched_tokens, m.matched_tokens) << at;
    EXPECT_EQ(v.prompt_tokens, m.why.prompt_tokens) << at;
    EXPECT_EQ(v.divergence, m.why.divergence) << at;
    EXPECT_EQ(v.realigned, m.why.realigned) << at;
    EXPECT_EQ(v.would_reuse, m.why.would_reuse) << at;
    EXPECT_EQ(v.run_after, m.why.run_after) << at;
    realigned += v.realigned;
    if (v.realigned) {
      EXPECT_FALSE(v.prompt_span.empty() && v.cached_span.empty()) << at;
    }
  }
  EXPECT_GT(realigned, 5u) << "the varying date span realigns";
  // The advisor tab finds that span.
  const auto& lines = st.replay.advisor();
  ASSERT_GE(lines.size(), 2u);
  std::string all;
  for (const auto& l : lines) all += l + "\n";
  EXPECT_NE(all.find("Moving that span"), std::string::npos) << all;
}

TEST_F(RecordingPanel, ClosingReturnsToTheLocalFeed) {
  frame();
  EXPECT_GT(st.tree.model.size(), 1u);
  st.replay.close();
  EXPECT_FALSE(st.replay.shown());
  EXPECT_EQ(st.feed(), nullptr);  // no engine in this test
  EXPECT_NE(st.replay.open("/nonexistent/x.rcrec"), "");
  EXPECT_FALSE(st.replay.shown());
}

TEST_F(RecordingPanel, AnotherFeedInFrontIsNotTheRecording) {
  frame();
  ASSERT_TRUE(st.replay_shown());
  // A lesson's (or a remote cache's) feed in front: no timeline over it.
  Workload other(3, 100);
  st.set_feed(panel::make_kv_cache_feed(other.cache()), now);
  EXPECT_TRUE(st.replay.shown());
  EXPECT_FALSE(st.replay_shown());
}

// An engine over a KvCache the test drives: what the panel's sink needs
// (snapshot, model info, render_chat).
class CacheEngine final : public Engine {
 public:
  explicit CacheEngine(KvCache& cache) : cache_(cache) { info_.name = "cache-engine"; }
  Result<RequestId> submit(GenerateRequest, StreamCallback) override {
    return Status(StatusCode::invalid_argument, "no model");
  }
  void cancel(RequestId) override {}
  Status warmup(const std::vector<std::vector<ChatMessage>>&) override { return Status(); }
  Result<std::vector<float>> last_logits(const std::vector<int32_t>&) override {
    return Status(StatusCode::invalid_argument, "no model");
  }
  EngineStats stats() const override { return {}; }
  CacheSnapshot cache_snapshot() const override { return cache_.snapshot(); }
  std::vector<CacheEvent> drain_events(bool* overflowed) override {
    std::vector<CacheEvent> out;
    const bool lost = cache_.events().drain(out);
    if (overflowed) *overflowed = lost;
    return out;
  }
  const ModelInfo& model_info() const override { return info_; }
  Result<std::vector<int32_t>> tokenize(const std::string&, bool) const override {
    return std::vector<int32_t>{};
  }
  std::string detokenize(const std::vector<int32_t>&) const override { return ""; }
  // The test's "chat template": a message's content is its token ids.
  Result<std::vector<int32_t>> render_chat(const std::vector<ChatMessage>& m) const override {
    std::vector<int32_t> out;
    for (const ChatMessage& c : m)
      for (unsigned char ch : c.content) out.push_back(int32_t(ch));
    return out;
  }

 private:
  KvCache& cache_;
  ModelInfo info_;
};

TEST(RecordingPanelRecord, RecordStopWritesWhatTheEngineDid) {
  Workload w(21, 400);
  CacheEngine engine(w.cache());
  for (int i = 0; i < 5; ++i) w.request(w.prompt());  // before Record: in the first snapshot
  CachePanelState st;
  st.set_feed(panel::make_engine_feed(engine), 0);
  gui::LocalRecorder recorder([&] { return static_cast<Engine*>(&engine); });
  st.replay.starter = recorder.starter();
  const std::string path = temp_path("record.rcrec");
  ASSERT_EQ(st.replay.start_recording(path), "");
  EXPECT_TRUE(recorder.recording());
  double now = 0;
  for (int i = 0; i < 40; ++i) {
    // A "chat" request: its prompt is text whose bytes are the token ids.
    std::string text;
    for (int k = 0; k < 20; ++k) text += char('a' + (k + (i % 4)) % 26);
    text += char('A' + i % 20);
    std::vector<Token> p(text.begin(), text.end());
    RequestMetrics m;
    m.prompt_tokens = int(p.size());
    m.cached_tokens = int(w.request(p));
    st.sync(now += 0.02);  // the panel drains the events and tees them
    recorder.replyFinished({{"user", text}}, m, "stop", {});
  }
  st.sync(now += 0.02);
  EXPECT_NE(st.replay.record_status().find("40 requests"), std::string::npos)
      << st.replay.record_status();
  const CacheSnapshot end = engine.cache_snapshot();
  st.replay.stop_recording();
  EXPECT_FALSE(recorder.recording());
  EXPECT_NE(st.replay.record_status().find("Recorded to"), std::string::npos);

  auto src = gui::make_recording_opener()(path);
  ASSERT_TRUE(src.ok()) << src.status().message();
  {
    // The template's closing length, for "agree again" when it is replayed.
    auto rec = recording::Recording::open(path);
    ASSERT_TRUE(rec.ok());
    EXPECT_EQ(recording::recorded_closing_tokens((*rec)->summary().meta, -1),
              recording::template_closing_tokens(engine));
  }
  auto t = (*src)->tree_at((*src)->end_seq());
  ASSERT_TRUE(t.ok()) << t.status().message();
  expect_same_nodes(end, t.value(), "the end of the recording");
  ASSERT_EQ((*src)->requests().size(), 40u);
  for (const panel::RecordedRequest& r : (*src)->requests())
    EXPECT_TRUE(r.matched) << "request " << r.id << " not tied to its match";
  fs::remove(path);
}

TEST(RecordingPanelRecord, SizeCapStopsWithAMessage) {
  Workload w(22, 2000);
  CacheEngine engine(w.cache());
  CachePanelState st;
  st.set_feed(panel::make_engine_feed(engine), 0);
  gui::LocalRecordingOptions opt;
  opt.maxBytes = 64 << 10;  // 64 KiB: a few hundred requests pass it
  gui::LocalRecorder recorder([&] { return static_cast<Engine*>(&engine); }, opt);
  st.replay.starter = recorder.starter();
  const std::string path = temp_path("capped.rcrec");
  ASSERT_EQ(st.replay.start_recording(path), "");
  double now = 0;
  for (int i = 0; i < 3000 && !st.replay.sink()->stopped(); ++i) {
    w.request(w.prompt());
    st.sync(now += 0.02);
    if (i % 50 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(30));
  }
  ASSERT_TRUE(st.replay.sink()->stopped()) << "never reached the cap";
  EXPECT_NE(st.replay.record_status().find("size cap"), std::string::npos)
      << st.replay.record_status();
  st.replay.stop_recording();
  EXPECT_NE(st.replay.record_status().find("size cap"), std::string::npos);
  auto src = gui::make_recording_opener()(path);
  ASSERT_TRUE(src.ok()) << "a capped recording still opens: " << src.status().message();
  fs::remove(path);
}

// Two chats with one system prompt and unrelated questions: after the
// question only the template's closing tokens (end of turn, the
// assistant's header) agree. The Request tab and cache-report must not call
// that "agreeing again" when the recording says the closing's length (as
// the app, bench and serve write it), nor when the loaded model made the
// recording and its template says it; without either they cannot tell.
std::string record_two_chats(const std::string& name, const std::string& closing_meta) {
  const std::string path = temp_path(name);
  recording::RecorderOptions opt;
  opt.source = "test";
  auto rec = recording::Recorder::create(path, opt);
  EXPECT_TRUE(rec.ok()) << rec.status().message();
  if (!rec.ok()) return path;
  (*rec)->set_meta("model", "chat-model");
  if (!closing_meta.empty()) (*rec)->set_meta(recording::kClosingTokensMeta, closing_meta);
  Workload w(3, 400);
  (*rec)->snapshot(w.cache().snapshot());
  auto chat = [](Token first, int n) {
    std::vector<Token> p;
    for (int i = 0; i < 20; ++i) p.push_back(Token(1000 + i));  // system prompt
    for (int i = 0; i < n; ++i) p.push_back(Token(first + i));  // the question
    for (int i = 0; i < 5; ++i) p.push_back(Token(90 + i));     // the closing
    return p;
  };
  const std::vector<Token> prompts[] = {chat(300, 9), chat(600, 12)};
  for (uint64_t id = 1; id <= 2; ++id) {
    const std::vector<Token>& p = prompts[id - 1];
    (*rec)->request_arrived(id, std::vector<int32_t>(p.begin(), p.end()));
    RequestMetrics m;
    m.prompt_tokens = int(p.size());
    m.cached_tokens = int(w.request(p));
    m.output_tokens = 1;
    (*rec)->events(w.drain());
    (*rec)->request_finished(id, m, FinishReason::stop, {7});
  }
  EXPECT_TRUE((*rec)->close().ok());
  return path;
}

// Request 2's explanation from the Request tab's source and from cache-report.
void explain_second(const std::string& path, const std::function<gui::LoadedModel()>& current,
                    panel::MissView* tab, recording::MissExplanation* report) {
  auto src = gui::make_recording_opener(current)(path);
  ASSERT_TRUE(src.ok()) << src.status().message();
  const auto& reqs = (*src)->requests();
  ASSERT_EQ(reqs.size(), 2u);
  ASSERT_EQ(reqs[1].id, 2u);
  *tab = (*src)->explain(1);
  ASSERT_TRUE(tab->ok) << tab->error;
  auto rec = recording::Recording::open(path);
  ASSERT_TRUE(rec.ok());
  auto rep = recording::make_cache_report(**rec);
  ASSERT_TRUE(rep.ok()) << rep.status().message();
  auto second = std::find_if(rep->misses.begin(), rep->misses.end(),
                             [](const recording::RequestMiss& m) { return m.id == 2; });
  ASSERT_NE(second, rep->misses.end());
  *report = second->why;
}

TEST(RecordingPanelMiss, OnlyTheTemplatesClosingAgreeingIsNotAgreeingAgain) {
  panel::MissView tab;
  recording::MissExplanation report;
  {
    SCOPED_TRACE("the recording says the closing's length");
    const std::string path = record_two_chats("closing-meta.rcrec", "5");
    explain_second(path, {}, &tab, &report);
    EXPECT_EQ(tab.divergence, 20);
    EXPECT_FALSE(tab.realigned) << "then " << tab.run_after << " tokens agree again";
    EXPECT_EQ(tab.would_reuse, 20);
    EXPECT_EQ(report.divergence, 20);
    EXPECT_FALSE(report.realigned) << "then " << report.run_after << " tokens agree again";
    EXPECT_EQ(report.would_reuse, 20);
    fs::remove(path);
  }
  const std::string path = record_two_chats("closing-none.rcrec", "");
  {
    SCOPED_TRACE("the loaded model made the recording");
    explain_second(
        path,
        [] {
          return gui::LoadedModel{"chat-model", "", 5};
        },
        &tab, &report);
    EXPECT_FALSE(tab.realigned) << "then " << tab.run_after << " tokens agree again";
    EXPECT_EQ(tab.would_reuse, 20);
  }
  {
    SCOPED_TRACE("another model is loaded: the closing is unknown");
    explain_second(
        path,
        [] {
          return gui::LoadedModel{"other-model", "", 5};
        },
        &tab, &report);
    EXPECT_TRUE(tab.realigned);
    EXPECT_EQ(tab.run_after, 5);
    EXPECT_TRUE(report.realigned);
    EXPECT_EQ(report.run_after, 5);
  }
  fs::remove(path);
}

}  // namespace
}  // namespace rc::ui
