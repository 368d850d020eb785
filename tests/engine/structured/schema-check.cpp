#include "schema-check.h"

#include <cmath>
#include <regex>

namespace rc::test {

namespace {

bool has_type(const Json& v, const std::string& t) {
  if (t == "object") return v.is_object();
  if (t == "array") return v.is_array();
  if (t == "string") return v.is_string();
  if (t == "number") return v.is_number();
  if (t == "integer") {
    return v.is_number_integer() || (v.is_number_float() && std::isfinite(v.get<double>()) &&
                                     v.get<double>() == std::floor(v.get<double>()));
  }
  if (t == "boolean") return v.is_boolean();
  if (t == "null") return v.is_null();
  return false;
}

bool days_ok(int y, int m, int d) {
  static const int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (m < 1 || m > 12 || d < 1) return false;
  const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  return d <= (m == 2 && leap ? 29 : kDays[m - 1]);
}

bool format_ok(const std::string& f, const std::string& s) {
  static const std::regex kDate(R"(^(\d{4})-(\d{2})-(\d{2})$)");
  static const std::regex kTime(
      R"(^([01]\d|2[0-3]):[0-5]\d:[0-5]\d(\.\d+)?(Z|[+-]([01]\d|2[0-3]):[0-5]\d)$)");
  static const std::regex kUuid(
      R"(^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$)");
  static const std::regex kEmail(
      R"(^[A-Za-z0-9_%+-]+(\.[A-Za-z0-9_%+-]+)*@([A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?\.)+[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?$)");
  std::smatch m;
  if (f == "date" || f == "date-time") {
    const std::string date = s.substr(0, 10);
    if (!std::regex_match(date, m, kDate)) return false;
    if (!days_ok(std::stoi(m[1]), std::stoi(m[2]), std::stoi(m[3]))) return false;
    if (f == "date") return s.size() == 10;
    return s.size() > 11 && s[10] == 'T' && std::regex_match(s.substr(11), kTime);
  }
  if (f == "time") return std::regex_match(s, kTime);
  if (f == "uuid") return std::regex_match(s, kUuid);
  if (f == "email") return s.size() < 320 && std::regex_match(s, kEmail);
  return false;
}

}  // namespace

std::string schema_violation(const Json& v, const Json& s, const Json& root,
                             const std::string& path) {
  if (s.is_boolean()) return s.get<bool>() ? "" : path + ": false schema";
  if (s.contains("$ref")) {
    const std::string ref = s["$ref"].get<std::string>();
    const Json& target = ref == "#" ? root : root.at(Json::json_pointer(ref.substr(1)));
    return schema_violation(v, target, root, path);
  }
  if (s.contains("anyOf")) {
    std::string why;
    for (const Json& alt : s["anyOf"]) {
      why = schema_violation(v, alt, root, path);
      if (why.empty()) return "";
    }
    return path + ": no anyOf branch (" + why + ")";
  }
  if (s.contains("type")) {
    bool ok = false;
    if (s["type"].is_string()) {
      ok = has_type(v, s["type"].get<std::string>());
    } else {
      for (const Json& t : s["type"]) ok = ok || has_type(v, t.get<std::string>());
    }
    if (!ok) return path + ": wrong type " + v.dump();
  }
  if (s.contains("const") && v != s["const"]) return path + ": not the const";
  if (s.contains("enum")) {
    bool found = false;
    for (const Json& e : s["enum"]) found = found || e == v;
    if (!found) return path + ": not in enum";
  }
  if (v.is_string() && s.contains("format") && !format_ok(s["format"], v.get<std::string>())) {
    return path + ": bad " + s["format"].get<std::string>() + " " + v.dump();
  }
  if (v.is_object()) {
    const Json props = s.value("properties", Json::object());
    for (const Json& r : s.value("required", Json::array())) {
      if (!v.contains(r.get<std::string>())) return path + ": missing " + r.dump();
    }
    for (const auto& [k, val] : v.items()) {
      std::string why;
      if (props.contains(k)) {
        why = schema_violation(val, props[k], root, path + "." + k);
      } else if (s.contains("additionalProperties")) {
        why = schema_violation(val, s["additionalProperties"], root, path + "." + k);
      }
      if (!why.empty()) return why;
    }
  }
  if (v.is_array()) {
    if (s.contains("minItems") && v.size() < s["minItems"].get<size_t>()) return path + ": few";
    if (s.contains("maxItems") && v.size() > s["maxItems"].get<size_t>()) return path + ": many";
    if (s.contains("items")) {
      for (size_t i = 0; i < v.size(); ++i) {
        std::string why =
            schema_violation(v[i], s["items"], root, path + "[" + std::to_string(i) + "]");
        if (!why.empty()) return why;
      }
    }
  }
  return "";
}

namespace {

struct Gen {
  std::mt19937_64& rng;
  bool free_strings = true;
  bool has_defs = false;

