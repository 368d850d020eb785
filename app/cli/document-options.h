// What the commands that use the document library share: opening it
// (--library, default beside the history), a token counter from a model's
// tokenizer, and --doc NAME|FILE for chat and generate, turned into the
// engine's DocumentSet (radixchat/documents.h) for each question.
#pragma once

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <memory>
#include <string>
#include <vector>

#include "library/document-prompt.h"
#include "library/library.h"
#include "radixchat/documents.h"
#include "radixchat/engine.h"

namespace rc::cli {

// {"name", "position", "format", "tokens", "chunks", "content_hash",
// "source_path", "added_at_ms", "pinned"}: one document as docs list --json and GET
// /v1/documents show it.
nlohmann::json document_json(const library::DocumentInfo& d);

// Opens `path` ("" = the default library), or prints one line and returns
// nullptr.
std::unique_ptr<library::Library> open_library(const std::string& path);

// A tokenizer-backed counter: the engine is kept alive for it. nullptr
// (after one line on stderr) when the model does not load.
struct TokenCounterHandle {
  std::unique_ptr<Engine> engine;
  library::TokenCounter count;
};
std::unique_ptr<TokenCounterHandle> open_token_counter(const std::string& model);

// " | documents: 812 tokens, 790 cached" (", retrieved chunks" when over
// the budget) for a request with documents; "" otherwise.
std::string document_note(const PlacedDocuments& placed, const RequestMetrics& m);

using library::document_set;
using library::engine_counter;

// --doc and --library on chat and generate.
struct DocumentOptions {
  std::vector<std::string> docs;
  std::string library;

  void add_to(CLI::App& app) {
    app.add_option("--doc", docs,
                   "a document to answer from: a name in the library, or a file (added to the "
                   "library first); repeatable");
    app.add_option("--library", library,
                   "document library file (default: library.db beside the chat history)");
  }

  // Opens the library and resolves --doc to names: a file that is not a
  // name in the library is added to it (with `engine`'s tokenizer). One
  // line on stderr and false on failure.
  bool resolve(Engine& engine, std::unique_ptr<library::Library>& lib,
               std::vector<std::string>& names) const;
};

}  // namespace rc::cli
