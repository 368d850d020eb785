// `radixchat-cli docs add FILE... | list [--json] | rm NAME | pin NAME |
// unpin NAME | search QUERY [--json]` with `--library FILE`: the document
// library (app/library/library.h) from the terminal. A bad file is one line
// naming it, exit status 1, and the library as it was. pin and unpin only
// mark a document kept warm: the app and `serve --library` pin its KV when
// they start (docs/architecture.md section 21).
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "commands.h"
#include "document-options.h"
#include "engine-options.h"
#include "library/extract.h"
#include "radixchat/tier-clear.h"

namespace rc::cli {
namespace {

struct DocsOptions {
  std::string library;
  std::string model;
  EngineOptions purge;  // rm: the tiers to purge (only their flags are registered)
  bool json = false;
  std::vector<std::string> files;
  std::string name;
  std::string query;
};

int run_add(const DocsOptions& o, library::Library& lib) {
  // Every file is checked before the model loads: a bad one fails at once.
  for (const std::string& f : o.files) {
    if (auto text = library::extract_file(f); !text.ok()) return fail(text.status().message());
  }
  auto counter = open_token_counter(o.model);
  if (!counter) return 1;
  std::vector<std::filesystem::path> files(o.files.begin(), o.files.end());
  auto added = lib.add_files(files, counter->count);
  if (!added.ok()) return fail(added.status().message());
  for (const library::Added& a : added.value()) {
    if (a.already_present) {
      std::printf("%s: already in the library (same text)\n", a.info.name.c_str());
    } else {
      std::printf("added %s: %s, %d tokens in %d chunks\n", a.info.name.c_str(),
                  a.info.format.c_str(), a.info.token_count, a.info.chunk_count);
    }
  }
  return 0;
}

int run_list(const DocsOptions& o, const library::Library& lib) {
  auto docs = lib.list();
  if (!docs.ok()) return fail(docs.status());
  if (o.json) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& d : docs.value()) out.push_back(document_json(d));
    std::printf("%s\n", out.dump().c_str());
    return 0;
  }
  if (docs->empty()) std::fprintf(stderr, "the library %s is empty\n", lib.path().c_str());
  for (const auto& d : docs.value()) {
    std::printf("%s\t%s\t%d tokens\t%d chunks\t%s%s\n", d.name.c_str(), d.format.c_str(),
                d.token_count, d.chunk_count, d.source_path.c_str(), d.pinned ? "\tkept warm" : "");
  }
  return 0;
}

// The engine configuration that purges a removed document's KV: the
// model's tokenizer finds the document in what the tiers hold
// (Engine::forget_document); a small pool, as nothing is computed. The
// default disk folder is purged when it exists, as the app writes there.
// nullopt when there is no tier to purge.
std::optional<EngineConfig> purge_config(const DocsOptions& o) {
  EngineConfig config = o.purge.config;
  if (config.kv_disk.empty()) {
    Result<std::string> folder = disk_tier_folder("default");
    std::error_code ec;
    if (folder.ok() && std::filesystem::exists(folder.value(), ec)) config.kv_disk = "default";
  }
  if (config.kv_disk.empty() && config.kv_redis.empty()) return std::nullopt;
  config.model_path = o.model;
  config.n_threads = 1;
  config.kv_pool_tokens = 1024;
  return config;
}

// Purges before the document leaves the library (Library::remove's
// before_remove), so a failed purge keeps it and can be run again.
int run_rm(const DocsOptions& o, library::Library& lib) {
  Result<library::Document> doc = lib.get(o.name);
  if (!doc.ok()) return fail(doc.status().message());
  std::string purged = "no cache tier to purge";
  Status s = lib.remove(o.name, [&](const library::DocumentInfo&) -> Status {
    const std::optional<EngineConfig> config = purge_config(o);
    if (!config) return Status();
    std::unique_ptr<Engine> engine = open_engine(*config);
    if (!engine) return Status(StatusCode::internal, "its KV could not be purged");
    Result<ForgetResult> r = engine->forget_document(doc.value().text);
    if (!r.ok()) return r.status();
    purged = "purged " + std::to_string(r.value().tier_blocks) + " KV blocks from the cache tiers";
    return Status();
  });
  if (!s.ok()) {
    return fail(o.name + " stays in the library: " + s.message() +
                " (an app or server using the same cache tier must be quit first)");
  }
  std::printf("removed %s; %s\n", o.name.c_str(), purged.c_str());
  return 0;
}

