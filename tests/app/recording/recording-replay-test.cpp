// Recordings: what the Recorder writes, the reader rebuilds exactly.
// The oracle is the cache itself: every snapshot the cache handed the
// recorder must equal the replayed tree at its next_seq.
#include <gtest/gtest.h>

#include <filesystem>
#include <random>

#include "recording/recorder.h"
#include "recording/recording-format.h"
#include "recording/recording-reader.h"
#include "recording/replay-tree.h"
#include "test-paths.h"

namespace rc::recording {
namespace {

namespace fs = std::filesystem;

std::string temp_path(const std::string& name) { return rc::test::temp_path("rc-rec", name); }

// Drives a radix cache the way the scheduler does (match, lock, alloc,
// insert, unlock, free the tail, verified drafts) with prompts that share
// prefixes, so the events cover insert, split, merge, match, lock/unlock,
// evict and draft.
class CacheDriver {
 public:
  explicit CacheDriver(uint32_t seed, int64_t pages = 400) : rng_(seed) {
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
    const int prefix = int(rng_() % 4);  // four "system prompts"
    for (int i = 0; i < 20 + prefix * 7; ++i) p.push_back(Token(prefix * 1000 + i));
    const int tail = 1 + int(rng_() % 30);
    for (int i = 0; i < tail; ++i) p.push_back(Token(rng_() % 50));
    return p;
  }
  void request() {
    std::vector<Token> p = prompt();
    MatchResult m = cache_->match_prefix(p);
    ASSERT_TRUE(cache_->lock(m.node).ok());
    std::vector<PageId> pages = m.pages;
    if (!cache_->alloc_pages(int64_t(p.size()) - m.tokens, pages).ok()) {
      ASSERT_TRUE(cache_->unlock(m.node).ok());
      return;
    }
    auto ins = cache_->insert(p, pages);
    ASSERT_TRUE(ins.ok());
    ASSERT_TRUE(cache_->unlock(m.node).ok());
  }
  // A verified draft as the scheduler reports one: the tree's continuation
  // of a prompt's first part (no node when there is none), one token kept.
  void draft() {
    std::vector<Token> p = prompt();
    p.resize(p.size() / 2 + 1);
    const Continuation c = cache_->peek_continuation(p, 8);
    cache_->note_draft(c.node, c.tokens.empty() ? 3 : int64_t(c.tokens.size()), 1);
  }

