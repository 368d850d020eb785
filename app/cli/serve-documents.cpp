#include "serve-documents.h"

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

Result<DocumentSet> LibraryDocumentSource::resolve(const std::vector<std::string>& names,
                                                   const std::string& question) {
  std::lock_guard<std::mutex> lock(mu_);
  return document_set(*lib_, names, question);
}

}  // namespace rc::cli