int run_pin(const DocsOptions& o, library::Library& lib, bool pinned) {
  if (Status s = lib.set_pinned(o.name, pinned); !s.ok()) return fail(s.message());
  std::printf(pinned ? "%s is kept warm: the app and serve --library pin its KV when they start\n"
                     : "%s is no longer kept warm\n",
              o.name.c_str());
  return 0;
}

int run_search(const DocsOptions& o, const library::Library& lib) {
  auto hits = lib.search(o.query, 5);
  if (!hits.ok()) return fail(hits.status());
  if (o.json) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& c : hits.value()) {
      out.push_back({{"document", c.document},
                     {"chunk", c.position},
                     {"tokens", c.token_count},
                     {"score", c.score},
                     {"text", c.text}});
    }
    std::printf("%s\n", out.dump().c_str());
    return 0;
  }
  for (const auto& c : hits.value()) {
    std::string line = c.text.substr(0, 120);
    for (char& ch : line)
      if (ch == '\n' || ch == '\t') ch = ' ';
    std::printf("%s #%d (score %.3g): %s%s\n", c.document.c_str(), c.position, c.score,
                line.c_str(), c.text.size() > 120 ? "..." : "");
  }
  return 0;
}

}  // namespace

Command add_docs_command(CLI::App& root) {
  auto o = std::make_shared<DocsOptions>();
  auto* app = root.add_subcommand("docs", "The document library: add, list, remove, search");
  app->require_subcommand(1);
  app->add_option("--library", o->library,
                  "library file (default: library.db beside the chat history)");
  app->add_option("--model", o->model,
                  "model whose tokenizer counts the tokens of added files, and whose KV of a "
                  "removed document is purged from the cache tiers (default: the bundled model)");
  app->add_flag("--json", o->json, "list and search: print JSON");
  // rm: the tiers its purge reaches (the default disk folder without them).
  o->purge.add_stored_tier_flags_to(*app);
  auto* add = app->add_subcommand("add", "Add files: text, Markdown, source code, HTML, PDF");
  add->add_option("FILE", o->files, "files to add")->required();
  auto* list = app->add_subcommand("list", "List the documents in library order");
  auto* rm = app->add_subcommand("rm", "Remove a document by name");
  rm->add_option("NAME", o->name, "the document's name (see docs list)")->required();
  auto* pin = app->add_subcommand("pin", "Keep a document warm: its KV stays in the cache");
  pin->add_option("NAME", o->name, "the document's name (see docs list)")->required();
  auto* unpin = app->add_subcommand("unpin", "Stop keeping a document warm");
  unpin->add_option("NAME", o->name, "the document's name (see docs list)")->required();
  auto* search = app->add_subcommand("search", "The chunks that best match a query (BM25)");
  search->add_option("QUERY", o->query, "words to look for")->required();
  // The parent's options may also follow the subcommand's arguments.
  for (CLI::App* sub : {add, list, rm, pin, unpin, search}) sub->fallthrough();
  return {app, [o, add, list, rm, pin, unpin] {
            if (o->json && !list->parsed() &&
                (add->parsed() || rm->parsed() || pin->parsed() || unpin->parsed())) {
              return fail("--json applies to docs list and docs search");
            }
            auto lib = open_library(o->library);
            if (!lib) return 1;
            if (add->parsed()) return run_add(*o, *lib);
            if (list->parsed()) return run_list(*o, *lib);
            if (rm->parsed()) return run_rm(*o, *lib);
            if (pin->parsed() || unpin->parsed()) return run_pin(*o, *lib, pin->parsed());
            return run_search(*o, *lib);
          }};
}

}  // namespace rc::cli
