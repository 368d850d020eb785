#include "document-options.h"

#include <filesystem>

#include "commands.h"
#include "engine-options.h"

namespace rc::cli {

nlohmann::json document_json(const library::DocumentInfo& d) {
  return {{"name", d.name},
          {"position", d.position},
          {"format", d.format},
          {"tokens", d.token_count},
          {"chunks", d.chunk_count},
          {"content_hash", d.content_hash},
          {"source_path", d.source_path},
          {"added_at_ms", d.added_at_ms},
          {"pinned", d.pinned}};
}

std::unique_ptr<library::Library> open_library(const std::string& path) {
  std::filesystem::path where = path;
  if (where.empty()) {
    auto def = library::default_library_path();
    if (!def.ok()) {
      fail(def.status().message());
      return nullptr;
    }
    where = def.value();
  }
  auto lib = library::Library::open(where);
  if (!lib.ok()) {
    fail(lib.status().message());
    return nullptr;
  }
  return std::move(lib.value());
}

std::unique_ptr<TokenCounterHandle> open_token_counter(const std::string& model) {
  EngineConfig cfg;
  cfg.model_path = model;
  cfg.kv_pool_tokens = 1024;  // only the tokenizer is used
  cfg.n_threads = 1;
  cfg.weight_copies = false;
  cfg.speculate = SpeculateSetting::off;
  auto engine = open_engine(cfg);
  if (!engine) return nullptr;
  auto handle = std::make_unique<TokenCounterHandle>();
  handle->engine = std::move(engine);
  handle->count = engine_counter(*handle->engine);
  return handle;
}

std::string document_note(const PlacedDocuments& placed, const RequestMetrics& m) {
  if (placed.layout.text.empty()) return "";
  return " | documents: " + std::to_string(placed.tokens) + " tokens, " +
         std::to_string(placed.cached(m.cached_tokens)) + " cached" +
         (placed.layout.retrieved ? ", retrieved chunks (the whole documents exceed the budget)"
                                  : "");
}

bool DocumentOptions::resolve(Engine& engine, std::unique_ptr<library::Library>& lib,
                              std::vector<std::string>& names) const {
  if (docs.empty()) return true;
  lib = open_library(library);
  if (!lib) return false;
  for (const std::string& doc : docs) {
    if (lib->get(doc).ok()) {
      names.push_back(doc);
      continue;
    }
    std::error_code ec;
    if (!std::filesystem::exists(doc, ec)) {
      fail("--doc " + doc + ": no document of that name in " + lib->path().string() +
           " and no such file");
      return false;
    }
    auto added = lib->add_file(doc, engine_counter(engine));
    if (!added.ok()) {
      fail(added.status().message());
      return false;
    }
    names.push_back(added->info.name);
  }
  return true;
}

}  // namespace rc::cli
