#include "response-format.h"

namespace rc::server {

namespace {

using nlohmann::json;

ApiError bad(const std::string& param, const std::string& message) {
  return invalid_request(message, param, "invalid_value");
}

bool valid_name(const std::string& name) {
  if (name.empty() || name.size() > 64) return false;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

// The schema as the client wrote it, key order kept (`fallback`, sorted,
// when the body does not lead to it that way).
std::string schema_in_order(std::string_view body, const json& fallback) {
  const nlohmann::ordered_json doc = nlohmann::ordered_json::parse(body, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) return fallback.dump();
  const auto rf = doc.find("response_format");
  if (rf == doc.end() || !rf->is_object()) return fallback.dump();
  const auto js = rf->find("json_schema");
  if (js == rf->end() || !js->is_object()) return fallback.dump();
  const auto schema = js->find("schema");
  if (schema == js->end()) return fallback.dump();
  return schema->dump();
}

}  // namespace

std::optional<ApiError> read_response_format(const json& obj, std::string_view body,
                                             ResponseFormat& out, const CompileLimits& limits) {
  out = ResponseFormat{};
  auto it = obj.find("response_format");
  if (it == obj.end() || it->is_null()) return {};
  const json& rf = *it;
  if (!rf.is_object()) return bad("response_format", "'response_format' must be an object.");
  auto type = rf.find("type");
  if (type == rf.end() || !type->is_string()) {
    return bad("response_format.type",
               "'response_format.type' must be one of 'text', 'json_object', 'json_schema'.");
  }
  const std::string t = type->get<std::string>();
  if (t == "text") return {};
  if (t == "json_object") {
    out.type = OutputFormat::json_object;
    return {};
  }
  if (t != "json_schema") {
    return bad("response_format.type", "Invalid value '" + t +
                                           "' for 'response_format.type': expected 'text', "
                                           "'json_object' or 'json_schema'.");
  }
  auto js = rf.find("json_schema");
  if (js == rf.end() || !js->is_object()) {
    return bad("response_format.json_schema",
               "'response_format.json_schema' is required (an object with name and schema).");
  }
  auto name = js->find("name");
  if (name == js->end() || !name->is_string() || !valid_name(name->get<std::string>())) {
    return bad("response_format.json_schema.name",
               "'response_format.json_schema.name' must be 1-64 characters of a-z, A-Z, 0-9, _ "
               "and -.");
  }
  if (auto strict = js->find("strict");
      strict != js->end() && !strict->is_null() && !strict->is_boolean()) {
    return bad("response_format.json_schema.strict",
               "'response_format.json_schema.strict' must be a boolean.");
  }
  if (auto d = js->find("description"); d != js->end() && !d->is_null() && !d->is_string()) {
    return bad("response_format.json_schema.description",
               "'response_format.json_schema.description' must be a string.");
  }
  auto schema = js->find("schema");
  if (schema == js->end() || schema->is_null()) {
    out.type = OutputFormat::json_schema;  // no schema: any JSON value
    out.schema = "{}";
    return {};
  }
  if (!schema->is_object() && !schema->is_boolean()) {
    return bad("response_format.json_schema.schema",
               "'response_format.json_schema.schema' must be a JSON Schema object.");
  }
  out.type = OutputFormat::json_schema;
  out.schema = schema_in_order(body, *schema);
  Status st = check_response_format(out, limits);
  if (st.code() == StatusCode::cancelled) {
    return unavailable("the request was cancelled while its response_format compiled");
  }
  if (!st.ok()) {
    return bad("response_format", "Invalid schema for response_format '" +
                                      name->get<std::string>() + "': " + st.message());
  }
  return {};
}

}  // namespace rc::server
