#include "serve-documents.h"

#include <cstdio>

#include "document-options.h"

namespace rc::cli {

Result<nlohmann::json> LibraryDocumentSource::list() {
  std::lock_guard<std::mutex> lock(mu_);
  auto docs = lib_->list();
  if (!docs.ok()) return docs.status();
  nlohmann::json out = nlohmann::json::array();
  for (const auto& d : docs.value()) out.push_back(document_json(d));
  return out;
}

Status LibraryDocumentSource::warm_kept(Engine& engine) {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> skipped;
  auto prefixes = library::kept_warm_prefixes(engine, *lib_, "", &skipped);
  if (!prefixes.ok()) return prefixes.status();
  for (const std::string& name : skipped) {
    std::fprintf(stderr,
                 "radixchat-cli: %s is kept warm but too large to place whole; not warmed\n",
                 name.c_str());
  }
  if (prefixes->empty()) return Status();
  std::vector<std::vector<ChatMessage>> prompts;
  std::string names;
  int tokens = 0;
  for (const library::DocumentPrefix& p : prefixes.value()) {
    prompts.push_back(p.messages);
    names += (names.empty() ? "" : ", ") + p.names.front();
    tokens += p.placed.tokens;
  }
  if (Status st = engine.warmup(prompts); !st.ok()) return st;
  std::fprintf(stderr, "radixchat-cli: kept warm (pinned): %s, %d tokens\n", names.c_str(), tokens);
  return Status();
}

Result<DocumentSet> LibraryDocumentSource::resolve(const std::vector<std::string>& names,
                                                   const std::string& question) {
  std::lock_guard<std::mutex> lock(mu_);
  return document_set(*lib_, names, question);
}

}  // namespace rc::cli
