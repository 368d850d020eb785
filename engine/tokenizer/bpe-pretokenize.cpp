#include "bpe-pretokenize.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <algorithm>

#include "utf8.h"

namespace rc::tok {

namespace {

// The patterns, as llama.cpp's llama-vocab.cpp lists them per pre-tokenizer
// type (its "adapted" forms: the case-insensitive (?i:'s|...) of the
// tokenizer.json files spelled out with character classes, same matches).
constexpr const char* kGpt2 =
    R"re('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S))re";
constexpr const char* kLlama3 =
    R"re((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)re";
constexpr const char* kQwen2 =
    R"re((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)re";

struct Spec {
  std::vector<std::string_view> names;
  std::vector<const char*> patterns;
  bool ignore_merges = false;
  bool add_bos = false;
};

const std::vector<Spec>& specs() {
  static const std::vector<Spec> s = {
      {{"default"}, {R"re([\p{P}\$\+<=>\^~\|]+)re", kGpt2, R"re(\p{N}+)re", "[0-9][0-9][0-9]"}},
      {{"llama3", "llama-v3", "llama-bpe"}, {kLlama3}, true, true},
      {{"qwen2", "deepseek-r1-qwen", "megrez"}, {kQwen2}},
      {{"gpt-2", "phi-2", "mpt", "olmo"}, {kGpt2}},
      {{"smollm", "starcoder", "refact", "command-r", "codeshell"}, {R"re(\p{N})re", kGpt2}},
  };
  return s;
}

}  // namespace

struct PreTokenizer::Pattern {
  pcre2_code* code = nullptr;
  bool jit = false;
  ~Pattern() { pcre2_code_free(code); }
};

PreTokenizer::~PreTokenizer() = default;

Result<std::unique_ptr<PreTokenizer>> PreTokenizer::create(std::string_view name) {
  const Spec* spec = nullptr;
  std::string known;
  for (const Spec& s : specs()) {
    for (std::string_view n : s.names) {
      if (n == name) spec = &s;
      known += (known.empty() ? "" : ", ") + std::string(n);
    }
  }
  if (!spec) {
    return Status(StatusCode::unsupported, "unknown BPE pre-tokenizer '" + std::string(name) +
                                               "' (tokenizer.ggml.pre; supported: " + known + ")");
  }
  std::unique_ptr<PreTokenizer> p(new PreTokenizer());
  p->name_ = std::string(name);
  p->ignore_merges_ = spec->ignore_merges;
  p->add_bos_ = spec->add_bos;
  for (const char* re : spec->patterns) {
    int err = 0;
    PCRE2_SIZE at = 0;
    auto pat = std::make_unique<Pattern>();
    pat->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(re), PCRE2_ZERO_TERMINATED,
                              PCRE2_UTF | PCRE2_UCP, &err, &at, nullptr);
    if (!pat->code) {
      PCRE2_UCHAR msg[256];
      pcre2_get_error_message(err, msg, sizeof msg);
      return Status(StatusCode::internal, "PCRE2 rejected the " + p->name_ + " pattern at " +
                                              std::to_string(at) + ": " +
                                              reinterpret_cast<const char*>(msg));
    }
    // Without JIT (an architecture PCRE2 cannot JIT for) the interpreter runs.
    pat->jit = pcre2_jit_compile(pat->code, PCRE2_JIT_COMPLETE) == 0;
    p->patterns_.push_back(std::move(pat));
  }
  return p;
}

Status PreTokenizer::split_one(const Pattern& p, std::string_view frag,
                               std::vector<std::string_view>& out) const {
  pcre2_match_data* md = pcre2_match_data_create(1, nullptr);
  if (!md) return Status(StatusCode::internal, "out of memory for PCRE2 match data");
  const auto* subject = reinterpret_cast<PCRE2_SPTR>(frag.data());
  size_t pos = 0, last = 0;
  Status st;
  while (pos < frag.size()) {
    int rc = PCRE2_ERROR_JIT_STACKLIMIT;
    if (p.jit) rc = pcre2_jit_match(p.code, subject, frag.size(), pos, 0, md, nullptr);
    // The interpreter keeps its backtracking state on the heap: it takes
    // over when the JIT's small machine stack is not enough.
    if (rc == PCRE2_ERROR_JIT_STACKLIMIT) {
      rc = pcre2_match(p.code, subject, frag.size(), pos, PCRE2_NO_UTF_CHECK, md, nullptr);
    }
    if (rc == PCRE2_ERROR_NOMATCH) break;
    if (rc < 0) {
      PCRE2_UCHAR msg[256];
      pcre2_get_error_message(rc, msg, sizeof msg);
      st = Status(StatusCode::internal, "pre-tokenizer " + name_ + " failed at byte " +
                                            std::to_string(pos) + ": " +
                                            reinterpret_cast<const char*>(msg));
      break;
    }
    const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md);
    const size_t s = ov[0], e = ov[1];
    if (e <= s) {  // an empty match: none of the patterns has one, but never loop
      const int n = utf8_sequence_length(frag.substr(s));
      pos = s + static_cast<size_t>(std::max(n, 1));
      continue;
    }
    if (s > last) out.push_back(frag.substr(last, s - last));
    out.push_back(frag.substr(s, e - s));
    last = pos = e;
  }
  if (st.ok() && last < frag.size()) out.push_back(frag.substr(last));
  pcre2_match_data_free(md);
  return st;
}

Status PreTokenizer::split(std::string_view text, std::vector<std::string_view>& words) const {
  if (text.empty()) return {};
  std::vector<std::string_view> cur{text}, next;
  for (size_t i = 0; i < patterns_.size(); ++i) {
    next.clear();
    for (std::string_view frag : cur) {
      if (Status st = split_one(*patterns_[i], frag, next); !st.ok()) return st;
    }
    cur.swap(next);
  }
  words.insert(words.end(), cur.begin(), cur.end());
  return {};
}

}  // namespace rc::tok