  int pick(int n) { return static_cast<int>(rng() % n); }

  Json scalar() {
    static const char* kFormats[] = {"date", "time", "date-time", "uuid", "email"};
    int kind = pick(9);
    if (!free_strings && (kind == 0 || kind == 8)) kind = 1;
    switch (kind) {
      case 0:
        return {{"type", "string"}};
      case 1:
        return {{"type", "string"}, {"format", kFormats[pick(5)]}};
      case 2:
        return {{"type", "integer"}};
      case 3:
        return {{"type", "number"}};
      case 4:
        return {{"type", "boolean"}};
      case 5:
        return {{"type", "null"}};
      case 6:
        return {{"enum", Json::array({"red", "green", "g", 1, 12, nullptr, "ré\"d"})}};
      case 7:
        return {{"const", pick(2) ? Json("fixed") : Json(3.5)}};
      default:
        return {{"type", Json::array({"string", "null"})}, {"description", "either"}};
    }
  }

  Json node(int depth) {
    if (depth <= 0) return scalar();
    switch (pick(8)) {
      case 0:
      case 1:
      case 2: {
        Json props = Json::object();
        Json required = Json::array();
        const int n = 1 + pick(4);
        static const char* kKeys[] = {"name", "names", "id", "value", "a", "n\"q", "items", "ok"};
        for (int i = 0; i < n; ++i) {
          const std::string k = kKeys[pick(8)];
          if (props.contains(k)) continue;
          props[k] = node(depth - 1);
          if (pick(2)) required.push_back(k);
        }
        Json o = {{"type", "object"}, {"properties", props}, {"required", required}};
        if (pick(2)) o["additionalProperties"] = false;
        return o;
      }
      case 3: {
        Json a = {{"type", "array"}, {"items", node(depth - 1)}};
        if (pick(2)) a["minItems"] = pick(3);
        if (pick(2)) a["maxItems"] = a.value("minItems", 0) + pick(4);
        return a;
      }
      case 4:
        return {{"anyOf", Json::array({node(depth - 1), node(depth - 1)})}};
      case 5:
        if (!free_strings) return scalar();
        return {{"type", "object"}, {"additionalProperties", node(depth - 1)}};
      case 6:
        if (has_defs) return {{"$ref", "#/$defs/tree"}};
        return scalar();
      default:
        return scalar();
    }
  }
};

}  // namespace

Json random_schema(std::mt19937_64& rng, int depth, bool free_strings) {
  Gen g{rng, free_strings};
  g.has_defs = rng() % 3 == 0 && free_strings;
  Json root = g.node(depth);
  if (g.has_defs && root.is_object() && !root.contains("$ref")) {
    // A recursive definition: a labelled tree with optional children.
    root["$defs"] = {{"tree",
                      {{"type", "object"},
                       {"properties",
                        {{"label", {{"type", "string"}}},
                         {"kids", {{"type", "array"}, {"items", {{"$ref", "#/$defs/tree"}}}}}}},
                       {"required", {"label"}},
                       {"additionalProperties", false}}}};
  } else if (g.has_defs) {
    root = {{"type", "object"}, {"properties", {{"x", {{"type", "integer"}}}}}};
  }
  return root;
}

}  // namespace rc::test
