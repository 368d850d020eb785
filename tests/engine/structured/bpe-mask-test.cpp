// Token masks over a real byte-level BPE vocabulary (Qwen3's 151,669
// entries from the npm tokenizer.json the BPE oracle fixture installs):
// the trie walk equals brute force (every token's bytes fed through the
// matcher), and sample documents tokenized with that vocabulary are
// accepted token by token and end complete.
#include <gtest/gtest.h>

#include "bpe-fixtures.h"
#include "mask-oracle.h"
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

bool in_formatted_string(const Grammar& g, const std::vector<Thread>& threads) {
  StringFormat f;
  uint32_t state;
  for (const Thread& t : threads) {
    if (format_string_state(g, t, &f, &state)) return true;
  }
  return false;
}

// Brute force over the whole vocabulary on every 4th step and on every step
// inside a formatted string (where the byte-class shortcut works).
TEST_F(BpeMask, SampleDocumentsReplayAndMasksEqualBruteForce) {
  const char* schema =
      R"({"type":"object","properties":{"name":{"type":"string"},"when":{"type":"string","format":"date-time"},
         "n":{"anyOf":[{"type":"integer"},{"type":"null"}]},"tags":{"type":"array","items":{"enum":["a","bé","c\"d"]}},
         "mail":{"type":"string","format":"email"},"id":{"type":"string","format":"uuid"}},
         "required":["name","when","n","tags","mail","id"],"additionalProperties":false})";
  const char* doc =
      R"({"name":"Zoë \"Z\" Ångström, 漢字 ok 😀","when":"2024-02-29T23:59:59.5+01:00","n":null,"tags":["bé","c\"d"],)"
      R"("mail":"first.last+filter_2024%tag-x@mathematics-department.analytical-engines.example.org",)"
      R"("id":"3f2b8c1e-9d4a-4b7e-8f21-6a5c9e0d1b2f"})";
  auto g = compile_response_format({OutputFormat::json_schema, schema});
  ASSERT_TRUE(g.ok()) << g.status().message();
  auto ids = tok().encode(doc, false, false);
  ASSERT_TRUE(ids.ok());
  JsonConstraint c(g.value(), trie_, tok().eog_ids());
  int checked = 0;
  for (size_t step = 0; step < ids->size(); ++step) {
    if (step % 4 == 0 || in_formatted_string(*g.value(), c.threads())) {
      ASSERT_TRUE(test::mask_equals_brute_force(c, *g.value(), *trie_)) << "step " << step;
      ++checked;
    }
    const int32_t id = (*ids)[step];
    ASSERT_TRUE(c.allowed_tokens(false)[id])
        << "step " << step << " '" << tok().token_to_piece(id) << "'";
    ASSERT_TRUE(c.accept(id));
  }
  EXPECT_TRUE(c.finished());
  EXPECT_GT(checked, 30);
}

// Pattern strings (the DFA walk and its per-state cache) and the budget
// check, against brute force at every step, without and with a budget.
TEST_F(BpeMask, PatternStringsAndBudgetsEqualBruteForce) {
  const char* schema =
      R"({"type":"object","properties":{"code":{"type":"string","pattern":"^[A-Z]{2}-\\d{4}$"},
         "ref":{"type":"string","pattern":"[0-9a-f]{8}"},"n":{"type":"integer","maximum":99}},
         "required":["code","ref","n"]})";
  const std::string doc = R"({"code":"AB-1234","ref":"see commit deadbeef in main","n":42})";
  auto g = compile_response_format({OutputFormat::json_schema, schema});
  ASSERT_TRUE(g.ok()) << g.status().message();
  auto ids = tok().encode(doc, false, false);
  ASSERT_TRUE(ids.ok());
  for (int budget : {INT32_MAX, static_cast<int>(doc.size())}) {
    JsonConstraint c(g.value(), trie_, tok().eog_ids(), budget);
    for (size_t step = 0; step < ids->size(); ++step) {
      ASSERT_TRUE(test::mask_equals_brute_force(c, *g.value(), *trie_))
          << "step " << step << " budget " << budget;
      ASSERT_TRUE(c.accept((*ids)[step]));
    }
    EXPECT_TRUE(c.finished());
  }
}

