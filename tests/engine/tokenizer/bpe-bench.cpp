// Encode throughput of the byte-level BPE tokenizer, as figures (not a
// test): the PCRE2 pre-tokenizer alone, the whole encode, and, as the
// baseline measured in the same run, sentencepiece on the bundled SPM
// vocabulary with the same text. Uses the oracle vocabularies
// (bpe_oracle_setup must have run; ctest -R bpe_oracle_setup).
// usage: bpe-bench [MB of text, default 4]
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "bpe-fixtures.h"
#include "tokenizer/bpe-model.h"
#include "tokenizer/bpe-pretokenize.h"

namespace {

using Clock = std::chrono::steady_clock;

template <typename F>
double mb_per_s(size_t bytes, F&& run) {
  run();  // warm-up
  const auto t0 = Clock::now();
  int reps = 0;
  do {
    run();
    ++reps;
  } while (Clock::now() - t0 < std::chrono::seconds(2));
  const double s = std::chrono::duration<double>(Clock::now() - t0).count();
  return static_cast<double>(bytes) * reps / s / 1e6;
}

}  // namespace

int main(int argc, char** argv) {
  const size_t mb = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 4;
  auto spm =
      rc::tok::Tokenizer::load(std::string(RADIXCHAT_SOURCE_DIR) + "/assets/model/tokenizer.model");
  if (!spm.ok()) {
    std::fprintf(stderr, "bpe-bench: %s\n", spm.status().to_string().c_str());
    return 1;
  }
  for (const char* name : {"llama3", "qwen3"}) {
    auto o = rc::testing::read_oracle(std::string(RC_ORACLE_DIR) + "/" + name + ".json");
    if (!o) {
      std::fprintf(stderr, "bpe-bench: no %s oracle in %s (run ctest -R bpe_oracle_setup)\n", name,
                   RC_ORACLE_DIR);
      return 1;
    }
    auto l = rc::testing::load_bpe(o->vocab);
    if (!l.tok.ok()) {
      std::fprintf(stderr, "bpe-bench: %s\n", l.tok.status().to_string().c_str());
      return 1;
    }
    // Mixed prose, code, multilingual text and whitespace: the oracle strings.
    std::string text;
    while (text.size() < mb << 20) {
      for (const auto& c : o->cases) text += c.text + "\n";
    }
    const auto& tok = **l.tok;
    auto pre = rc::tok::PreTokenizer::create(tok.pre_tokenizer());
    size_t n_ids = 0, n_words = 0;
    const double split = mb_per_s(text.size(), [&] {
      std::vector<std::string_view> w;
      (void)(*pre)->split(text, w);
      n_words = w.size();
    });
    const double enc =
        mb_per_s(text.size(), [&] { n_ids = tok.encode(text, false, false)->size(); });
    const double base = mb_per_s(text.size(), [&] { (void)(*spm)->encode(text, false, false); });
    std::printf(
        "%s (%s): %.1f MB text, %zu words, %zu ids | pre-tokenizer %.1f MB/s | encode %.1f MB/s "
        "| sentencepiece (bundled SPM, same text) %.1f MB/s | encode/sentencepiece %.2fx\n",
        name, tok.pre_tokenizer().c_str(), text.size() / 1e6, n_words, n_ids, split, enc, base,
        enc / base);
  }
  return 0;
}
