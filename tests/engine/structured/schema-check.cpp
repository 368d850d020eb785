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
  if (f == "ipv4") {
    static const std::regex kIpv4(
        R"(^((25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$)");
    return std::regex_match(s, kIpv4);
  }
  return false;
}

size_t code_points(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

// Number keywords, draft 4's boolean exclusive bounds included.
std::string number_violation(const Json& v, const Json& s, const std::string& path) {
  const double x = v.get<double>();
  const bool xmin = s.contains("exclusiveMinimum") && s["exclusiveMinimum"].is_boolean() &&
                    s["exclusiveMinimum"].get<bool>();
  const bool xmax = s.contains("exclusiveMaximum") && s["exclusiveMaximum"].is_boolean() &&
                    s["exclusiveMaximum"].get<bool>();
  if (s.contains("minimum") &&
      (xmin ? x <= s["minimum"].get<double>() : x < s["minimum"].get<double>())) {
    return path + ": below minimum " + v.dump();
  }
  if (s.contains("maximum") &&
      (xmax ? x >= s["maximum"].get<double>() : x > s["maximum"].get<double>())) {
    return path + ": above maximum " + v.dump();
  }
  if (s.contains("exclusiveMinimum") && s["exclusiveMinimum"].is_number() &&
      x <= s["exclusiveMinimum"].get<double>()) {
    return path + ": not above exclusiveMinimum " + v.dump();
  }
  if (s.contains("exclusiveMaximum") && s["exclusiveMaximum"].is_number() &&
      x >= s["exclusiveMaximum"].get<double>()) {
    return path + ": not below exclusiveMaximum " + v.dump();
  }
  if (s.contains("multipleOf")) {
    const double q = x / s["multipleOf"].get<double>();
    if (q != std::floor(q)) return path + ": not a multiple " + v.dump();
  }
  return "";
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
  if (s.contains("oneOf")) {
    int matched = 0;
    for (const Json& alt : s["oneOf"]) matched += schema_violation(v, alt, root, path).empty();
    if (matched != 1) return path + ": " + std::to_string(matched) + " oneOf branches match";
  }
  if (s.contains("allOf")) {
    for (const Json& part : s["allOf"]) {
      std::string why = schema_violation(v, part, root, path);
      if (!why.empty()) return why;
    }
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
  if (v.is_string()) {
    const std::string text = v.get<std::string>();
    if (s.contains("minLength") && code_points(text) < s["minLength"].get<size_t>()) {
      return path + ": shorter than minLength " + v.dump();
    }
    if (s.contains("maxLength") && code_points(text) > s["maxLength"].get<size_t>()) {
      return path + ": longer than maxLength " + v.dump();
    }
    if (s.contains("pattern") &&
        !std::regex_search(text,
                           std::regex(s["pattern"].get<std::string>(), std::regex::ECMAScript))) {
      return path + ": does not match pattern " + v.dump();
    }
  }
  if (v.is_number()) {
    std::string why = number_violation(v, s, path);
    if (!why.empty()) return why;
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
    // prefixItems / items (draft 4: items as an array, additionalItems).
    Json prefix = s.value("prefixItems", Json::array());
    Json rest = s.contains("items") ? s["items"] : Json(true);
    if (rest.is_array()) {
      prefix = rest;
      rest = s.contains("additionalItems") ? s["additionalItems"] : Json(true);
    }
    for (size_t i = 0; i < v.size(); ++i) {
      const Json& sub = i < prefix.size() ? prefix[i] : rest;
      std::string why = schema_violation(v[i], sub, root, path + "[" + std::to_string(i) + "]");
      if (!why.empty()) return why;
    }
    if (s.value("uniqueItems", false)) {
      for (size_t i = 0; i < v.size(); ++i) {
        for (size_t j = i + 1; j < v.size(); ++j) {
          if (v[i] == v[j]) return path + ": items not unique";
        }
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
    static const char* kFormats[] = {"date", "time", "date-time", "uuid", "email", "ipv4"};
    static const char* kPatterns[] = {"^[A-Z]{2}-\\d{3}$", "^(yes|no|maybe)$", "a+b",
                                      "^\\w+@x\\.(com|org)$", "^[^aeiou ]{1,4}$"};
    int kind = pick(15);
    if (!free_strings && (kind == 0 || kind == 8)) kind = 1;
    switch (kind) {
      case 0:
        return {{"type", "string"}};
      case 1:
        return {{"type", "string"}, {"format", kFormats[pick(6)]}};
      case 9:
        return {{"type", "string"}, {"minLength", pick(4)}, {"maxLength", 4 + pick(6)}};
      case 10:
        return {{"type", "string"}, {"pattern", kPatterns[pick(5)]}};
      case 11:
        return {{"type", "integer"}, {"minimum", -20 + pick(30)}, {"maximum", 10 + pick(2000)}};
      case 12:
        return {{"type", "integer"}, {"multipleOf", 1 + pick(12)}, {"exclusiveMaximum", 1000}};
      case 13:
        return {{"type", "number"}, {"minimum", -2.5}, {"exclusiveMaximum", 40}};
      case 14:
        return pick(2) ? Json{{"type", "string"}, {"minLength", 2}, {"maxLength", 3}}
                       : Json{{"type", "array"},
                              {"items", {{"enum", Json::array({"x", "yy", 3, nullptr})}}},
                              {"uniqueItems", true},
                              {"minItems", pick(4)}};
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
