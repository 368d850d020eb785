// serve --library: the document library behind the server's document
// routes (app/server/document-routes.h). One Library connection, used by
// one HTTP worker at a time.
#pragma once

#include <memory>
#include <mutex>

#include "document-routes.h"
#include "library/library.h"

namespace rc::cli {

class LibraryDocumentSource final : public server::DocumentSource {
 public:
  explicit LibraryDocumentSource(std::unique_ptr<library::Library> lib) : lib_(std::move(lib)) {}
  Result<nlohmann::json> list() override;
  Result<DocumentSet> resolve(const std::vector<std::string>& names,
                              const std::string& question) override;
  // Warms and pins each document kept warm (docs pin), alone, as a request
  // naming only it with no system prompt of its own is laid out
  // (Engine::warmup; docs/architecture.md section 21), and says so on
  // stderr. Blocks until they are cached: call before serving.
  Status warm_kept(Engine& engine);

 private:
  std::mutex mu_;
  std::unique_ptr<library::Library> lib_;
};

}  // namespace rc::cli
