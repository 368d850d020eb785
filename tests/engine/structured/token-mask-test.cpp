// The trie walk (with its string shortcut) against brute force: for random
// grammar states, a token is allowed exactly when feeding its bytes one by
// one to the matcher keeps some thread alive. Vocabularies: random byte
// strings rich in JSON punctuation and partial UTF-8, and the bundled
// model's SPM vocabulary (▁ spaces, <0xNN> byte tokens).
#include <gtest/gtest.h>

#include <random>

#include "mask-oracle.h"
#include "model/default-model.h"
#include "schema-check.h"
#include "structured/json-closing.h"
#include "structured/json-constraint.h"
#include "tokenizer/tokenizer.h"

namespace rc::structured {
namespace {

using test::Json;

std::vector<std::string> random_vocab(std::mt19937_64& rng, int n) {
  const std::vector<std::string> atoms = {
      "\"", "{",    "}",     "[",     "]",    ",",   ":",    " ",    "\n",   "\\",       "\\u",
      "00", "e9",   "a",     "b",     "name", "id",  "1",    "2",    "0",    ".",        "-",
      "e",  "true", "false", "null",  "é",    "漢",  "\xe6", "\xbc", "\xa2", "\xf0\x9f", "\x98\x80",
      "T",  "Z",    "@",     "x.org", "\x01", "red", "g",    "reen"};
  std::vector<std::string> v;
  for (int c = 0; c < 256; ++c) v.push_back(std::string(1, char(c)));  // byte tokens
  while (static_cast<int>(v.size()) < n) {
    std::string s;
    const int parts = 1 + static_cast<int>(rng() % 4);
    for (int i = 0; i < parts; ++i) s += atoms[rng() % atoms.size()];
    v.push_back(s);
  }
  v.push_back("");  // a token that is never allowed (a control token)
  return v;
}

// Walks a random document of the grammar token by token (choosing among
// allowed tokens) and checks the mask at every step.
void check_masks(std::shared_ptr<const Grammar> g, std::shared_ptr<const TokenTrie> trie,
                 std::mt19937_64& rng, int steps) {
  JsonConstraint c(g, trie, {});
  for (int step = 0; step < steps && !c.finished(); ++step) {
    std::vector<int32_t> ids;
    ASSERT_TRUE(test::mask_equals_brute_force(c, *g, *trie, &ids)) << "step " << step;
    if (ids.empty()) {
      ASSERT_TRUE(c.accepting()) << "no token allowed before the end";
      return;
    }
    ASSERT_TRUE(c.accept(ids[rng() % ids.size()]));
  }
}

TEST(TokenMask, MatchesBruteForceOnRandomVocabularies) {
  std::mt19937_64 rng(11);
  const char* fixed[] = {
      R"({"type":"object","properties":{"name":{"type":"string"},"id":{"type":"integer"},
        "tags":{"type":"array","items":{"enum":["red","green","g"]}}},"required":["id"]})",
      R"({"type":"string","format":"date-time"})",
      R"({"anyOf":[{"type":"number"},{"type":"string","format":"email"},{"type":"null"}]})",
      R"({"type":"array","items":{"type":"string","pattern":"[0-9a-f]{4}|b+\\.a"}})",
      R"({"type":"string","pattern":"^(ab|[x-z]\\d)+$"})"};
  for (int round = 0; round < 12; ++round) {
    auto trie = std::make_shared<TokenTrie>(random_vocab(rng, 900));
    std::string schema;
    if (round < 5) {
      schema = fixed[round];
    } else {
      schema = test::random_schema(rng, 1 + round % 3).dump();
    }
    auto g = compile_response_format({OutputFormat::json_schema, schema});
    ASSERT_TRUE(g.ok()) << g.status().message();
    check_masks(g.value(), trie, rng, 30);
  }
  auto obj = compile_response_format({OutputFormat::json_object, ""});
  check_masks(obj.value(), std::make_shared<TokenTrie>(random_vocab(rng, 900)), rng, 40);
}

