#include "tokenizer-fixtures.h"

#include <gtest/gtest.h>

#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>

#include "model/gguf-writer.h"
#include "random-gguf.h"

namespace rc::testing {

const tok::Tokenizer& bundled_sidecar() {
  static std::unique_ptr<tok::Tokenizer> t = [] {
    auto r = tok::Tokenizer::from_spm_file(kBundledTokenizer);
    if (!r.ok()) {
      ADD_FAILURE() << r.status().to_string();
      std::abort();
    }
    return std::move(r).value();
  }();
  return *t;
}

std::vector<uint8_t> bundled_vocab_gguf() {
  Result<VocabPieces> v = vocab_from_file(kBundledTokenizer);
  if (!v.ok()) {
    ADD_FAILURE() << v.status().to_string();
    return {};
  }
  int32_t end_id = -1;
  for (size_t i = 0; i < v->tokens.size(); ++i)
    if (v->tokens[i] == "<|end|>") end_id = static_cast<int32_t>(i);
  model::GgufWriter w;
  w.set_string("general.architecture", "llama");
  w.set_string("tokenizer.ggml.model", "llama");
  w.set("tokenizer.ggml.tokens", model::GgufOwnedValue::strings(v->tokens));
  w.set("tokenizer.ggml.scores", model::GgufOwnedValue::f32s(v->scores));
  w.set("tokenizer.ggml.token_type", model::GgufOwnedValue::i32s(v->types));
  w.set_u32("tokenizer.ggml.bos_token_id", 1);
  w.set_u32("tokenizer.ggml.eos_token_id", static_cast<uint32_t>(end_id));
  w.set_u32("tokenizer.ggml.unknown_token_id", 0);
  w.set_u32("tokenizer.ggml.padding_token_id", 2);
  w.set_bool("tokenizer.ggml.add_bos_token", true);
  w.set_bool("tokenizer.ggml.add_eos_token", false);
  w.set_bool("tokenizer.ggml.add_space_prefix", false);
  return w.serialize();
}

const tok::Tokenizer& bundled_gguf_tokenizer() {
  static std::vector<uint8_t> bytes = bundled_vocab_gguf();
  static std::unique_ptr<tok::Tokenizer> t = [] {
    auto f = model::GgufFile::from_memory({bytes.data(), bytes.size()});
    if (!f.ok()) {
      ADD_FAILURE() << f.status().to_string();
      std::abort();
    }
    auto r = tok::Tokenizer::from_gguf(**f);
    if (!r.ok()) {
      ADD_FAILURE() << r.status().to_string();
      std::abort();
    }
    return std::move(r).value();
  }();
  return *t;
}

namespace {

void append_utf8(std::string& s, uint32_t cp) {
  if (cp < 0x80) {
    s += static_cast<char>(cp);
  } else if (cp < 0x800) {
    s += static_cast<char>(0xC0 | (cp >> 6));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    s += static_cast<char>(0xE0 | (cp >> 12));
    s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    s += static_cast<char>(0xF0 | (cp >> 18));
    s += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

}  // namespace

std::vector<std::string> sample_texts(int n) {
  std::vector<std::string> out = {
      "Hello, world!",
      "What is a radix tree?",
      "Prefix caching reuses the KV cache of a shared prompt prefix.",
      " leading space",
      "trailing space ",
      "  two  spaces  between  ",
      "\ttabs\tand\nnewlines\n\n",
      "\r\n windows line\r\n",
      "numbers 1234567890 3.14159 -42 1e-5",
      "punctuation: !\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~",
      "na\xC3\xAFve caf\xC3\xA9 \xE2\x80\x94 r\xC3\xA9sum\xC3\xA9",
      "\xE6\x9D\xB1\xE4\xBA\xAC \xE5\xA4\xA7\xE9\x98\xAA",                 // 東京 大阪
      "\xCE\x95\xCE\xBB\xCE\xBB\xCE\xB7\xCE\xBD\xCE\xB9\xCE\xBA\xCE\xAC",  // Ελληνικά
      "emoji \xF0\x9F\x99\x82 "
      "\xF0\x9F\x91\xA9\xE2\x80\x8D\xF0\x9F\x91\xA9\xE2\x80\x8D\xF0\x9F\x91\xA7",
      "flag \xF0\x9F\x8F\xB3\xEF\xB8\x8F\xE2\x80\x8D\xF0\x9F\x8C\x88 done",
      "<|system|>\nYou are RadixChat.<|end|>\n<|user|>\nHi there<|end|>\n<|assistant|>\n",
      "<|user|>\nWhat is a KV cache?<|end|>\n<|assistant|>\nIt stores keys and values.<|end|>\n",
      "almost markers: <|user| <|end <| |> <s > </ s>",
      "a",
      " ",
      "\n",
  };
  static const char* const kWords[] = {"the",
                                       "cache",
                                       "radix",
                                       "tree",
                                       "prefix",
                                       "token",
                                       "model",
                                       "prompt",
                                       "evict",
                                       "node",
                                       "page",
                                       "memory",
                                       "KV",
                                       "attention",
                                       "RadixChat",
                                       "Hello",
                                       "is",
                                       "a",
                                       "of",
                                       "and",
                                       "\xC3\xBC"
                                       "ber",
                                       "stra\xC3\x9F"
                                       "e",
                                       "\xE2\x82\xAC"
                                       "5",
                                       "x86",
                                       "GPU",
                                       "don't"};
  static const char* const kSeps[] = {" ", " ", " ", "  ", ", ", ". ", "\n", "\t", "", "? "};
  std::mt19937 rng(1234);
  while (static_cast<int>(out.size()) < n) {
    std::string s;
    const int kind = static_cast<int>(out.size() % 3);
    if (kind < 2) {  // word salad
      const int len = 1 + static_cast<int>(rng() % 40);
      for (int i = 0; i < len; ++i) {
        s += kWords[rng() % std::size(kWords)];
        s += kSeps[rng() % std::size(kSeps)];
      }
    } else {  // random code points, weighted to ASCII
      const int len = 1 + static_cast<int>(rng() % 30);
      for (int i = 0; i < len; ++i) {
        uint32_t cp;
        switch (rng() % 6) {
          case 0:
          case 1:
          case 2:
            cp = 0x20 + rng() % 0x5F;
            break;
          case 3:
            cp = 0xA0 + rng() % 0x1E0;
            break;
          case 4:
            cp = 0x4E00 + rng() % 0x5000;
            break;
          default:
            cp = 0x1F300 + rng() % 0x300;
            break;
        }
        append_utf8(s, cp);
      }
    }
    out.push_back(s);
  }
  out.resize(n);
  return out;
}

std::vector<GoldenCase> golden_cases(const std::string& path) {
  std::ifstream in(path);
  nlohmann::json j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  std::vector<GoldenCase> out;
  if (j.is_discarded() || !j.contains("cases")) {
    ADD_FAILURE() << path << ": not the expected JSON";
    return out;
  }
  for (const auto& c : j["cases"]) {
    GoldenCase g;
    g.name = c.value("name", "");
    g.text = c.value("text", "");
    for (const auto& id : c["tokens"]) g.tokens.push_back(id.get<int32_t>());
    out.push_back(std::move(g));
  }
  return out;
}

}  // namespace rc::testing
