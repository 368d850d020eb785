// Token masks over a real byte-level BPE vocabulary (Qwen3's 151,669
// entries from the npm tokenizer.json the BPE oracle fixture installs):
// the trie walk equals brute force (every token's bytes fed through the
// matcher), and sample documents tokenized with that vocabulary are
// accepted token by token and end complete.
#include <gtest/gtest.h>

#include <random>

#include "bpe-fixtures.h"
#include "structured/json-constraint.h"

namespace rc::structured {
namespace {

class BpeMask : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto o = testing::read_oracle(std::string(RC_ORACLE_DIR) + "/qwen3.json");
    if (!o) return;
    loaded_ = new testing::LoadedBpe(testing::load_bpe(o->vocab));
    if (loaded_->tok.ok()) trie_ = TokenTrie::from_tokenizer(*loaded_->tok.value());
  }
  void SetUp() override {
    if (!trie_) GTEST_SKIP() << "no qwen3 vocabulary in " << RC_ORACLE_DIR;
  }
  static const tok::Tokenizer& tok() { return *loaded_->tok.value(); }
  static testing::LoadedBpe* loaded_;
  static std::shared_ptr<const TokenTrie> trie_;
};
testing::LoadedBpe* BpeMask::loaded_ = nullptr;
std::shared_ptr<const TokenTrie> BpeMask::trie_;

bool brute_force(const Grammar& g, const std::vector<Thread>& threads, const std::string& piece) {
  if (piece.empty()) return false;
  std::vector<Thread> cur = threads;
  for (char c : piece) {
    std::vector<Thread> next;
    for (const Thread& t : cur) feed(g, t, static_cast<uint8_t>(c), next);
    if (next.empty()) return false;
    dedupe(next);
    cur = std::move(next);
  }
  return true;
}

TEST_F(BpeMask, SampleDocumentsReplayAndMasksEqualBruteForce) {
  const char* schema =
      R"({"type":"object","properties":{"name":{"type":"string"},"when":{"type":"string","format":"date-time"},
         "n":{"anyOf":[{"type":"integer"},{"type":"null"}]},"tags":{"type":"array","items":{"enum":["a","bé","c\"d"]}}},
         "required":["name","when","n","tags"],"additionalProperties":false})";
  const char* doc =
      R"({"name": "Zoë \"Z\" Ångström, 漢字 ok 😀", "when": "2024-02-29T23:59:59.5+01:00", "n": null, "tags": ["bé", "c\"d"]})";
  auto g = compile_response_format({OutputFormat::json_schema, schema});
  ASSERT_TRUE(g.ok()) << g.status().message();
  auto ids = tok().encode(doc, false, false);
  ASSERT_TRUE(ids.ok());
  JsonConstraint c(g.value(), trie_, tok().eog_ids());
  for (size_t step = 0; step < ids->size(); ++step) {
    const std::vector<bool> allowed = c.allowed_tokens(false);
    if (step % 4 == 0) {  // brute force over the whole vocabulary on every 4th step
      for (int id = 0; id < trie_->n_vocab(); ++id) {
        ASSERT_EQ(allowed[id], brute_force(*g.value(), c.threads(), trie_->piece(id)))
            << "step " << step << " token " << id << " '" << trie_->piece(id) << "'";
      }
    }
    const int32_t id = (*ids)[step];
    ASSERT_TRUE(allowed[id]) << "step " << step << " '" << tok().token_to_piece(id) << "'";
    ASSERT_TRUE(c.accept(id));
  }
  EXPECT_TRUE(c.finished());
}

}  // namespace
}  // namespace rc::structured
