#include "library/document-prompt.h"

namespace rc::library {

TokenCounter engine_counter(const Engine& engine) {
  return [&engine](std::string_view text) {
    auto ids = engine.tokenize(std::string(text), false);
    return ids.ok() ? static_cast<int>(ids->size()) : static_cast<int>(text.size());
  };
}

Result<DocumentSet> document_set(const Library& lib, const std::vector<std::string>& names,
                                 const std::string& question, int max_chunks) {
  DocumentSet set;
  set.max_chunks = max_chunks;
  for (const std::string& name : names) {
    auto doc = lib.get(name);
    if (!doc.ok()) return doc.status();
    // Counted by the layout with the engine's tokenizer: the stored count may
    // come from another model's.
    set.documents.push_back({doc->info.name, doc->info.position, std::move(doc->text)});
  }
  if (set.documents.empty()) return set;
  auto hits = lib.search(question, max_chunks > 0 ? max_chunks : kRetrievalCandidates, names);
  if (!hits.ok()) return hits.status();
  for (Chunk& c : hits.value())
    set.ranked_chunks.push_back({c.document, c.position, std::move(c.text)});
  return set;
}

Result<DocumentPrefix> document_prefix(const Engine& engine, const Library& lib,
                                       const std::string& system,
                                       const std::vector<std::string>& names) {
  auto set = document_set(lib, names, "");
  if (!set.ok()) return set.status();
  // An empty system message gets the layout alone: what place_documents
  // makes of a request without one.
  GenerateRequest req;
  req.messages = {{"system", system}};
  auto placed = place_documents(engine, req, set.value());
  if (!placed.ok()) return placed.status();
  return DocumentPrefix{names, std::move(req.messages), placed.value()};
}

Result<std::vector<DocumentPrefix>> kept_warm_prefixes(const Engine& engine, const Library& lib,
                                                       const std::string& system,
                                                       std::vector<std::string>* skipped) {
  auto docs = lib.list();
  if (!docs.ok()) return docs.status();
  std::vector<DocumentPrefix> out;
  for (const DocumentInfo& d : docs.value()) {
    if (!d.pinned) continue;
    auto prefix = document_prefix(engine, lib, system, {d.name});
    if (!prefix.ok()) return prefix.status();
    if (prefix->placed.layout.retrieved) {
      if (skipped) skipped->push_back(d.name);
      continue;
    }
    out.push_back(std::move(prefix.value()));
  }
  return out;
}

}  // namespace rc::library
