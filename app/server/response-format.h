// OpenAI's `response_format` -> the engine's ResponseFormat.
//
// Accepted as OpenAI documents it: {"type": "text"}, {"type":
// "json_object"}, and {"type": "json_schema", "json_schema": {"name",
// "schema", "strict", "description"}} (name: 1-64 of a-z A-Z 0-9 _ -;
// schema: an object; strict: a boolean; the output is held to the schema
// whether strict is true or not). The schema is compiled here, so a schema
// the engine cannot honour (an unsupported keyword, a bad $ref, bad JSON
// Schema) is a 400 naming the problem and `response_format` as the param.
#pragma once

#include <optional>
#include <string_view>

#include <nlohmann/json.hpp>

#include "api-error.h"
#include "radixchat/structured-output.h"

namespace rc::server {

// Reads obj["response_format"] (absent or null: text). `body` is the
// request's JSON text, from which the schema is taken again keeping its
// keys in the order the client wrote them (properties are generated in
// that order; `obj` has them sorted). The schema compiles under `limits`
// (radixchat/structured-output.h): past one, a 400 naming it; cancelled
// (the client left, the server is stopping), a 503. Never throws.
std::optional<ApiError> read_response_format(const nlohmann::json& obj, std::string_view body,
                                             ResponseFormat& out, const CompileLimits& limits = {});

}  // namespace rc::server