// The shortcuts for pattern, format and maxLength strings (class-surviving
// DFA states, the writable-token bitset, character counts) against brute
// force in every state a document passes through byte by byte (so inside
// UTF-8 sequences and escapes too), then token by token with a budget tight
// enough that the closing check refuses tokens. (The exact formats' masks
// are checked at every byte in format-mask-test.cpp.)
TEST_F(BpeMask, PatternFormatAndLengthStatesEqualBruteForce) {
  struct Case {
    const char* schema;
    std::string doc;
  };
  const std::vector<Case> cases = {
      {R"({"type":"object","properties":{"ref":{"type":"string","pattern":"[0-9a-f]{8}"},
         "code":{"type":"string","pattern":"^[A-Z]{2}-\\d{4}(-[a-z]+)?$"},
         "user":{"type":"string","pattern":"^\\w+@[a-z]+\\.(com|org)$"},
         "tag":{"type":"string","pattern":"(foo|ba[rz])+x?"},
         "words":{"type":"string","pattern":"^[A-Za-z]+( [A-Za-z]+)*$"}},
         "required":["ref","code","user","tag","words"]})",
       R"({"ref":"see commit deadbeef in main","code":"ZX-0042-beta","user":"first_last2@mail.org",)"
       R"("tag":"xx barfoo bazx","words":"Hello big World"})"},
      {R"({"type":"object","properties":{"title":{"type":"string","minLength":3,"maxLength":12},
         "name":{"type":"string","maxLength":6},"esc":{"type":"string","maxLength":5},
         "short":{"type":"array","items":{"type":"string","maxLength":2}}},
         "required":["title","name","esc","short"]})",
       R"({"title":"Zoë Ångström","name":"漢字ok😀","esc":"a\"\\b\u00e9","short":["é","ab",""]})"},
      {R"({"type":"object","properties":{"ip6":{"type":"string","format":"ipv6"},
         "site":{"type":"string","format":"uri"},"host":{"type":"string","format":"hostname"}},
         "required":["ip6","site","host"]})",
       R"({"ip6":"2001:0db8:0000:0000:0000:ff00:0042:8329","site":"https://example.org/a/b",)"
       R"("host":"www.example.com"})"},
  };
  for (const Case& k : cases) {
    auto g = compile_response_format({OutputFormat::json_schema, k.schema});
    ASSERT_TRUE(g.ok()) << g.status().message();
    JsonConstraint bytewise(g.value(), trie_, tok().eog_ids());
    for (size_t at = 0; at < k.doc.size(); ++at) {
      ASSERT_TRUE(test::mask_equals_brute_force(bytewise, *g.value(), *trie_))
          << "byte " << at << " of " << k.doc;
      ASSERT_TRUE(bytewise.accept_bytes(k.doc.substr(at, 1))) << "byte " << at << " of " << k.doc;
    }
    EXPECT_TRUE(bytewise.finished());
    auto ids = tok().encode(k.doc, false, false);
    ASSERT_TRUE(ids.ok());
    const int budget = static_cast<int>(ids->size()) + 4;
    JsonConstraint c(g.value(), trie_, tok().eog_ids(), budget);
    for (size_t step = 0; step < ids->size(); ++step) {
      ASSERT_TRUE(test::mask_equals_brute_force(c, *g.value(), *trie_))
          << "step " << step << " budget " << budget << " of " << k.doc;
      ASSERT_TRUE(c.accept((*ids)[step]));
    }
  }
}

// The exact formats' class runs near the budget (a run is lent while what
// the format needs after any of its bytes still fits): brute force at every
// step inside a formatted string, under budgets from tight to loose.
TEST_F(BpeMask, FormatRunsNearTheBudgetEqualBruteForce) {
  const char* schema =
      R"({"type":"object","properties":{"mail":{"type":"string","format":"email"},
         "id":{"type":"string","format":"uuid"},"when":{"type":"string","format":"date-time"},
         "ip":{"type":"string","format":"ipv4"}},"required":["mail","id","when","ip"]})";
  const std::string doc =
      R"({"mail":"first.last+filter_2024@mathematics-department.example.org",)"
      R"("id":"3f2b8c1e-9d4a-4b7e-8f21-6a5c9e0d1b2f","when":"2024-02-29T23:59:59.5+01:00",)"
      R"("ip":"192.168.10.254"})";
  auto g = compile_response_format({OutputFormat::json_schema, schema});
  ASSERT_TRUE(g.ok()) << g.status().message();
  auto ids = tok().encode(doc, false, false);
  ASSERT_TRUE(ids.ok());
  int checked = 0;
  for (int extra : {2, 10, 30}) {
    const int budget = static_cast<int>(ids->size()) + extra;
    JsonConstraint c(g.value(), trie_, tok().eog_ids(), budget);
    for (size_t step = 0; step < ids->size(); ++step) {
      if (in_formatted_string(*g.value(), c.threads())) {
        ASSERT_TRUE(test::mask_equals_brute_force(c, *g.value(), *trie_))
            << "step " << step << " budget " << budget;
        ++checked;
      }
      ASSERT_TRUE(c.accept((*ids)[step]));
    }
  }
  EXPECT_GT(checked, 30);
}

}  // namespace
}  // namespace rc::structured
