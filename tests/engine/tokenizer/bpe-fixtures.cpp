#include "bpe-fixtures.h"

#include <fstream>
#include <nlohmann/json.hpp>

#include "tokenizer/bpe-model.h"

namespace rc::testing {

std::string bpe_spelling(const std::string& raw) {
  std::string s;
  for (char c : raw) s += tok::bpe_byte_char(static_cast<uint8_t>(c));
  return s;
}

int32_t BpeVocab::add(const std::string& text, int32_t type, bool raw) {
  tokens.push_back(raw ? text : bpe_spelling(text));
  if (!types.empty() || type != 1) {
    types.resize(tokens.size() - 1, 1);
    types.push_back(type);
  }
  return static_cast<int32_t>(tokens.size() - 1);
}

int32_t BpeVocab::merge(const std::string& a, const std::string& b) {
  merges.push_back(bpe_spelling(a) + " " + bpe_spelling(b));
  const std::string joined = bpe_spelling(a + b);
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (tokens[i] == joined) return static_cast<int32_t>(i);
  }
  return add(a + b);
}

BpeVocab byte_vocab(const std::vector<std::pair<std::string, std::string>>& merges,
                    const std::string& pre) {
  BpeVocab v;
  v.pre = pre;
  for (int b = 0; b < 256; ++b) v.add(std::string(1, static_cast<char>(b)));
  for (const auto& [a, b] : merges) v.merge(a, b);
  return v;
}

std::vector<uint8_t> bpe_vocab_gguf(const BpeVocab& v) {
  model::GgufWriter w;
  w.set_string("general.architecture", "llama");
  w.set_string("tokenizer.ggml.model", "gpt2");
  if (!v.pre.empty()) w.set_string("tokenizer.ggml.pre", v.pre);
  w.set("tokenizer.ggml.tokens", model::GgufOwnedValue::strings(v.tokens));
  if (!v.types.empty()) {
    std::vector<int32_t> t = v.types;
    t.resize(v.tokens.size(), 1);
    w.set("tokenizer.ggml.token_type", model::GgufOwnedValue::i32s(t));
  }
  if (v.with_merges) w.set("tokenizer.ggml.merges", model::GgufOwnedValue::strings(v.merges));
  const std::pair<const char*, int64_t> ids[] = {{"tokenizer.ggml.bos_token_id", v.bos},
                                                 {"tokenizer.ggml.eos_token_id", v.eos},
                                                 {"tokenizer.ggml.eot_token_id", v.eot},
                                                 {"tokenizer.ggml.padding_token_id", v.pad}};
  for (const auto& [key, id] : ids) {
    if (id >= 0) w.set_u32(key, static_cast<uint32_t>(id));
  }
  if (v.add_bos) w.set_bool("tokenizer.ggml.add_bos_token", *v.add_bos);
  return w.serialize();
}

LoadedBpe load_bpe(const BpeVocab& v) {
  LoadedBpe l;
  l.bytes = bpe_vocab_gguf(v);
  auto f = model::GgufFile::from_memory({l.bytes.data(), l.bytes.size()});
  if (!f.ok()) {
    l.tok = f.status();
    return l;
  }
  l.file = std::move(f).value();
  l.tok = tok::Tokenizer::from_gguf(*l.file);
  return l;
}

std::optional<Oracle> read_oracle(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  const nlohmann::json j = nlohmann::json::parse(in);
  Oracle o;
  o.name = j.at("name").get<std::string>();
  o.vocab.tokens = j.at("tokens").get<std::vector<std::string>>();
  o.vocab.types = j.at("token_type").get<std::vector<int32_t>>();
  o.vocab.merges = j.at("merges").get<std::vector<std::string>>();
  o.vocab.pre = j.at("pre").get<std::string>();
  o.vocab.bos = j.at("bos").get<int64_t>();
  o.vocab.eos = j.at("eos").get<int64_t>();
  o.vocab.eot = j.at("eot").get<int64_t>();
  o.vocab.pad = j.at("pad").get<int64_t>();
  o.vocab.add_bos = j.at("add_bos").get<bool>();
  for (const auto& c : j.at("cases")) {
    o.cases.push_back({c.at("text").get<std::string>(), c.at("special").get<std::vector<int32_t>>(),
                       c.at("plain").get<std::vector<int32_t>>()});
  }
  return o;
}

}  // namespace rc::testing
