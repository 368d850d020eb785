// Documents kept warm and where a prefix's KV lies, through the public
// Engine API on the bundled model (docs/architecture.md section 21):
// warming the same prompt again holds one pin, unpin_warmup releases
// exactly that pin, a pinned document outlives LRU pressure that evicts an
// unpinned one, a conversation's purge leaves it while removing the
// document purges it, and locate_prefix tells the pool from the disk tier
// without loading or touching anything.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "document-fixtures.h"
#include "engine-reply.h"
#include "tiered-engine-fixtures.h"

namespace rc {
namespace {

using namespace rc::test;  // tiered-engine-fixtures.h, document-fixtures.h, engine-reply.h

const std::string kSystem = "Answer from the documents below, briefly.";

DocumentText doc(const std::string& name, int order, uint32_t seed) {
  return {name, order, document_text(name, seed), 0};
}

uint32_t max_pin_ref(const Engine& e) {
  uint32_t m = 0;
  for (const CacheNodeInfo& n : e.cache_snapshot().nodes) m = std::max(m, n.pin_ref);
  return m;
}

// A line from the middle of a document: no other prompt holds it.
std::string middle_line(const DocumentText& d) {
  return d.text.substr(d.text.find('\n', 300) + 1, 60);
}

// The tokens of `prefix` as a request renders it.
std::vector<int32_t> rendered(const Engine& e, const std::vector<ChatMessage>& prefix) {
  return e.render_chat(prefix).value();
}

void wait_for_writes(const Engine& e) {
  for (int i = 0; i < 400 && e.stats().tiers.queue_bytes > 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the write in hand
}

TEST(KeptWarm, WarmingAgainHoldsOnePinAndUnpinReleasesExactlyIt) {
  std::unique_ptr<Engine> e = open(base_config(""));
  ASSERT_TRUE(e);
  const DocumentText a = doc("apples.md", 1, 1), b = doc("boats.md", 2, 2);
  const std::vector<ChatMessage> with_a = conversation(*e, kSystem, {a}, "");
  const std::vector<ChatMessage> with_b = conversation(*e, kSystem, {b}, "");
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(e->warmup({with_a}).ok());
  EXPECT_EQ(max_pin_ref(*e), 1u) << "three warmups of one prompt piled up pins";
  ASSERT_TRUE(e->warmup({with_b}).ok());
  EXPECT_EQ(max_pin_ref(*e), 2u) << "the system prompt both share is held by two pins";

  Result<int> released = e->unpin_warmup({with_a});
  ASSERT_TRUE(released.ok()) << released.status().to_string();
  EXPECT_EQ(released.value(), 1);
  EXPECT_EQ(e->unpin_warmup({with_a}).value(), 0) << "no second pin to release";
  EXPECT_EQ(max_pin_ref(*e), 1u) << "boats.md keeps the shared part pinned";
  EXPECT_GT(e->stats().cache.pinned_pages, 0);
  EXPECT_EQ(e->unpin_warmup({with_b}).value(), 1);
  EXPECT_EQ(e->stats().cache.pinned_pages, 0);
  EXPECT_EQ(max_pin_ref(*e), 0u);
  EXPECT_TRUE(any_holds(tree_texts(*e), middle_line(a))) << "unpinned is still cached";
}

TEST(KeptWarm, APinnedDocumentOutlivesPressureAndRemovingItPurgesIt) {
  EngineConfig cfg = base_config("");
  cfg.kv_pool_tokens = 1024;
  std::unique_ptr<Engine> e = open(cfg);
  ASSERT_TRUE(e);
  const DocumentText kept = doc("kept.md", 1, 3), loose = doc("loose.md", 2, 4);
  const std::vector<ChatMessage> pinned = conversation(*e, kSystem, {kept}, "");
  const std::vector<ChatMessage> unpinned = conversation(*e, kSystem, {loose}, "");
  ASSERT_TRUE(e->warmup({pinned}).ok());
  ASSERT_TRUE(e->last_logits(rendered(*e, unpinned)).ok());  // cached, not pinned
  // Other documents fill the small pool several times over.
  for (uint32_t seed = 10; seed < 16; ++seed) {
    const DocumentText other = doc("other" + std::to_string(seed) + ".md", 3, seed);
    greedy(*e, conversation(*e, "Be brief.", {other}, "Summarise."), 4);
  }
  EXPECT_GT(e->stats().cache.evicted_tokens, 0u);
  const std::vector<std::string> texts = tree_texts(*e);
  EXPECT_TRUE(any_holds(texts, middle_line(kept))) << "LRU evicted the pinned document";
  EXPECT_FALSE(any_holds(texts, middle_line(loose))) << "the unpinned one should have gone";

  // Deleting a conversation that used it leaves the pinned prefix.
  const std::vector<int32_t> asked = rendered(*e, conversation(*e, kSystem, {kept}, "Why?"));
  ASSERT_TRUE(e->forget({asked}, {}).ok());
  EXPECT_TRUE(any_holds(tree_texts(*e), middle_line(kept)));
  // Removing the document from the library purges it, pin and all.
  Result<ForgetResult> gone = e->forget_document(kept.text);
  ASSERT_TRUE(gone.ok()) << gone.status().to_string();
  EXPECT_GT(gone.value().tree_tokens, 0);
  EXPECT_FALSE(any_holds(tree_texts(*e), middle_line(kept)));
  EXPECT_EQ(e->stats().cache.pinned_pages, 0);
  EXPECT_EQ(e->unpin_warmup({pinned}).value(), 0) << "the purge released its pin";
}

TEST(KeptWarm, LocatePrefixTellsThePoolFromTheDiskTierWithoutLoading) {
  TempDir dir("locate-prefix");
  EngineConfig cfg = base_config("");
  cfg.kv_disk = dir.path().string();
  const DocumentText a = doc("apples.md", 1, 5);
  int64_t whole_blocks = 0;
  {
    std::unique_ptr<Engine> e = open(cfg);
    ASSERT_TRUE(e);
    const std::vector<int32_t> tokens = rendered(*e, conversation(*e, kSystem, {a}, ""));
    Result<PrefixResidence> cold = e->locate_prefix(tokens);
    ASSERT_TRUE(cold.ok()) << cold.status().to_string();
    EXPECT_EQ(cold->pool_tokens, 0);
    EXPECT_EQ(cold->tier_tokens("disk"), 0);
    ASSERT_TRUE(e->warmup({conversation(*e, kSystem, {a}, "")}).ok());
    wait_for_writes(*e);
    Result<PrefixResidence> warm = e->locate_prefix(tokens);
    ASSERT_TRUE(warm.ok());
    ASSERT_GT(warm->block_tokens, 0);
    whole_blocks = int64_t(tokens.size()) / warm->block_tokens * warm->block_tokens;
    ASSERT_GT(whole_blocks, 0);
    // The warmup cached the prompt without the assistant's opening: all of
    // it but the last partial page.
    EXPECT_GE(warm->pool_tokens, int64_t(tokens.size()) - 16);
    EXPECT_EQ(warm->tier_tokens("disk"), whole_blocks);
    EXPECT_EQ(warm->tier_tokens("redis"), 0) << "no such tier";
  }
  // After a restart the pool is empty and the disk tier still holds it.
  std::unique_ptr<Engine> e = open(cfg);
  ASSERT_TRUE(e);
  const std::vector<int32_t> tokens = rendered(*e, conversation(*e, kSystem, {a}, ""));
  Result<PrefixResidence> after = e->locate_prefix(tokens);
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after->pool_tokens, 0);
  EXPECT_EQ(after->tier_tokens("disk"), whole_blocks);
  // Looking loaded nothing and read no block.
  const TierInfo* disk = tier(e->stats(), "disk");
  ASSERT_NE(disk, nullptr);
  EXPECT_EQ(disk->hits, 0u);
  EXPECT_EQ(e->stats().tiers.loaded_tokens, 0u);
  EXPECT_EQ(e->stats().cache.cached_tokens, 0);
}

}  // namespace
}  // namespace rc
