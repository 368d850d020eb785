#include "api-error.h"

#include <nlohmann/json.hpp>

namespace rc::server {

namespace {

nlohmann::json null_if_empty(const std::string& s) {
  return s.empty() ? nlohmann::json(nullptr) : nlohmann::json(s);
}

}  // namespace

std::string ApiError::body() const {
  nlohmann::json j = {{"error",
                       {{"message", message},
                        {"type", type},
                        {"param", null_if_empty(param)},
                        {"code", null_if_empty(code)}}}};
  // Messages may quote client input that is not valid UTF-8.
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

ApiError invalid_request(std::string message, std::string param, std::string code) {
  ApiError e;
  e.http_status = 400;
  e.message = std::move(message);
  e.param = std::move(param);
  e.code = std::move(code);
  return e;
}

ApiError invalid_api_key() {
  ApiError e;
  e.http_status = 401;
  e.message =
      "Incorrect or missing API key. This server was started with --api-key; send the header "
      "'Authorization: Bearer <key>'.";
  e.code = "invalid_api_key";
  return e;
}

ApiError model_not_found(const std::string& requested, const std::string& served) {
  ApiError e;
  e.http_status = 404;
  e.message = "The model '" + requested + "' does not exist on this server; it serves '" + served +
              "' (see GET /v1/models).";
  e.param = "model";
  e.code = "model_not_found";
  return e;
}

ApiError unavailable(std::string message) {
  ApiError e;
  e.http_status = 503;
  e.type = "server_error";
  e.message = std::move(message);
  return e;
}

ApiError error_from_status(const Status& status) {
  switch (status.code()) {
    case StatusCode::invalid_argument:
      return invalid_request(status.message());
    case StatusCode::too_long:
      return invalid_request(status.message(), "messages", "context_length_exceeded");
    case StatusCode::no_pages:
      return invalid_request(status.message(), {}, "kv_pool_too_small");
    case StatusCode::cancelled:
      return unavailable(status.message());
    default: {
      ApiError e;
      e.http_status = 500;
      e.type = "server_error";
      e.message = status.to_string();
      return e;
    }
  }
}

}  // namespace rc::server