TEST(TokenMask, MatchesBruteForceOnTheBundledVocabulary) {
  auto tok = tok::Tokenizer::load(model::default_model_path());
  ASSERT_TRUE(tok.ok()) << tok.status().message();
  auto trie = TokenTrie::from_tokenizer(*tok.value());
  EXPECT_TRUE(trie->every_byte_a_token());  // what budget steering counts on
  std::mt19937_64 rng(5);
  auto g = compile_response_format(
      {OutputFormat::json_schema,
       R"({"type":"object","properties":{"city":{"type":"string"},"when":{"type":"string","format":"date"},
          "n":{"type":"number"}},"required":["city","n"]})"});
  ASSERT_TRUE(g.ok());
  check_masks(g.value(), trie, rng, 25);
}

// Budgets from the shortest reply up: every mask equals brute force (with
// the closing check), some token is always allowed, and when the budget is
// spent the document is complete.
void check_budget(std::shared_ptr<const Grammar> g, std::shared_ptr<const TokenTrie> trie,
                  std::mt19937_64& rng, int budget, bool compare) {
  JsonConstraint c(g, trie, {}, budget);
  for (int step = 0; step < budget && !c.finished(); ++step) {
    std::vector<int32_t> ids;
    if (compare) {
      ASSERT_TRUE(test::mask_equals_brute_force(c, *g, *trie, &ids)) << "step " << step;
    } else {
      const std::vector<bool> m = c.allowed_tokens(false);
      for (int id = 0; id < trie->n_vocab(); ++id) {
        if (m[id]) ids.push_back(id);
      }
    }
    if (ids.empty()) {
      ASSERT_TRUE(c.accepting()) << "no token allowed before the end, budget " << budget;
      return;
    }
    ASSERT_TRUE(c.accept(ids[rng() % ids.size()]));
  }
  EXPECT_TRUE(c.accepting()) << "budget " << budget << " spent before the document closed";
}

TEST(TokenMask, BudgetSteersToAClosedDocument) {
  std::mt19937_64 rng(44);
  auto trie = std::make_shared<TokenTrie>(random_vocab(rng, 900));
  auto obj = compile_response_format({OutputFormat::json_object, ""});
  for (int budget = 2; budget < 40; budget += 3) check_budget(obj.value(), trie, rng, budget, true);
  for (int round = 0; round < 40; ++round) {
    const std::string schema = test::random_schema(rng, 1 + round % 4).dump();
    auto g = compile_response_format({OutputFormat::json_schema, schema});
    ASSERT_TRUE(g.ok()) << g.status().message();
    const int shortest = static_cast<int>(shortest_reply(*g.value()));
    for (int extra : {0, 1, 3, 9, 30}) {
      check_budget(g.value(), trie, rng, shortest + extra, round < 10);
    }
  }
}

TEST(TokenMask, SteeringNeedsEveryByteAsAToken) {
  std::mt19937_64 rng(3);
  std::vector<std::string> vocab = random_vocab(rng, 400);
  EXPECT_TRUE(TokenTrie(vocab).every_byte_a_token());
  for (std::string& piece : vocab) {
    if (piece == "{") piece = "{{";  // '{' is no longer a token of its own
  }
  EXPECT_FALSE(TokenTrie(vocab).every_byte_a_token());
}

TEST(TokenMask, EndOfGenerationOnlyWhenComplete) {
  std::vector<std::string> vocab = {"{", "}", "\"a\"", ":", "1", "", " "};
  auto trie = std::make_shared<TokenTrie>(vocab);
  auto g = compile_response_format({OutputFormat::json_schema, R"({"type":"integer"})"});
  JsonConstraint c(g.value(), trie, {5});
  EXPECT_FALSE(c.allowed_tokens(true)[5]);
  ASSERT_TRUE(c.accept(4));
  EXPECT_TRUE(c.accepting());
  EXPECT_FALSE(c.finished());  // "1" may still grow
  EXPECT_TRUE(c.allowed_tokens(true)[5]);
  EXPECT_FALSE(c.allowed_tokens(false)[5]);
  std::vector<float> logits(vocab.size(), 1.0f);
  ASSERT_TRUE(c.mask_logits(logits, true));
  EXPECT_EQ(logits[5], 1.0f);
  EXPECT_EQ(logits[0], -std::numeric_limits<float>::infinity());
  EXPECT_EQ(logits[4], 1.0f);
  auto o = compile_response_format({OutputFormat::json_schema, R"({"type":"object"})"});
  JsonConstraint d(o.value(), trie, {5});
  ASSERT_TRUE(d.accept(0));
  ASSERT_TRUE(d.accept(1));
  EXPECT_TRUE(d.finished());
}

}  // namespace
}  // namespace rc::structured
