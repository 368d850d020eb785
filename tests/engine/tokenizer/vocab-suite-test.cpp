// llama.cpp's tokenizer test suites: vocabulary-only GGUF files
// (models/ggml-vocab-*.gguf) with inputs (.gguf.inp, cases separated by
// "\n__ggml_vocab_test__\n") and llama.cpp's token ids (.gguf.out, one line
// per case). They are not redistributed here; point RADIXCHAT_VOCAB_DIR at a
// folder holding them (e.g. a llama.cpp checkout's models/) to run this test.
// Sentencepiece and byte-level BPE vocabularies run; files whose tokenizer
// model or BPE pre-tokenizer is unsupported are skipped. Like llama.cpp's
// test-tokenizer-0, texts are encoded without BOS and without special-token
// parsing.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tokenizer/tokenizer.h"

namespace rc::tok {
namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> split(const std::string& s, const std::string& sep) {
  std::vector<std::string> out;
  size_t at = 0;
  for (size_t k; (k = s.find(sep, at)) != std::string::npos; at = k + sep.size()) {
    out.push_back(s.substr(at, k - at));
  }
  out.push_back(s.substr(at));
  return out;
}

TEST(VocabSuite, LlamaCppVocabularies) {
  const char* dir = std::getenv("RADIXCHAT_VOCAB_DIR");
  if (!dir || !*dir) GTEST_SKIP() << "set RADIXCHAT_VOCAB_DIR to run llama.cpp's vocab suites";
  int files = 0, bpe = 0, cases = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    const fs::path gguf = e.path();
    if (gguf.extension() != ".gguf") continue;
    const fs::path inp = gguf.string() + ".inp", outp = gguf.string() + ".out";
    if (!fs::exists(inp) || !fs::exists(outp)) continue;
    Result<std::unique_ptr<Tokenizer>> t = Tokenizer::load(gguf.string());
    if (!t.ok()) {
      EXPECT_EQ(t.status().code(), StatusCode::unsupported) << t.status().to_string();
      continue;
    }
    const std::vector<std::string> texts = split(slurp(inp), "\n__ggml_vocab_test__\n");
    const std::vector<std::string> lines = split(slurp(outp), "\n");
    ASSERT_EQ(texts.size(), lines.size()) << gguf;
    for (size_t i = 0; i < texts.size(); ++i) {
      std::vector<int32_t> want;
      std::istringstream ids(lines[i]);
      for (int32_t id; ids >> id;) want.push_back(id);
      Result<std::vector<int32_t>> got =
          (*t)->encode(texts[i], /*add_bos=*/false, /*parse_special=*/false);
      ASSERT_TRUE(got.ok()) << got.status().to_string();
      EXPECT_EQ(*got, want) << gguf.filename() << " case " << i << ": '" << texts[i] << "'";
      ++cases;
    }
    ++files;
    bpe += (*t)->kind() == Tokenizer::Kind::bpe;
  }
  std::printf("%d vocabularies (%d byte-level BPE), %d cases\n", files, bpe, cases);
  EXPECT_GT(files, 0) << "no supported vocabulary with .inp/.out in " << dir;
}

}  // namespace
}  // namespace rc::tok
