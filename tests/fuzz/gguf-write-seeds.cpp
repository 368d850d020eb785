// gguf-write-seeds: writes the generated seed files of the GGUF fuzz corpus
// (tiny random-weight models of each family, a vocabulary-only file, and
// corrupt variants named bad-*), which GgufCorpus.ReplayEveryFile replays in
// every build and the gguf-fuzz target starts from.
//
//   gguf-write-seeds [DIR]      (default: the source tree's tests/fuzz/corpus)
//
// Exits 1, saying why, when a file cannot be made or written.
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>
#include <tuple>
#include <vector>

#include "model/gguf-writer.h"
#include "random-gguf.h"

namespace rc::testing {
namespace {

namespace fs = std::filesystem;

fs::path g_dir;
bool g_failed = false;

void write(const std::string& name, const std::vector<uint8_t>& bytes) {
  std::ofstream out(g_dir / name, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
  if (!out) {
    std::fprintf(stderr, "gguf-write-seeds: cannot write %s\n", (g_dir / name).c_str());
    g_failed = true;
  }
}

std::vector<uint8_t> model_bytes(RandomModelSpec s) {
  model::GgufWriter w;
  if (Status st = add_random_model(s, w); !st.ok()) {
    std::fprintf(stderr, "gguf-write-seeds: %s\n", st.to_string().c_str());
    g_failed = true;
  }
  return w.serialize();
}

void write_seeds() {
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

int main(int argc, char** argv) {
  if (argc > 2) {
    std::fprintf(stderr, "usage: gguf-write-seeds [DIR]\n");
    return 2;
  }
  rc::testing::g_dir =
      argc == 2 ? std::filesystem::path(argv[1])
                : std::filesystem::path(RADIXCHAT_SOURCE_DIR) / "tests" / "fuzz" / "corpus";
  std::error_code ec;
  std::filesystem::create_directories(rc::testing::g_dir, ec);
  if (ec) {
    std::fprintf(stderr, "gguf-write-seeds: %s: %s\n", rc::testing::g_dir.c_str(),
                 ec.message().c_str());
    return 1;
  }
  rc::testing::write_seeds();
  return rc::testing::g_failed ? 1 : 0;
}
