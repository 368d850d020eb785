// The copy model (copy-gguf.h) copies: a chat whose user message is a
// document, answered greedily, repeats the document token for token, in
// fp32 and in the Q4_K_M mix; a random model of the same shape does not;
// drafted decoding's prompt lookup is accepted on it; and its file holds
// the random model's tensors (names, types, shapes, bytes), so a token
// costs the same on both.
#include <gtest/gtest.h>

#include <unistd.h>
#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "engine-reply.h"
#include "model/gguf-reader.h"
#include "radixchat/engine.h"
#include "random-gguf.h"

namespace rc {
namespace {

const char* kDocument =
    "Rivers carry the mountain's stone down to the sea, grinding it into sand on the way. "
    "A careful traveller follows the water, because every village was built where the river "
    "bends, and every bridge tells how high the last flood rose.";

// A small model of the copy construction (or a random one) for the test's lifetime.
class ModelFile {
 public:
  ModelFile(const std::string& type, bool copy, int layers = 6) {
    testing::RandomModelSpec s;
    s.arch = "llama", s.type = type, s.copy = copy;
    s.dim = 1024, s.layers = layers, s.heads = 16, s.kv_heads = 2, s.ffn = 256, s.vocab = 1000;
    s.ctx = 2048, s.seed = 3;
    path_ = (std::filesystem::temp_directory_path() /
             ("rc-copy-" + type + (copy ? "-copy-" : "-random-") + std::to_string(::getpid()) +
              ".gguf"))
                .string();
    const Status st = testing::write_random_model(s, path_);
    EXPECT_TRUE(st.ok()) << st.to_string();
  }
  ~ModelFile() { std::filesystem::remove(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

using rc::test::greedy;
using rc::test::Reply;

std::unique_ptr<Engine> open(const std::string& path, const std::string& speculate) {
  EngineConfig cfg;
  cfg.model_path = path;
  cfg.n_threads = 2;
  cfg.cache = CacheSetting::off;  // each reply from scratch: nothing drafts from an earlier one
  cfg.speculate = parse_speculate_setting(speculate).value();
  auto e = Engine::create(cfg);
  EXPECT_TRUE(e.ok()) << e.status().to_string();
  return e.ok() ? std::move(e.value()) : nullptr;
}

const std::vector<ChatMessage> kChat = {{"system", "Repeat the user's document word for word."},
                                        {"user", kDocument}};

// The document's tokens as the prompt holds them: after the user turn's
// opening (the marker, then "\n" with the vocabulary's space prefix) and
// up to its "<|end|>".
std::vector<int32_t> document_tokens(Engine& e) {
  const std::vector<int32_t> prompt = e.render_chat(kChat).value();
  const int32_t user = e.tokenize("<|user|>", false).value().back();
  const int32_t end = e.tokenize("<|end|>", false).value().back();
  const int32_t newline = e.tokenize("\n", false).value().back();
  auto open = std::find(std::find(prompt.begin(), prompt.end(), user), prompt.end(), newline);
  EXPECT_NE(open, prompt.end());
  return std::vector<int32_t>(open + 1, std::find(open, prompt.end(), end));
}

// How many of the reply's first tokens equal the document's.
int agreeing(const std::vector<int32_t>& reply, const std::vector<int32_t>& doc) {
  int n = 0;
  for (size_t i = 0; i < std::min(reply.size(), doc.size()); ++i) n += reply[i] == doc[i];
  return n;
}

constexpr int kTokens = 64;

class CopyModel : public ::testing::TestWithParam<std::string> {};

TEST_P(CopyModel, ReplyRepeatsTheDocument) {
  ModelFile file(GetParam(), true);
  std::unique_ptr<Engine> e = open(file.path(), "off");
  ASSERT_TRUE(e);
  const std::vector<int32_t> doc = document_tokens(*e);
  ASSERT_GE(doc.size(), size_t(kTokens));
  const Reply r = greedy(*e, kChat, kTokens);
  ASSERT_EQ(r.tokens.size(), size_t(kTokens));
  EXPECT_GE(agreeing(r.tokens, doc), kTokens * 9 / 10) << e->detokenize(r.tokens);
}

TEST_P(CopyModel, RandomModelOfTheSameShapeDoesNotCopy) {
  ModelFile file(GetParam(), false);
  std::unique_ptr<Engine> e = open(file.path(), "off");
  ASSERT_TRUE(e);
  const Reply r = greedy(*e, kChat, kTokens);
  EXPECT_LT(agreeing(r.tokens, document_tokens(*e)), kTokens / 4) << e->detokenize(r.tokens);
}

// Prompt lookup drafts the document; the model keeps the drafts.
TEST_P(CopyModel, DraftsFromThePromptAreAccepted) {
  ModelFile file(GetParam(), true);
  std::unique_ptr<Engine> plain = open(file.path(), "off");
  std::unique_ptr<Engine> drafted = open(file.path(), "tree");
  ASSERT_TRUE(plain && drafted);
  const Reply a = greedy(*plain, kChat, kTokens), b = greedy(*drafted, kChat, kTokens);
  EXPECT_EQ(a.tokens, b.tokens);
  EXPECT_GE(b.metrics.accepted_tokens, kTokens / 2);
  EXPECT_GE(b.metrics.accepted_tokens * 4, b.metrics.drafted_tokens * 3);  // 3 in 4 kept
}

// 16 layers: the Q4_K_M mix gives some of them Q6_K attn_v / ffn_down.
TEST_P(CopyModel, SameTensorsAsTheRandomModel) {
  ModelFile copy(GetParam(), true, 16), random(GetParam(), false, 16);
  auto a = model::GgufFile::open(copy.path()), b = model::GgufFile::open(random.path());
  ASSERT_TRUE(a.ok() && b.ok());
  const auto &ta = (*a)->tensors(), &tb = (*b)->tensors();
  ASSERT_EQ(ta.size(), tb.size());
  for (size_t i = 0; i < ta.size(); ++i) {
    EXPECT_EQ(ta[i].name, tb[i].name);
    EXPECT_EQ(ta[i].type_id, tb[i].type_id) << ta[i].name;
    EXPECT_EQ(ta[i].ne, tb[i].ne) << ta[i].name;
    EXPECT_EQ(ta[i].n_bytes, tb[i].n_bytes) << ta[i].name;
  }
}

INSTANTIATE_TEST_SUITE_P(Types, CopyModel, ::testing::Values("f32", "q4_k_m"));

}  // namespace
}  // namespace rc
