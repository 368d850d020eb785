// Redacted recordings: the same cache run recorded plainly and with
// --redact gives the same tree shape, lengths, hits, pages and request
// figures, while no token id of any prompt is left in the redacted file.
// Both files are owner-only (0600, with their -wal and -shm) under umask 022.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>

#include "radixchat/cache.h"
#include "recording/cache-report.h"
#include "recording/recorder.h"
#include "recording/recording-format.h"
#include "recording/recording-reader.h"
#include "recording/redaction.h"

namespace rc::recording {
namespace {

namespace fs = std::filesystem;

std::string temp_path(const std::string& name) {
  fs::path p = fs::temp_directory_path() / ("rc-redact-" + std::to_string(getpid()) + "-" + name);
  fs::remove(p);
  return p.string();
}

unsigned mode_of(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0 ? st.st_mode & 0777 : 07777;
}

std::string file_bytes(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(TokenRedactor, IsABijectionOutsideEveryVocabulary) {
  const TokenRedactor r({1, 2, 3, 4});
  std::set<int32_t> seen;
  for (int32_t id = 0; id < 300000; ++id) {
    const int32_t h = r(id);
    ASSERT_GE(h, int32_t(1) << 30) << id;
    ASSERT_TRUE(seen.insert(h).second) << "two ids hashed alike: " << id;
  }
  EXPECT_EQ(r(1234), r(1234));
  EXPECT_NE(TokenRedactor({1, 2, 3, 5})(1234), r(1234)) << "the salt keys the hash";
  EXPECT_EQ(redacted_label(12), "12 tokens");
}

// Prompts over four shared prefixes plus varying tails, through a real
// radix cache, with request rows; returns the prompts.
std::vector<std::vector<Token>> record_run(Recorder& rec) {
  CacheConfig cfg;
  cfg.total_pages = 300;  // small: evictions happen
  auto cache = std::move(make_kv_cache(cfg).value());
  std::vector<std::vector<Token>> prompts;
  rec.snapshot(cache->snapshot());
  uint32_t x = 12345;
  auto next = [&] { return x = x * 1103515245u + 12345u, (x >> 8) % 5000; };
  for (uint64_t id = 1; id <= 120; ++id) {
    std::vector<Token> p;
    const int prefix = int(next() % 4);
    for (int i = 0; i < 24; ++i) p.push_back(Token(7000 + prefix * 100 + i));
    const int tail = 1 + int(next() % 20);
    for (int i = 0; i < tail; ++i) p.push_back(Token(next()));
    prompts.push_back(p);
    rec.request_arrived(id, p);
    MatchResult m = cache->match_prefix(p);
    std::vector<PageId> pages = m.pages;
    if (cache->alloc_pages(int64_t(p.size()) - m.tokens, pages).ok()) {
      EXPECT_TRUE(cache->insert(p, pages).ok());
    }
    std::vector<CacheEvent> evs;
    cache->events().drain(evs);
    rec.events(std::move(evs));
    RequestMetrics met;
    met.prompt_tokens = int(p.size());
    met.cached_tokens = int(m.tokens);
    met.ttft_ms = double(id);
    rec.request_finished(id, met, FinishReason::stop, {p[0], p[1]});
    if (id % 40 == 0) rec.snapshot(cache->snapshot());
  }
  return prompts;
}

TEST(RedactedRecording, KeepsShapeAndFiguresDropsEveryTokenId) {
  const ::mode_t old_umask = ::umask(022);
  const std::string plain_path = temp_path("plain.db"), redacted_path = temp_path("redacted.db");
  std::vector<std::vector<Token>> prompts;
  for (const std::string& path : {plain_path, redacted_path}) {
    RecorderOptions o;
    o.redact = path == redacted_path;
    o.snapshot_every = 50;
    auto rec = Recorder::create(path, o);
    ASSERT_TRUE(rec.ok()) << rec.status().message();
    (*rec)->set_meta("model_path", "/home/someone/models/secret-project.gguf");
    prompts = record_run(**rec);
    // Owner-only while being written too: SQLite's -wal and -shm exist now.
    for (const char* suffix : {"", "-wal", "-shm"})
      EXPECT_EQ(mode_of(path + suffix), 0600u) << path << suffix;
    ASSERT_TRUE((*rec)->close().ok());
    EXPECT_EQ(mode_of(path), 0600u) << path;
  }
  ::umask(old_umask);

  auto plain = Recording::open(plain_path);
  auto red = Recording::open(redacted_path);
  ASSERT_TRUE(plain.ok() && red.ok());
  EXPECT_FALSE(is_redacted((*plain)->summary().meta));
  EXPECT_TRUE(is_redacted((*red)->summary().meta));
  EXPECT_EQ((*red)->summary().meta.count("model_path"), 0u) << "a path names the user's folders";
  EXPECT_EQ((*red)->summary().events, (*plain)->summary().events);

  // The same tree at every stored snapshot: ids, parents, lengths, pages,
  // hits and recency; only the token values differ, all outside any vocabulary.
  auto snaps = (*plain)->snapshots();
  ASSERT_TRUE(snaps.ok());
  ASSERT_GE(snaps->size(), 4u);
  for (const SnapshotRecord& s : snaps.value()) {
    auto a = (*plain)->tree_at(s.next_seq);
    auto b = (*red)->tree_at(s.next_seq);
    ASSERT_TRUE(a.ok() && b.ok()) << s.next_seq;
    ASSERT_EQ(a->nodes.size(), b->nodes.size());
    for (size_t i = 0; i < a->nodes.size(); ++i) {
      const CacheNodeInfo &x = a->nodes[i], &y = b->nodes[i];
      EXPECT_EQ(x.id, y.id);
      EXPECT_EQ(x.parent, y.parent);
      EXPECT_EQ(x.pages, y.pages);
      EXPECT_EQ(x.hits, y.hits);
      EXPECT_EQ(x.last_access, y.last_access);
      ASSERT_EQ(x.tokens.size(), y.tokens.size());
      for (Token t : y.tokens) ASSERT_GE(t, Token(1) << 30);
    }
  }
  auto qa = (*plain)->requests();
  auto qb = (*red)->requests();
  ASSERT_TRUE(qa.ok() && qb.ok());
  ASSERT_EQ(qa->size(), qb->size());
  for (size_t i = 0; i < qa->size(); ++i) {
    EXPECT_EQ((*qa)[i].matched_tokens, (*qb)[i].matched_tokens) << i;
    EXPECT_EQ((*qa)[i].match_seq, (*qb)[i].match_seq) << i;
    EXPECT_EQ((*qa)[i].ttft_ms, (*qb)[i].ttft_ms) << i;
    EXPECT_EQ((*qa)[i].prompt.size(), (*qb)[i].prompt.size()) << i;
    EXPECT_EQ((*qa)[i].output.size(), (*qb)[i].output.size()) << i;
    for (int32_t t : (*qb)[i].prompt) ASSERT_GE(t, int32_t(1) << 30);
  }
  // The report explains the same misses with lengths only.
  auto ra = make_cache_report(**plain, {});
  auto rb = make_cache_report(**red, {});
  ASSERT_TRUE(ra.ok() && rb.ok()) << rb.status().message();
  EXPECT_EQ(ra->hit_rate, rb->hit_rate);
  EXPECT_EQ(ra->misses.size(), rb->misses.size());

  // No prompt's ids are in the file's bytes: not any run of three of them
  // as the blobs store ids (little-endian int32), nor the meta path. The
  // plain file is the check's control: there they are found.
  const std::string red_bytes = file_bytes(redacted_path), plain_bytes = file_bytes(plain_path);
  size_t windows = 0, in_plain = 0;
  for (const auto& p : prompts) {
    for (size_t i = 0; i + 3 <= p.size(); ++i) {
      const std::string w = encode_ids({p[i], p[i + 1], p[i + 2]});
      ++windows;
      in_plain += plain_bytes.find(w) != std::string::npos;
      ASSERT_EQ(red_bytes.find(w), std::string::npos) << "prompt ids at " << i;
    }
  }
  EXPECT_GT(in_plain, windows / 2) << "the check would not see ids if they were there";
  EXPECT_EQ(red_bytes.find("secret-project"), std::string::npos);
  fs::remove(plain_path);
  fs::remove(redacted_path);
}

}  // namespace
}  // namespace rc::recording
