// Replays the fuzz corpus (tests/fuzz/corpus/) through the fuzz harness in
// the normal build. File names say what is expected: ok-* must open as GGUF,
// bad-* must be refused; anything else (crashers found by fuzzing, configs
// that open but do not load) must only not crash.
//
// The seed files are generated: run this binary with
//   --gtest_also_run_disabled_tests --gtest_filter='*WriteSeeds*'
// to rewrite them.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "gguf-fuzz-harness.h"
#include "model/gguf-writer.h"
#include "random-gguf.h"

namespace rc::testing {
namespace {

namespace fs = std::filesystem;

const fs::path kCorpus = fs::path(RADIXCHAT_SOURCE_DIR) / "tests" / "fuzz" / "corpus";

std::vector<uint8_t> read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(GgufCorpus, ReplayEveryFile) {
  ASSERT_TRUE(fs::is_directory(kCorpus)) << kCorpus;
  int n = 0, ok = 0, bad = 0;
  for (const auto& e : fs::directory_iterator(kCorpus)) {
    if (!e.is_regular_file()) continue;
    const std::string name = e.path().filename().string();
    const std::vector<uint8_t> bytes = read_all(e.path());
    const bool opened = fuzz_gguf_once(bytes.data(), bytes.size());
    ++n;
    if (name.rfind("ok-", 0) == 0) {
      EXPECT_TRUE(opened) << name;
      ++ok;
    } else if (name.rfind("bad-", 0) == 0) {
      EXPECT_FALSE(opened) << name;
      ++bad;
    }
  }
  EXPECT_GE(ok, 3);
  EXPECT_GE(bad, 5);
  std::printf("replayed %d corpus files (%d ok-, %d bad-)\n", n, ok, bad);
}

void write(const std::string& name, const std::vector<uint8_t>& bytes) {
  std::ofstream(kCorpus / name, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()),
             static_cast<std::streamsize>(bytes.size()));
}

std::vector<uint8_t> model_bytes(RandomModelSpec s) {
  model::GgufWriter w;
  EXPECT_TRUE(add_random_model(s, w).ok());
  return w.serialize();
}

TEST(GgufCorpus, DISABLED_WriteSeeds) {
  fs::create_directories(kCorpus);
  RandomModelSpec s;
  s.dim = 32, s.layers = 1, s.heads = 2, s.kv_heads = 1, s.ffn = 64, s.vocab = 48, s.ctx = 64;
  s.type = "q8_0";
  s.tied_output = true;
  const std::vector<uint8_t> llama = model_bytes(s);
  write("ok-tiny-llama-q8_0.gguf", llama);
  s.arch = "qwen2", s.type = "f16", s.dim = 16, s.ffn = 32, s.tied_output = false;
  write("ok-tiny-qwen2-f16.gguf", model_bytes(s));
  s.arch = "llama", s.type = "f32", s.dim = 16, s.llama3_rope = true, s.rope_base = 500000;
  write("ok-tiny-llama3-rope-f32.gguf", model_bytes(s));
  model::GgufWriter v;
  add_vocab_metadata(synthetic_vocab(300), true, v);
  write("ok-vocab-only.gguf", v.serialize());

  // Corrupt variants of the llama file.
  std::vector<uint8_t> b = llama;
  b[0] = 'X';
  write("bad-magic.gguf", b);
  b = llama;
  b[4] = 1;
  write("bad-version-1.gguf", b);
  b = llama;
  b[15] = 0x40;  // tensor count high byte
  write("bad-huge-tensor-count.gguf", b);
  b = llama;
  b[23] = 0x7f;  // metadata count high byte
  write("bad-huge-kv-count.gguf", b);
  b = llama;
  b[31] = 0x10;  // first key's length high byte
  write("bad-huge-key-length.gguf", b);
  for (size_t cut : {size_t(20), llama.size() / 3, llama.size() / 2, llama.size() - 100}) {
    write("bad-truncated-" + std::to_string(cut) + ".gguf",
          std::vector<uint8_t>(llama.begin(), llama.begin() + cut));
  }
  // Hand-built: f32 tensors of 32 elements at the given offsets.
  auto tensors = [](std::vector<std::tuple<std::string, uint32_t, uint64_t>> ts) {
    std::vector<uint8_t> g;
    auto put = [&g](auto x) {
      const size_t at = g.size();
      g.resize(at + sizeof x);
      std::memcpy(g.data() + at, &x, sizeof x);
    };
    put(uint32_t(0x46554747)), put(uint32_t(3)), put(uint64_t(ts.size())), put(uint64_t(0));
    for (auto& [name, type, off] : ts) {
      put(uint64_t(name.size()));
      g.insert(g.end(), name.begin(), name.end());
      put(uint32_t(1)), put(uint64_t(32)), put(type), put(off);
    }
    g.resize((g.size() + 31) / 32 * 32 + 256, 0);
    return g;
  };
  write("bad-overlap.gguf", tensors({{"a", 0, 0}, {"b", 0, 64}}));
  write("bad-misaligned.gguf", tensors({{"a", 0, 16}}));
  write("loose-unknown-type.gguf", tensors({{"a", 77, 0}}));  // opens only permissively
  write("bad-past-eof.gguf", tensors({{"a", 0, 1024}}));
  write("loose-q5k-type.gguf", tensors({{"a", 13, 0}}));  // opens only permissively
}

}  // namespace
}  // namespace rc::testing
