#include "document-routes.h"

#include "http-util.h"
#include "server-context.h"

namespace rc::server {
namespace {

// Retrieval looks at the question and the turn before it: the last user
// message and the one before the last assistant reply.
std::string question_of(const GenerateRequest& g) {
  std::string q;
  int users = 0;
  for (auto it = g.messages.rbegin(); it != g.messages.rend() && users < 2; ++it) {
    if (it->role != "user") continue;
    q += (q.empty() ? "" : "\n") + it->content;
    ++users;
  }
  return q;
}

}  // namespace

void handle_documents(ServerContext& ctx, httplib::Response& res) {
  if (!ctx.options.documents) {
    ApiError e = invalid_request("this server has no document library (start it with --library)",
                                 {}, "no_library");
    e.http_status = 404;
    return write_error(res, e);
  }
  auto list = ctx.options.documents->list();
  if (!list.ok()) return write_error(res, error_from_status(list.status()));
  write_json(res, {{"object", "list"}, {"data", std::move(list.value())}});
}

std::optional<ApiError> attach_documents(ServerContext& ctx, std::string_view body,
                                         bool endpoint_is_chat, GenerateRequest& g,
                                         int& document_tokens) {
  // The body was validated as a JSON object by the request parser already.
  const nlohmann::json j = nlohmann::json::parse(body, nullptr, false);
  if (!j.is_object() || !j.contains("documents") || j["documents"].is_null()) return std::nullopt;
  const nlohmann::json& field = j["documents"];
  if (!endpoint_is_chat) {
    return invalid_request("documents are for /v1/chat/completions", "documents");
  }
  if (!field.is_array()) {
    return invalid_request("'documents' must be an array of document names", "documents");
  }
  std::vector<std::string> names;
  for (const auto& v : field) {
    if (!v.is_string()) {
      return invalid_request("'documents' must be an array of document names", "documents");
    }
    names.push_back(v.get<std::string>());
  }
  if (names.empty()) return std::nullopt;
  if (!ctx.options.documents) {
    return invalid_request("this server has no document library (start it with --library)",
                           "documents", "no_library");
  }
  auto set = ctx.options.documents->resolve(names, question_of(g));
  if (!set.ok()) {
    if (set.status().code() == StatusCode::not_found) {
      return invalid_request(set.status().message(), "documents", "document_not_found");
    }
    return error_from_status(set.status());
  }
  auto placed = place_documents(ctx.engine, g, set.value());
  if (!placed.ok()) return error_from_status(placed.status());
  document_tokens = placed->tokens;
  return std::nullopt;
}

}  // namespace rc::server
