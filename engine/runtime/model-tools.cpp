#include "radixchat/model-tools.h"

#include <cstdio>
#include <filesystem>

#include "model/default-model.h"
#include "model/gguf-reader.h"
#include "model/model-config.h"
#include "model/model-file.h"
#include "model/model-weights.h"
#include "tokenizer/chat-template.h"
#include "tokenizer/tokenizer.h"

namespace rc {

std::string bundled_model_path() { return model::default_model_path(); }

Result<std::vector<int32_t>> tokenize_with_model(const std::string& model_path,
                                                 std::string_view text, bool add_bos,
                                                 bool parse_special) {
  std::string path = model_path;
  if (path.empty()) {
    path = model::default_model_path();
    const std::string sidecar = model::sidecar_tokenizer_path(path);
    std::error_code ec;
    if (!std::filesystem::exists(path, ec) && std::filesystem::exists(sidecar, ec)) path = sidecar;
  }
  Result<std::unique_ptr<tok::Tokenizer>> t = tok::Tokenizer::load(path);
  if (!t.ok()) return t.status();
  return (*t)->encode(text, add_bos, parse_special);
}

Status check_model_file(const std::string& model_path) {
  const std::string path = model_path.empty() ? model::default_model_path() : model_path;
  Result<std::unique_ptr<model::ModelFile>> model = model::load_model(path);
  if (!model.ok()) return model.status();
  Result<std::unique_ptr<tok::Tokenizer>> tokenizer = tok::Tokenizer::load(path);
  if (!tokenizer.ok()) return tokenizer.status();
  Result<tok::ChatTemplate> tmpl =
      tok::ChatTemplate::for_model(model.value()->file.get(), tokenizer.value().get(), "");
  return tmpl.ok() ? Status() : tmpl.status();
}

namespace {

std::string fmt(const char* f, auto... args) {
  char buf[512];
  std::snprintf(buf, sizeof buf, f, args...);
  return buf;
}

}  // namespace

Result<std::string> describe_gguf(const std::string& path) {
  model::GgufOpenOptions opt;
  opt.allow_unsupported_types = true;  // describe any file, say below what cannot run
  Result<std::unique_ptr<model::GgufFile>> opened = model::GgufFile::open(path, opt);
  if (!opened.ok()) return opened.status();
  const model::GgufFile& f = **opened;
  std::string out;
  out += fmt("file: %s (%llu bytes, GGUF v%u, alignment %u, data at offset %llu)\n", path.c_str(),
             static_cast<unsigned long long>(f.file_size()), f.version(), f.alignment(),
             static_cast<unsigned long long>(f.data_offset()));

  Result<model::ModelConfig> cfg = model::parse_model_config(f);
  if (cfg.ok()) {
    Result<model::ModelWeights> w = model::bind_model_weights(f, *cfg);
    if (w.ok()) cfg->tied_output = w->tied_output;
    out += model::describe(*cfg);
    out += w.ok() ? fmt("weights: %.1f MiB, loadable\n", w->total_bytes / 1048576.0)
                  : "weights: cannot load: " + w.status().message() + "\n";
  } else {
    out += "model: cannot load: " + cfg.status().message() + "\n";
  }

  Result<std::unique_ptr<tok::Tokenizer>> tok = tok::Tokenizer::from_gguf(f);
  if (tok.ok()) {
    const tok::Tokenizer& t = **tok;
    auto named = [&t](int32_t id) {
      return id < 0 ? std::string("none")
                    : std::to_string(id) + " '" + std::string(t.piece(id)) + "'";
    };
    out += "tokenizer: sentencepiece, " + std::to_string(t.n_vocab()) + " tokens, bos " +
           named(t.bos()) + ", eos " + named(t.eos()) + ", unk " + named(t.unk()) +
           (t.add_bos_default() ? ", adds BOS" : "") + "\n";
  } else {
    out += "tokenizer: " + tok.status().message() + "\n";
  }
  Result<tok::ChatTemplate> tmpl =
      tok::ChatTemplate::for_model(&f, tok.ok() ? tok->get() : nullptr);
  if (tmpl.ok()) {
    out += "chat template: " + tmpl->detail() + "\n";
    if (!tmpl->notice().empty()) out += "chat template note: " + tmpl->notice() + "\n";
  }

  out += "metadata (" + std::to_string(f.metadata().size()) + " keys):\n";
  for (const auto& [key, value] : f.metadata()) {
    out += "  " + std::string(key) + " = " + model::gguf_value_summary(value) + "\n";
  }
  uint64_t total = 0;
  for (const model::GgufTensorInfo& t : f.tensors()) total += t.n_bytes;
  out += fmt("tensors (%zu, %.1f MiB):\n", f.tensors().size(), total / 1048576.0);
  for (const model::GgufTensorInfo& t : f.tensors()) {
    const std::string type =
        model::ggml_type_name(t.type_id) + (t.supported ? "" : " (unsupported)");
    out += fmt("  %-32s %-18s %-24s offset %llu\n", std::string(t.name).c_str(), type.c_str(),
               t.shape_string().c_str(), static_cast<unsigned long long>(t.offset));
  }
  return out;
}

}  // namespace rc
