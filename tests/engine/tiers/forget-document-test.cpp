// Engine::forget_document (docs/architecture.md section 21): a document
// removed from a library leaves the tree, the disk tier and Redis in every
// layout that held it, warmed (pinned) or not, while the system prompt and
// the other documents stay cached, and no answer changes.
//
// Oracles: an engine without tiers for the replies; the prompts' own text
// for what the tree may still hold; a restarted engine's tier loads for
// what the tiers still hold.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "document-fixtures.h"
#include "engine-reply.h"
#include "radixchat/documents.h"
#include "radixchat/engine.h"
#include "redis-server-fixture.h"
#include "skip-or-fail.h"
#include "tiered-engine-fixtures.h"

namespace rc {
namespace {

namespace fs = std::filesystem;
using namespace rc::test;  // tiered-engine-fixtures.h, document-fixtures.h, engine-reply.h

struct Corpus {
  std::string system = "Answer from the documents below, briefly.";
  // boats.md comes first in the library: a prompt with both keeps it.
  DocumentText a{"apples.md", 1, document_text("apples", 1), 0};
  DocumentText b{"boats.md", 0, document_text("boats", 2), 0};
};

std::vector<ChatMessage> conversation(const Engine& e, const Corpus& c,
                                      const std::vector<DocumentText>& docs,
                                      const std::string& question) {
  return test::conversation(e, c.system, docs, question);
}

TEST(ForgetDocument, EveryLayoutHoldingItGoesAndTheRestStays) {
  if (!tiers::testing::have_redis_server()) RC_SKIP_OR_FAIL("redis-server is not installed");
  tiers::testing::RedisServer redis;
  ASSERT_TRUE(redis.start());
  TempDir dir("forget-document");
  EngineConfig cfg = base_config("");
  std::unique_ptr<Engine> oracle = open(cfg);
  ASSERT_TRUE(oracle);
  cfg.kv_disk = dir.path().string();
  cfg.kv_redis = redis.url();
  const Corpus c;
  const std::vector<ChatMessage> only_a = conversation(*oracle, c, {c.a}, "What grows?");
  const std::vector<ChatMessage> both = conversation(*oracle, c, {c.a, c.b}, "What floats?");
  const std::vector<ChatMessage> only_b = conversation(*oracle, c, {c.b}, "Where is the road?");
  // A line from the middle of apples.md: no other prompt holds it.
  const std::string a_line = c.a.text.substr(c.a.text.find('\n', 300) + 1, 60);
  const std::string b_line = c.b.text.substr(c.b.text.find('\n', 300) + 1, 60);
  auto files = [&] {
    size_t n = 0;
    for (const auto& f : fs::recursive_directory_iterator(dir.path()))
      n += f.path().extension() == ".rckv";
    return n;
  };
  {
    std::unique_ptr<Engine> e = open(cfg);
    ASSERT_TRUE(e);
    greedy(*e, only_a, 4);
    greedy(*e, both, 4);
    greedy(*e, only_b, 4);
    // Kept warm: a pinned prompt holding apples.md must go as well.
    const Status warmed = e->warmup({{only_a.front()}});
    ASSERT_TRUE(warmed.ok()) << warmed.to_string();
    // The tiers write behind the engine: count once every queued block is down.
    size_t before = files();
    for (int stable = 0; stable < 4;) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      const size_t now = files();
      stable = now == before && e->stats().tiers.queue_bytes == 0 ? stable + 1 : 0;
      before = now;
    }
    const size_t redis_before = redis.values("rc:kv:*").size();
    ASSERT_TRUE(any_holds(tree_texts(*e), a_line));

    Result<ForgetResult> r = e->forget_document(c.a.text);
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    EXPECT_GT(r.value().tree_tokens, 0);
    EXPECT_GT(r.value().tier_blocks, 0);
    const std::vector<std::string> texts = tree_texts(*e);
    EXPECT_FALSE(any_holds(texts, a_line));
    EXPECT_TRUE(any_holds(texts, b_line));
    EXPECT_TRUE(any_holds(texts, c.system));
    EXPECT_EQ(files(), before - size_t(r.value().tier_blocks));
    EXPECT_EQ(redis.values("rc:kv:*").size(), redis_before - size_t(r.value().tier_blocks));
    // A second purge finds nothing left.
    Result<ForgetResult> again = e->forget_document(c.a.text);
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(again.value().tree_tokens, 0);
    EXPECT_EQ(again.value().tier_blocks, 0);
  }
  // After a restart the tiers give back boats.md whole and nothing past
  // the system prompt of a prompt holding apples.md; every reply is the
  // oracle's.
  std::unique_ptr<Engine> e = open(cfg);
  ASSERT_TRUE(e);
  const Reply b_reply = greedy(*e, only_b, 6);
  EXPECT_EQ(b_reply.tokens, greedy(*oracle, only_b, 6).tokens);
  EXPECT_GE(b_reply.metrics.loaded_tokens, b_reply.metrics.prompt_tokens - 2 * 64);
  const int shared = int(e->render_chat({{"system", c.system}}).value().size());
  const Reply a_reply = greedy(*e, only_a, 6);
  EXPECT_EQ(a_reply.tokens, greedy(*oracle, only_a, 6).tokens);
  EXPECT_LE(a_reply.metrics.cached_tokens, shared + 64);
  const Reply both_reply = greedy(*e, both, 6);
  EXPECT_EQ(both_reply.tokens, greedy(*oracle, both, 6).tokens);
  // boats.md comes first in `both`: it comes back, apples.md after it does not.
  EXPECT_GE(both_reply.metrics.cached_tokens, b_reply.metrics.cached_tokens - 2 * 64);
  EXPECT_LT(both_reply.metrics.cached_tokens, both_reply.metrics.prompt_tokens - 200);
}

}  // namespace
}  // namespace rc
