// OpenAI-style error values. Every 4xx/5xx body the server writes has the
// shape {"error":{"message","type","param","code"}}, so OpenAI client
// libraries raise their usual typed exceptions (BadRequestError,
// AuthenticationError, NotFoundError, ...) instead of failing to parse.
//
// Errors are values here as in the engine: request parsing returns an
// ApiResult, handlers turn an ApiError into a response; nothing throws.
#pragma once

#include <string>
#include <utility>
#include <variant>

#include "radixchat/status.h"

namespace rc::server {

struct ApiError {
  int http_status = 400;
  std::string message;
  std::string type = "invalid_request_error";  // or server_error, authentication_error ...
  std::string param;                           // empty -> null
  std::string code;                            // empty -> null

  // The response body, one JSON object.
  std::string body() const;
};

// 400 invalid_request_error; `param` names the offending field.
ApiError invalid_request(std::string message, std::string param = {}, std::string code = {});
// 401 with the body OpenAI sends for a bad key.
ApiError invalid_api_key();
// 404 for a model name this server does not serve.
ApiError model_not_found(const std::string& requested, const std::string& served);
// 503: the server is shutting down or cannot take more work right now.
ApiError unavailable(std::string message);

// An engine Status (from Engine::submit, or a failed generation) as an
// HTTP error: bad input and prompts over the context or the pool are the
// client's (400), anything else is the server's (500).
ApiError error_from_status(const Status& status);

template <typename T>
class [[nodiscard]] ApiResult {
 public:
  ApiResult(T value) : v_(std::move(value)) {}
  ApiResult(ApiError error) : v_(std::move(error)) {}
  bool ok() const { return std::holds_alternative<T>(v_); }
  const ApiError& error() const { return std::get<ApiError>(v_); }
  T& value() { return std::get<T>(v_); }

 private:
  std::variant<T, ApiError> v_;
};

}  // namespace rc::server