 private:
  std::mt19937 rng_;
  std::unique_ptr<KvCache> cache_;
};

void expect_same_tree(const CacheSnapshot& want, const CacheSnapshot& got, const std::string& at) {
  ASSERT_EQ(want.next_seq, got.next_seq) << at;
  ASSERT_EQ(want.nodes.size(), got.nodes.size()) << at;
  for (size_t i = 0; i < want.nodes.size(); ++i)
    ASSERT_EQ(want.nodes[i], got.nodes[i]) << at << " node " << want.nodes[i].id;
}

TEST(RecordingFormat, SnapshotBlobRoundTripsAndRefusesTruncation) {
  CacheDriver d(7);
  for (int i = 0; i < 30; ++i) d.request();
  const CacheSnapshot s = d.cache().snapshot();
  const std::string blob = encode_snapshot_nodes(s.nodes);
  auto back = decode_snapshot_nodes(blob.data(), blob.size());
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back.value(), s.nodes);
  for (size_t cut : {size_t(0), size_t(3), blob.size() / 2, blob.size() - 1}) {
    auto bad = decode_snapshot_nodes(blob.data(), cut);
    EXPECT_FALSE(bad.ok()) << cut;
  }
}

TEST(RecordingReplay, EveryStoredSnapshotIsRebuiltExactly) {
  const std::string path = temp_path("replay.db");
  RecorderOptions opt;
  opt.snapshot_every = 97;  // many writer snapshots between the cache's
  opt.commit_events = 50;
  std::vector<CacheSnapshot> taken;
  {
    auto rec = Recorder::create(path, opt);
    ASSERT_TRUE(rec.ok()) << rec.status().message();
    CacheDriver d(42, 300);  // small pool: evictions and merges happen
    taken.push_back(d.cache().snapshot());
    (*rec)->snapshot(taken.back());
    for (int i = 0; i < 400; ++i) {
      d.request();
      if (i % 3 == 0) d.draft();
      (*rec)->events(d.drain());
      if (i % 37 == 5) {
        taken.push_back(d.cache().snapshot());
        (*rec)->snapshot(taken.back());
      }
    }
    EXPECT_GT(d.cache().stats().evictions, 0u);
    EXPECT_GT(d.cache().stats().merges + d.cache().stats().splits, 0u);
    ASSERT_TRUE((*rec)->close().ok());
  }
  auto r = Recording::open(path);
  ASSERT_TRUE(r.ok()) << r.status().message();
  auto snaps = (*r)->snapshots();
  ASSERT_TRUE(snaps.ok());
  size_t engine = 0, replay = 0;
  for (const SnapshotRecord& s : snaps.value()) (s.source == "engine" ? engine : replay)++;
  EXPECT_EQ(engine, taken.size());
  EXPECT_GT(replay, 10u);
  // From the first snapshot alone, forward replay reaches every later one.
  for (const CacheSnapshot& want : taken) {
    auto got = (*r)->tree_at(want.next_seq);
    ASSERT_TRUE(got.ok()) << got.status().message();
    expect_same_tree(want, got.value(), "seq " + std::to_string(want.next_seq));
  }
  // A seek between snapshots equals a replay from the very first one.
  auto first = (*r)->load_snapshot(snaps->front().id);
  ASSERT_TRUE(first.ok());
  // Draft events come back with their node and counts.
  auto all = (*r)->events(first->next_seq, (*r)->summary().last_seq + 1);
  ASSERT_TRUE(all.ok());
  int drafts = 0, from_tree = 0;
  for (const CacheEvent& e : all.value()) {
    if (e.kind != CacheEventKind::draft) continue;
    ++drafts;
    from_tree += e.node != kNoNode;
    EXPECT_EQ(e.page_count, 1u);
    EXPECT_GE(e.token_count, 1u);
  }
  EXPECT_EQ(drafts, 134);
  EXPECT_GT(from_tree, 50);
  const uint64_t mid = ((*r)->summary().last_seq + first->next_seq) / 2;
  auto evs = (*r)->events(first->next_seq, mid);
  ASSERT_TRUE(evs.ok());
  ReplayTree tree;
  tree.reset(first.value());
  for (const CacheEvent& e : evs.value()) ASSERT_EQ(tree.apply(e), "");
  auto seek = (*r)->tree_at(mid);
  ASSERT_TRUE(seek.ok());
  EXPECT_EQ(seek->nodes, tree.nodes());
  fs::remove(path);
}

TEST(RecordingReplay, RequestsAreTiedToTheirMatchEvents) {
  const std::string path = temp_path("requests.db");
  CacheDriver d(3);
  std::vector<std::vector<Token>> prompts;
  {
    auto rec = Recorder::create(path, {});
    ASSERT_TRUE(rec.ok());
    (*rec)->snapshot(d.cache().snapshot());
    for (uint64_t id = 1; id <= 20; ++id) {
      std::vector<Token> p = d.prompt();
      prompts.push_back(p);
      (*rec)->request_arrived(id, p);
      MatchResult m = d.cache().match_prefix(p);
      std::vector<PageId> pages = m.pages;
      ASSERT_TRUE(d.cache().alloc_pages(int64_t(p.size()) - m.tokens, pages).ok());
      ASSERT_TRUE(d.cache().insert(p, pages).ok());
      (*rec)->events(d.drain());
      RequestMetrics met;
      met.prompt_tokens = int(p.size());
      met.cached_tokens = int(m.tokens);
      (*rec)->request_finished(id, met, FinishReason::stop, {1, 2, 3});
    }
    ASSERT_TRUE((*rec)->close().ok());
  }
  auto r = Recording::open(path);
  ASSERT_TRUE(r.ok());
  auto reqs = (*r)->requests();
  ASSERT_TRUE(reqs.ok());
  ASSERT_EQ(reqs->size(), 20u);
  for (size_t i = 0; i < reqs->size(); ++i) {
    const RequestRecord& q = (*reqs)[i];
    EXPECT_EQ(q.prompt, prompts[i]);
    EXPECT_GE(q.match_seq, 0) << i;
    EXPECT_EQ(q.finish, "stop");
    EXPECT_EQ(q.output, (std::vector<int32_t>{1, 2, 3}));
    // The tree just before the match holds exactly the matched prefix.
    auto tree = (*r)->tree_at(uint64_t(q.match_seq));
    ASSERT_TRUE(tree.ok());
    auto evs = (*r)->events(uint64_t(q.match_seq), uint64_t(q.match_seq) + 1);
    ASSERT_EQ(evs->size(), 1u);
    EXPECT_EQ(evs->front().kind, CacheEventKind::match);
    EXPECT_EQ(int64_t(evs->front().token_count), q.matched_tokens);
  }
  fs::remove(path);
}

TEST(RecordingReplay, SizeCapStopsWithAClearMessage) {
  const std::string path = temp_path("cap.db");
  RecorderOptions opt;
  opt.max_bytes = 64 * 1024;
  opt.commit_events = 20;
  std::string told;
  opt.on_stop = [&](const std::string& why) { told = why; };
  auto rec = Recorder::create(path, opt);
  ASSERT_TRUE(rec.ok());
  CacheDriver d(9, 100000);
  (*rec)->snapshot(d.cache().snapshot());
  for (int i = 0; i < 3000 && !(*rec)->stopped(); ++i) {
    d.request();
    (*rec)->events(d.drain());
    if (i % 50 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  ASSERT_TRUE((*rec)->close().ok());
  EXPECT_TRUE((*rec)->stopped());
  EXPECT_NE(told.find("size cap"), std::string::npos) << told;
  auto r = Recording::open(path);
  ASSERT_TRUE(r.ok());
  EXPECT_NE((*r)->summary().meta.at("stopped").find("size cap"), std::string::npos);
  // What was committed before the cap still replays.
  auto t = (*r)->tree_at(uint64_t((*r)->summary().last_seq + 1));
  EXPECT_TRUE(t.ok()) << t.status().message();
  fs::remove(path);
}

// A backlog (the producer far ahead of the disk, as when a remote feed
// delivers many messages at once) is committed as it is written, so the cap
// stops it near max_bytes instead of after the whole backlog.
TEST(RecordingReplay, SizeCapStopsWithinABacklog) {
  const std::string path = temp_path("cap-backlog.db");
  RecorderOptions opt;
  opt.max_bytes = 64 * 1024;
  opt.commit_events = 20;
  opt.commit_ms = 60000;  // only the event count commits
  auto rec = Recorder::create(path, opt);
  ASSERT_TRUE(rec.ok());
  CacheDriver d(9, 100000);
  (*rec)->snapshot(d.cache().snapshot());
  uint64_t pushed = 0;
  for (int i = 0; i < 3000; ++i) {
    d.request();
    std::vector<CacheEvent> evs = d.drain();
    pushed += evs.size();
    (*rec)->events(std::move(evs));
  }
  ASSERT_TRUE((*rec)->close().ok());
  EXPECT_TRUE((*rec)->stopped());
  auto r = Recording::open(path);
  ASSERT_TRUE(r.ok());
  EXPECT_NE((*r)->summary().meta.at("stopped").find("size cap"), std::string::npos);
  EXPECT_LT(uint64_t((*r)->summary().last_seq), pushed);
  EXPECT_LT(fs::file_size(path), uintmax_t(2 * opt.max_bytes)) << "the cap was overshot";
  fs::remove(path);
}

TEST(RecordingOpen, RefusesWhatIsNotARecording) {
  const std::string path = temp_path("not.db");
  EXPECT_EQ(Recording::open(path).status().code(), StatusCode::not_found);
  {
    FILE* f = std::fopen(path.c_str(), "wb");
    std::fputs("this is not sqlite at all, just some text that is long enough........", f);
    std::fclose(f);
  }
  auto r = Recording::open(path);
  EXPECT_FALSE(r.ok());
  EXPECT_FALSE(Recorder::create(path, {}).ok());  // never overwrites
  fs::remove(path);
}

}  // namespace
}  // namespace rc::recording
