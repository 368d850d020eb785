// Documents through the engine on the bundled model (place_documents,
// radixchat/documents.h): the canonical layout gives the same prompt tokens
// whatever the order the documents are given in, a second question reuses
// the documents' KV, the budget switches to retrieved chunks, and replies
// are the same tokens with the cache off.
#include <gtest/gtest.h>

#include "engine-reply.h"
#include "radixchat/documents.h"
#include "radixchat/engine.h"
#include "test-paths.h"

namespace rc {
namespace {

std::unique_ptr<Engine> make_engine(const std::string& cache) {
  EngineConfig cfg;
  cfg.model_path = test::test_model_path();
  cfg.cache = parse_cache_setting(cache).value();
  cfg.n_threads = 2;
  cfg.kv_pool_tokens = 8192;
  auto e = Engine::create(cfg);
  EXPECT_TRUE(e.ok()) << e.status().to_string();
  return e.ok() ? std::move(e.value()) : nullptr;
}

DocumentSet documents(bool reversed) {
  DocumentSet set;
  set.documents = {
      {"garden.md", 1,
       "The garden has a stone bridge over a quiet river. Apple trees grow by the north "
       "wall.\n"},
      {"market.txt", 2,
       "The market opens early in summer. Bread and silver are sold in the village "
       "square.\n"}};
  if (reversed) std::swap(set.documents[0], set.documents[1]);
  return set;
}

struct Asked {
  test::Reply reply;
  PlacedDocuments placed;
  std::vector<int32_t> prompt;  // what the request rendered to
};

Asked ask(Engine& e, const std::string& question, const DocumentSet& set, int n = 8) {
  GenerateRequest req;
  req.messages = {{"system", "Answer from the documents."}, {"user", question}};
  req.max_tokens = n;
  req.ignore_eos = true;
  Asked out;
  auto placed = place_documents(e, req, set);
  EXPECT_TRUE(placed.ok()) << placed.status().to_string();
  if (!placed.ok()) return out;
  out.placed = placed.value();
  out.prompt = e.render_chat(req.messages).value();
  out.reply = test::run_request(e, req);
  return out;
}

TEST(DocumentEngine, EitherOrderIsTheSamePromptAndHitsTheCache) {
  auto e = make_engine("radix");
  ASSERT_TRUE(e);
  const Asked first = ask(*e, "Where is the bridge?", documents(false));
  EXPECT_GT(first.placed.tokens, 20);
  EXPECT_FALSE(first.placed.layout.retrieved);
  EXPECT_EQ(first.placed.cached(first.reply.metrics.cached_tokens), 0);
  const Asked swapped = ask(*e, "Where is the bridge?", documents(true));
  EXPECT_EQ(swapped.prompt, first.prompt);
  EXPECT_EQ(swapped.placed.tokens, first.placed.tokens);
  EXPECT_EQ(swapped.placed.cached(swapped.reply.metrics.cached_tokens), swapped.placed.tokens);
  EXPECT_GE(swapped.reply.metrics.cached_tokens, swapped.reply.metrics.prompt_tokens - 1);
  EXPECT_EQ(swapped.reply.tokens, first.reply.tokens);
  // Another question over the same documents reuses all of their KV.
  const Asked other = ask(*e, "What is sold?", documents(true));
  EXPECT_EQ(other.placed.cached(other.reply.metrics.cached_tokens), other.placed.tokens);
  // The documents' tokens are where the placement says: the prompt without
  // them is the one with them minus that span.
  std::vector<int32_t> without = other.prompt;
  without.erase(without.begin() + other.placed.start,
                without.begin() + other.placed.start + other.placed.tokens);
  GenerateRequest plain;
  plain.messages = {{"system", "Answer from the documents."}, {"user", "What is sold?"}};
  EXPECT_EQ(without, e->render_chat(plain.messages).value());
}

// Over the budget, retrieval decides: the retrieved chunk's document goes
// in whole while it fits what is left, else the chunk alone.
TEST(DocumentEngine, OverTheBudgetRetrievedChunksGoIn) {
  auto e = make_engine("radix");
  ASSERT_TRUE(e);
  DocumentSet set = documents(false);
  set.budget_tokens = 45;
  const std::string chunk = "Bread and silver are sold in the village square.";
  set.ranked_chunks = {{"market.txt", 0, chunk}};
  const Asked r = ask(*e, "What is sold?", set);
  EXPECT_TRUE(r.placed.layout.retrieved);
  EXPECT_EQ(r.placed.layout.whole_documents, 1);
  EXPECT_EQ(r.placed.layout.chunks, 0);
  EXPECT_LE(r.placed.layout.tokens, 45);
  EXPECT_NE(r.placed.layout.text.find("The market opens early"), std::string::npos);
  EXPECT_EQ(r.placed.layout.text.find("garden"), std::string::npos);
  const Asked whole = ask(*e, "What is sold?", documents(false));
  EXPECT_FALSE(whole.placed.layout.retrieved);
  EXPECT_GT(whole.placed.tokens, r.placed.tokens);
  // Room for the chunk under its header, not for the whole document.
  auto count = [&](const std::string& t) { return int(e->tokenize(t, false).value().size()); };
  set.budget_tokens = count("### Document: market.txt (excerpts)\n") + count(chunk) + 1;
  const Asked small = ask(*e, "What is sold?", set);
  EXPECT_EQ(small.placed.layout.whole_documents, 0);
  EXPECT_EQ(small.placed.layout.chunks, 1);
  EXPECT_LE(small.placed.layout.tokens, set.budget_tokens);
}

TEST(DocumentEngine, SameReplyWithAndWithoutTheCache) {
  auto radix = make_engine("radix");
  auto off = make_engine("off");
  ASSERT_TRUE(radix && off);
  const Asked cold = ask(*off, "Where do apple trees grow?", documents(false), 12);
  ask(*radix, "Where is the bridge?", documents(true), 4);  // warms the documents
  const Asked warm = ask(*radix, "Where do apple trees grow?", documents(false), 12);
  EXPECT_EQ(warm.placed.cached(warm.reply.metrics.cached_tokens), warm.placed.tokens);
  EXPECT_EQ(warm.reply.tokens, cold.reply.tokens);
  EXPECT_EQ(cold.reply.metrics.cached_tokens, 0);
}

TEST(DocumentEngine, DocumentsGoBeforeAPlainPromptButNotTokenIds) {
  auto e = make_engine("radix");
  ASSERT_TRUE(e);
  GenerateRequest req;
  req.prompt = "The bridge is";
  auto placed = place_documents(*e, req, documents(false));
  ASSERT_TRUE(placed.ok());
  EXPECT_GT(placed->tokens, 20);
  EXPECT_TRUE(req.prompt.starts_with("Documents:\n\n### Document: garden.md\n"));
  EXPECT_TRUE(req.prompt.ends_with("\nThe bridge is"));
  GenerateRequest ids;
  ids.tokens = {1, 2, 3};
  EXPECT_EQ(place_documents(*e, ids, documents(false)).status().code(),
            StatusCode::invalid_argument);
}

}  // namespace
}  // namespace rc
