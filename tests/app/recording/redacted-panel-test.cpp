// A redacted recording (recording/redaction.h) in the panel, without a
// window: it opens through the app's opener, the panel's tree at the end is
// the recording's own (shape, lengths, hits), and wherever the panel would
// show text (node labels, a request's "why it missed") it shows lengths,
// never a vocabulary's text for the hashed ids.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "panel/cache-panel-state.h"
#include "recording-source.h"
#include "recording/recorder.h"
#include "recording/recording-reader.h"

namespace rc::ui {
namespace {

namespace fs = std::filesystem;

TEST(RedactedRecordingPanel, OpensAndShowsLengthsInsteadOfText) {
  const std::string path =
      (fs::temp_directory_path() / ("rc-redacted-panel-" + std::to_string(getpid()) + ".db"))
          .string();
  fs::remove(path);
  {
    recording::RecorderOptions opt;
    opt.redact = true;
    opt.source = "test";
    auto rec = recording::Recorder::create(path, opt);
    ASSERT_TRUE(rec.ok()) << rec.status().message();
    // The bundled model's name: an unredacted recording would be labelled
    // with its vocabulary.
    (*rec)->set_meta("model", "radixchat-demo");
    CacheConfig cfg;
    cfg.total_pages = 200;
    auto cache = std::move(make_kv_cache(cfg).value());
    (*rec)->snapshot(cache->snapshot());
    for (uint64_t id = 1; id <= 30; ++id) {
      std::vector<Token> p;
      for (int i = 0; i < 20; ++i) p.push_back(Token(300 + i));
      p.push_back(Token(400 + id % 7));  // a varying token: misses that realign
      for (int i = 0; i < 10; ++i) p.push_back(Token(500 + i));
      (*rec)->request_arrived(id, std::vector<int32_t>(p.begin(), p.end()));
      MatchResult m = cache->match_prefix(p);
      std::vector<PageId> pages = m.pages;
      if (cache->alloc_pages(int64_t(p.size()) - m.tokens, pages).ok()) {
        ASSERT_TRUE(cache->insert(p, pages).ok());
      }
      std::vector<CacheEvent> evs;
      cache->events().drain(evs);
      (*rec)->events(std::move(evs));
      RequestMetrics met;
      met.prompt_tokens = int(p.size());
      met.cached_tokens = int(m.tokens);
      met.output_tokens = 1;
      (*rec)->request_finished(id, met, FinishReason::stop, {9});
    }
    (*rec)->snapshot(cache->snapshot());
    ASSERT_TRUE((*rec)->close().ok());
  }

  CachePanelState st;
  double now = 0;
  st.replay.opener = gui::make_recording_opener();
  st.replay.install = [&](std::unique_ptr<panel::CacheFeed> feed) {
    st.set_feed(std::move(feed), now);
  };
  ASSERT_EQ(st.replay.open(path), "");
  ASSERT_TRUE(st.replay_shown());
  now += 1.0 / 60;
  st.sync(now);
  panel::RecordingSource& src = *st.replay.source();
  EXPECT_NE(src.describe().find("redacted"), std::string::npos) << src.describe();

  auto rec = recording::Recording::open(path);
  ASSERT_TRUE(rec.ok());
  auto end = (*rec)->tree_at(src.end_seq());
  ASSERT_TRUE(end.ok()) << end.status().message();
  ASSERT_EQ(st.tree.model.size(), end->nodes.size());
  size_t labelled = 0;
  for (const CacheNodeInfo& n : end->nodes) {
    const panel::TreeNode* t = st.tree.model.find(n.id);
    ASSERT_NE(t, nullptr) << n.id;
    EXPECT_EQ(t->tokens, n.tokens);
    EXPECT_EQ(t->hits, n.hits);
    if (n.tokens.empty()) continue;
    EXPECT_EQ(src.detokenize(n.tokens), "<" + std::to_string(n.tokens.size()) +
                                            (n.tokens.size() == 1 ? " token>" : " tokens>"));
    ++labelled;
  }
  EXPECT_GT(labelled, 2u);

  // A request that missed the varying token: its explanation in lengths.
  ASSERT_EQ(src.requests().size(), 30u);
  bool explained = false;
  for (size_t i = 1; i < src.requests().size() && !explained; ++i) {
    const panel::MissView v = src.explain(i);
    if (!v.error.empty() || v.prompt_span.empty()) continue;
    EXPECT_NE(v.prompt_span.find("token"), std::string::npos) << v.prompt_span;
    EXPECT_EQ(v.prompt_span.find('<' + std::to_string(1 << 30)), std::string::npos);
    explained = true;
  }
  EXPECT_TRUE(explained) << "no request was explained";
  fs::remove(path);
}

}  // namespace
}  // namespace rc::ui
