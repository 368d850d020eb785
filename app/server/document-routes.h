// Documents on the server (docs/architecture.md section 21): GET
// /v1/documents lists the library, and a chat request may name documents
// in an extension field, "documents": ["NAME", ...], that the engine lays
// out after the system prompt (radixchat/documents.h). The server holds no
// library itself: serve --library gives it a DocumentSource.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "api-error.h"
#include "radixchat/documents.h"
#include "radixchat/engine.h"

namespace rc::server {

struct ServerContext;

// The library behind the routes. Called from any HTTP worker thread: an
// implementation serialises its own access.
class DocumentSource {
 public:
  virtual ~DocumentSource() = default;
  // Every document in library order, as the JSON objects /v1/documents
  // lists (name, position, format, tokens, chunks, content_hash, added_at).
  virtual Result<nlohmann::json> list() = 0;
  // The texts of `names` and their chunks ranked for `question`; not_found
  // naming the first unknown name.
  virtual Result<DocumentSet> resolve(const std::vector<std::string>& names,
                                      const std::string& question) = 0;
};

// GET /v1/documents: {"object":"list","data":[...]}; 404 without a library.
void handle_documents(ServerContext& ctx, httplib::Response& res);

// Reads the request's "documents" field (absent: nothing to do) and puts
// the named documents into `g`'s messages (radixchat/documents.h), before
// the context fit counts them; `document_tokens` gets how many prompt
// tokens they took. 400 for a wrong type, an unknown name (the message
// names it) or no library on this server; `param` is "documents". Chat
// requests only: `endpoint_is_chat` false with the field is a 400.
std::optional<ApiError> attach_documents(ServerContext& ctx, std::string_view body,
                                         bool endpoint_is_chat, GenerateRequest& g,
                                         int& document_tokens);

}  // namespace rc::server
