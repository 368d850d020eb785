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

}  // namespace rc::library
