// JSON Schema -> Grammar. One pass over the schema document, memoizing
// $ref targets by JSON pointer so recursion becomes a cycle in the node
// graph, then a fixpoint for each node's shortest value by room
// (compute_min_len), which is what lets the matcher refuse choices that
// could not finish within the depth limit and close early near max_tokens.
#include <algorithm>
#include <cmath>
#include <map>
#include <regex>
#include <set>

#include <nlohmann/json.hpp>

#include "compile-budget.h"
#include "json-closing.h"
#include "json-grammar.h"
#include "json-phases.h"
#include "schema-combine.h"
#include "schema-scalars.h"

namespace rc::structured {

namespace {

using Json = SchemaJson;

const std::set<std::string, std::less<>> kAnnotations = {
    "title",      "description", "$schema",   "$id",   "$comment",    "default", "examples",
    "deprecated", "readOnly",    "writeOnly", "$defs", "definitions", "id"};
const std::set<std::string, std::less<>> kHandled = {"type",
                                                     "properties",
                                                     "required",
                                                     "additionalProperties",
                                                     "items",
                                                     "minItems",
                                                     "maxItems",
                                                     "enum",
                                                     "const",
                                                     "anyOf",
                                                     "oneOf",
                                                     "allOf",
                                                     "$ref",
                                                     "format",
                                                     "minLength",
                                                     "maxLength",
                                                     "minimum",
                                                     "maximum",
                                                     "exclusiveMinimum",
                                                     "exclusiveMaximum",
                                                     "multipleOf",
                                                     "prefixItems",
                                                     "additionalItems",
                                                     "uniqueItems",
                                                     "pattern",
                                                     "patternProperties",
                                                     "dependencies",
                                                     "minProperties",
                                                     "maxProperties",
                                                     "not"};

class Compiler {
 public:
  Compiler(const Json& doc, CompileBudget& budget) : doc_(doc), budget_(budget) {}

  Grammar run() {
    add_common_nodes();
    g_.nodes[g_.document].items = compile(doc_, "");
    return std::move(g_);
  }

  Grammar any_object() {
    add_common_nodes();
    g_.nodes[g_.document].items = g_.any_map;
    return std::move(g_);
  }

 private:
  uint32_t add(Node n) {
    budget_.nodes(g_.nodes.size() + 1);
    g_.nodes.push_back(std::move(n));
    return static_cast<uint32_t>(g_.nodes.size() - 1);
  }

  // The nodes every grammar has: the document and what any_value turns into.
  void add_common_nodes() {
    Node doc;
    doc.kind = NodeKind::document;
    g_.document = add(std::move(doc));
    g_.any_value = add(Node{});
    Node str;
    str.kind = NodeKind::string;
    g_.plain_string = add(std::move(str));
    g_.any_map = add(make_map(g_.any_value));
    Node arr;
    arr.kind = NodeKind::array;
    arr.items = g_.any_value;
    g_.any_array = add(std::move(arr));
    Node num;
    num.kind = NodeKind::number;
    g_.any_number = add(std::move(num));
    g_.any_literal = add(make_literals({"false", "null", "true"}));
  }

  static Node make_map(uint32_t values) {
    Node n;
    n.kind = NodeKind::map;
    n.items = values;
    return n;
  }

  static Node make_literals(std::vector<std::string> texts) {
    Node n;
    n.kind = NodeKind::literals;
    std::sort(texts.begin(), texts.end());
    texts.erase(std::unique(texts.begin(), texts.end()), texts.end());
    n.literals = std::move(texts);
    return n;
  }

  uint32_t compile(const Json& s, const std::string& where) {
    struct Nest {
      int& d;
      explicit Nest(int& depth) : d(++depth) {}
      ~Nest() { --d; }
    } nest(depth_);
    if (depth_ > 64) fail(where, "the schema nests more than 64 levels");
    budget_.expand(where);
    if (s.is_boolean()) {
      if (!s.get<bool>()) fail(where, "the schema 'false' accepts no value");
      return g_.any_value;
    }
    if (!s.is_object()) fail(where, "a schema must be an object or a boolean");
    check_keywords(s, where);
    if (auto it = s.find("$ref"); it != s.end()) {
      for (const auto& [k, v] : s.items()) {
        if (k != "$ref" && !kAnnotations.count(k)) {
          fail(where, "'$ref' next to '" + k + "' is not supported (put it inside the target)");
        }
      }
      if (!it->is_string()) fail(where, "'$ref' must be a string");
      return compile_ref(it->get<std::string>(), where);
    }
    if (auto it = s.find("allOf"); it != s.end()) {
      const Json merged = merge_all_of(doc_, budget_, s, where);
      return compile(merged, where);
    }
    if (s.contains("not")) return compile(without_not(s, where), where);
    for (const char* kw : {"anyOf", "oneOf"}) {
      auto it = s.find(kw);
      if (it == s.end()) continue;
      bool siblings = false;
      for (const auto& [k, v] : s.items())
        siblings = siblings || (k != kw && !kAnnotations.count(k));
      if (siblings) {
        // The other keywords apply to every branch: merged into each.
        if (!it->is_array() || it->empty()) {
          fail(where, std::string("'") + kw + "' must be a non-empty array");
        }
        Json rest = s;
        rest.erase(kw);
        Json branches = Json::array();
        for (const Json& b : *it) {
          branches.push_back(
              merge_all_of(doc_, budget_, Json{{"allOf", Json::array({rest, b})}}, where));
        }
        return compile(Json{{kw, branches}}, where);
      }
      if (!it->is_array() || it->empty())
        fail(where, std::string("'") + kw + "' must be a non-empty array");
      Node n;
      n.kind = NodeKind::any_of;
      for (size_t i = 0; i < it->size(); ++i) {
        n.alts.push_back(compile((*it)[i], where + "/" + kw + "/" + std::to_string(i)));
      }
      if (std::string(kw) == "oneOf") check_disjoint(n.alts, where);
      return add(std::move(n));
    }
    std::vector<std::string> types = type_names(s, where);
    if (types.size() == 1) return compile_typed(s, types[0], where);
    Node n;
    n.kind = NodeKind::any_of;
    for (const std::string& t : types) n.alts.push_back(compile_typed(s, t, where));
    return add(std::move(n));
  }

  void check_disjoint(const std::vector<uint32_t>& alts, const std::string& where) {
    for (size_t i = 0; i < alts.size(); ++i) {
      for (size_t j = i + 1; j < alts.size(); ++j) {
        budget_.tick();
        if (!disjoint(g_, alts[i], alts[j])) {
          fail(where + "/oneOf", "'oneOf' branches " + std::to_string(i) + " and " +
                                     std::to_string(j) +
                                     " could both match (only branches that exclude each other "
                                     "by type, by value or by a required property's value are "
                                     "supported)");
        }
      }
    }
  }

  void check_keywords(const Json& s, const std::string& where) {
    std::string bad;
    for (const auto& [k, v] : s.items()) {
      if (kHandled.count(k) || kAnnotations.count(k)) continue;
      bad += (bad.empty() ? "'" : ", '") + k + "'";
    }
    if (!bad.empty()) fail(where, "unsupported JSON Schema keyword(s) " + bad);
  }

  // The types a schema allows: "type" as given, else inferred from the
  // keywords present; "any" when nothing constrains it.
  std::vector<std::string> type_names(const Json& s, const std::string& where) {
    static const std::set<std::string> kTypes = {"object",  "array",   "string", "number",
                                                 "integer", "boolean", "null"};
    std::vector<std::string> out;
    if (auto it = s.find("type"); it != s.end()) {
      if (it->is_string()) {
        out.push_back(it->get<std::string>());
      } else if (it->is_array() && !it->empty()) {
        for (const Json& t : *it) {
          if (!t.is_string()) fail(where, "'type' entries must be strings");
          out.push_back(t.get<std::string>());
        }
      } else {
        fail(where, "'type' must be a string or a non-empty array of strings");
      }
      for (const std::string& t : out) {
        if (!kTypes.count(t)) fail(where, "unknown type '" + t + "'");
      }
      return out;
    }
    if (s.contains("enum") || s.contains("const")) return {"literal"};
    for (const char* k : {"properties", "required", "additionalProperties", "patternProperties",
                          "dependencies", "minProperties", "maxProperties"}) {
      if (s.contains(k)) return {"object"};
    }
    for (const char* k : {"items", "minItems", "maxItems", "prefixItems", "uniqueItems"}) {
      if (s.contains(k)) return {"array"};
    }
    for (const char* k : {"format", "minLength", "maxLength", "pattern"}) {
      if (s.contains(k)) return {"string"};
    }
    for (const char* k :
         {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"}) {
      if (s.contains(k)) return {"number"};
    }
    return {"any"};
  }

  static bool value_has_type(const Json& v, const std::string& type) {
    if (type == "literal" || type == "any") return true;
    if (type == "object") return v.is_object();
    if (type == "array") return v.is_array();
    if (type == "string") return v.is_string();
    if (type == "number") return v.is_number();
    if (type == "integer") {
      return v.is_number_integer() ||
             (v.is_number_float() && v.get<double>() == std::floor(v.get<double>()));
    }
    if (type == "boolean") return v.is_boolean();
    return v.is_null();
  }

  uint32_t compile_literals(const Json& s, const std::string& type, const std::string& where) {
    std::vector<std::string> texts;
    const bool has_enum = s.contains("enum");
    if (has_enum) {
      const Json& e = s["enum"];
      if (!e.is_array() || e.empty()) fail(where, "'enum' must be a non-empty array");
      for (const Json& v : e) {
        if (!value_has_type(v, type)) continue;
        if (s.contains("const") && v != s["const"]) continue;
        texts.push_back(v.dump());
      }
    } else {
      if (value_has_type(s["const"], type)) texts.push_back(s["const"].dump());
    }
    if (texts.empty()) fail(where, "no value of 'enum'/'const' has type '" + type + "'");
    return add(make_literals(std::move(texts)));
  }

  uint32_t compile_typed(const Json& s, const std::string& type, const std::string& where) {
    if (s.contains("enum") || s.contains("const")) return compile_literals(s, type, where);
    if (type == "any" || type == "literal") return g_.any_value;
    if (type == "object") return compile_object(s, where);
    if (type == "array") return compile_array(s, where);
    Node n;
    if (type == "string") {
      n.kind = NodeKind::string;
      n.format = string_format(s, where);
      n.min_chars = schema_count(s, "minLength", where, 0);
      n.max_chars = schema_count(s, "maxLength", where, UINT32_MAX);
      if (n.min_chars > n.max_chars) fail(where, "'minLength' is larger than 'maxLength'");
      if (n.format != StringFormat::none && (s.contains("minLength") || s.contains("maxLength"))) {
        fail(where, "'minLength'/'maxLength' next to 'format' is not supported");
      }
      if (s.contains("format") && format_pattern(s["format"].get<std::string>())) {
        if (s.contains("pattern") || s.contains("minLength") || s.contains("maxLength")) {
          fail(where, "'format' " + s["format"].dump() +
                          " next to 'pattern', 'minLength' or 'maxLength' is not supported");
        }
        g_.patterns.push_back(
            compile_pattern(format_pattern(s["format"].get<std::string>()), where));
        n.pattern = static_cast<uint32_t>(g_.patterns.size());
      }
      if (auto p = s.find("pattern"); p != s.end()) {
        if (!p->is_string()) fail(where, "'pattern' must be a string");
        if (n.format != StringFormat::none || s.contains("minLength") || s.contains("maxLength")) {
          fail(where, "'pattern' next to 'format', 'minLength' or 'maxLength' is not supported");
        }
        g_.patterns.push_back(compile_pattern(p->get<std::string>(), where));
        n.pattern = static_cast<uint32_t>(g_.patterns.size());
      }
    } else if (type == "number" || type == "integer") {
      n.kind = NodeKind::number;
      n.integer = type == "integer";
      number_bounds(s, n, where);
    } else if (type == "boolean") {
      return add(make_literals({"false", "true"}));
    } else {
      return add(make_literals({"null"}));
    }
    return add(std::move(n));
  }

  uint32_t compile_object(const Json& s, const std::string& where) {
    std::set<std::string> required;
    if (auto it = s.find("required"); it != s.end()) {
      if (!it->is_array()) fail(where, "'required' must be an array of strings");
      for (const Json& r : *it) {
        if (!r.is_string()) fail(where, "'required' must be an array of strings");
        required.insert(r.get<std::string>());
      }
    }
    // dependencies: a required property's list joins `required`; a property
    // with dependencies that is not required is never written (then they
    // hold trivially).
    std::set<std::string> dropped;
    if (auto it = s.find("dependencies"); it != s.end()) {
      if (!it->is_object()) fail(where, "'dependencies' must be an object");
      for (const auto& [key, dep] : it->items()) {
        if (!required.count(key)) {
          dropped.insert(key);
        } else if (dep.is_array()) {
          for (const Json& r : dep) {
            if (!r.is_string()) fail(where, "'dependencies' lists must hold strings");
            required.insert(r.get<std::string>());
          }
        } else {
          fail(where + "/dependencies/" + key,
               "'dependencies' with a schema on a required property is not supported");
        }
      }
    }
    const Json* extra = nullptr;
    if (auto it = s.find("additionalProperties"); it != s.end()) extra = &*it;
    const Json* props = nullptr;
    if (auto it = s.find("properties"); it != s.end()) {
      if (!it->is_object()) fail(where, "'properties' must be an object");
      props = &*it;
    }
    const Json* patterns = nullptr;
    if (auto it = s.find("patternProperties"); it != s.end()) {
      if (!it->is_object()) fail(where, "'patternProperties' must be an object");
      patterns = &*it;
    }
    const uint32_t min_props = schema_count(s, "minProperties", where, 0);
    const uint32_t max_props = schema_count(s, "maxProperties", where, UINT32_MAX);
    if (!props || props->empty()) {
      if (!required.empty()) {
        fail(where, "required property '" + *required.begin() + "' is not in 'properties'");
      }
      if (min_props > 0) fail(where, "'minProperties' without 'properties' is not supported");
      // Without declared keys, patternProperties, dependencies or
      // maxProperties leave the empty object as what is written.
      const bool only_empty = (extra && extra->is_boolean() && !extra->get<bool>()) || patterns ||
                              s.contains("dependencies") || s.contains("maxProperties");
      if (only_empty) {
        Node n;
        n.kind = NodeKind::object;  // no properties: exactly {}
        return add(std::move(n));
      }
      if (!extra) return g_.any_map;
      return add(make_map(compile(*extra, where + "/additionalProperties")));
    }
    if (extra && !extra->is_boolean() && !extra->is_object()) {
      fail(where, "'additionalProperties' must be a boolean or a schema");
    }
    Node n;
    n.kind = NodeKind::object;
    for (const auto& [key, sub] : props->items()) {
      const bool never = (sub.is_boolean() && !sub.get<bool>()) ||
                         (sub.is_object() && sub.size() == 1 && sub.contains("not") &&
                          (sub["not"] == Json::object() || sub["not"] == Json(true)));
      if (never && !required.count(key)) continue;  // no value fits: never written
      if (dropped.count(key)) continue;
      Property p;
      p.key_json = Json(key).dump();
      p.required = required.erase(key) > 0;
      // The patternProperties whose regex matches the key apply too.
      Json value = sub;
      if (patterns) value = with_patterns(key, sub, *patterns, where);
      p.value = compile(value, where + "/properties/" + key);
      n.props.push_back(std::move(p));
    }
    if (!required.empty()) {
      fail(where, "required property '" + *required.begin() + "' is not in 'properties'");
    }
    size_t n_required = 0;
    for (const Property& p : n.props) n_required += p.required;
    if (min_props > n_required) {
      fail(where, "'minProperties' above the required properties is not supported");
    }
    if (max_props < n.props.size()) {
      fail(where, "'maxProperties' below the declared properties is not supported");
    }
    return add(std::move(n));
  }

  // `sub` and every patternProperties schema whose regex matches `key`.
  static Json with_patterns(const std::string& key, const Json& sub, const Json& patterns,
                            const std::string& where) {
    Json all = Json::array({sub});
    for (const auto& [re, schema] : patterns.items()) {
      bool match = false;
      try {
        match = std::regex_search(key, std::regex(re, std::regex::ECMAScript));
      } catch (const std::exception&) {
        fail(where + "/patternProperties", "'patternProperties' regex '" + re + "' is not valid");
      }
      if (match) all.push_back(schema);
    }
    return all.size() == 1 ? sub : Json{{"allOf", all}};
  }

  uint32_t compile_array(const Json& s, const std::string& where) {
    Node n;
    n.kind = NodeKind::array;
    n.min_items = schema_count(s, "minItems", where, 0);
    n.max_items = schema_count(s, "maxItems", where, UINT32_MAX);
    if (n.min_items > n.max_items) fail(where, "'minItems' is larger than 'maxItems'");
    // The first items: prefixItems, or draft 4's `items` as an array; the
    // rest: `items` (or draft 4's additionalItems).
    const Json* tuple = nullptr;
    const Json* rest = nullptr;
    std::string tuple_key = "prefixItems", rest_key = "items";
    if (auto it = s.find("prefixItems"); it != s.end()) tuple = &*it;
    if (auto it = s.find("items"); it != s.end()) {
      if (it->is_array()) {
        if (tuple) fail(where, "'items' as an array next to 'prefixItems'");
        tuple = &*it;
        tuple_key = "items";
        rest_key = "additionalItems";
        if (auto a = s.find("additionalItems"); a != s.end()) rest = &*a;
      } else {
        rest = &*it;
      }
    }
    if (tuple) {
      if (!tuple->is_array()) fail(where, "'" + tuple_key + "' must be an array of schemas");
      for (size_t i = 0; i < tuple->size(); ++i) {
        const Json& sub = (*tuple)[i];
        if (sub.is_boolean() && !sub.get<bool>()) {
          n.max_items = std::min<uint32_t>(n.max_items, static_cast<uint32_t>(i));
          break;
        }
        n.prefix.push_back(compile(sub, where + "/" + tuple_key + "/" + std::to_string(i)));
      }
    }
    if (rest && rest->is_boolean() && !rest->get<bool>()) {
      n.max_items = std::min<uint32_t>(n.max_items, static_cast<uint32_t>(n.prefix.size()));
      n.items = g_.any_value;
    } else {
      n.items = rest ? compile(*rest, where + "/" + rest_key) : g_.any_value;
    }
    if (n.min_items > n.max_items) fail(where, "'minItems' asks for more items than are allowed");
    if (auto it = s.find("uniqueItems"); it != s.end()) {
      if (!it->is_boolean()) fail(where, "'uniqueItems' must be a boolean");
      if (it->get<bool>() && n.max_items > 1) unique_items(n, where);
    }
    return add(std::move(n));
  }

  // uniqueItems over enum / const items: the array tracks the values used.
  // Other items: at most one item (always unique).
  void unique_items(Node& n, const std::string& where) {
    uint32_t items = n.items;
    for (int i = 0; i < 16; ++i) {
      const Node& x = g_.nodes[items];
      if (x.kind != NodeKind::any_of || x.alts.size() != 1) break;
      items = x.alts[0];
    }
    const Node& lits = g_.nodes[items];
    if (n.prefix.empty() && lits.kind == NodeKind::literals && lits.literals.size() <= 32) {
      for (size_t i = 0; i < lits.literals.size(); ++i) {
        for (size_t j = i + 1; j < lits.literals.size(); ++j) {
          if (Json::parse(lits.literals[i]) == Json::parse(lits.literals[j])) {
            fail(where, "'uniqueItems' over values that are equal as JSON (" + lits.literals[i] +
                            ", " + lits.literals[j] + ")");
          }
        }
      }
      const uint32_t distinct = static_cast<uint32_t>(lits.literals.size());
      if (n.min_items > distinct) {
        fail(where, "'uniqueItems' with 'minItems' " + std::to_string(n.min_items) + " above the " +
                        std::to_string(distinct) + " distinct values");
      }
      n.unique_of = items;
      n.items = items;
      n.max_items = std::min(n.max_items, distinct);
      return;
    }
    if (n.min_items > 1) {
      fail(where, "'uniqueItems' with 'minItems' above 1 is supported only over enum/const items");
    }
    n.max_items = 1;  // one item is always unique
  }

  uint32_t compile_ref(const std::string& ref, const std::string& where) {
    if (ref.empty() || ref[0] != '#') {
      fail(where, "'$ref' '" + ref + "' is not a local reference (#/...)");
    }
    if (auto it = refs_.find(ref); it != refs_.end()) return it->second;
    const Json* target = &doc_;
    const std::string pointer = ref.substr(1);
    if (!pointer.empty()) {
      try {
        target = &doc_.at(Json::json_pointer(pointer));
      } catch (const std::exception&) {
        fail(where, "'$ref' '" + ref + "' points at nothing in the schema");
      }
    }
    Node indirection;  // an any_of of one: a cycle can point here before the target exists
    indirection.kind = NodeKind::any_of;
    const uint32_t id = add(std::move(indirection));
    refs_[ref] = id;
    if (++ref_count_ > 10000) fail(where, "too many $ref targets");
    const uint32_t body = compile(*target, pointer);
    g_.nodes[id].alts = {body};
    return id;
  }

  const Json& doc_;
  CompileBudget& budget_;
  Grammar g_;
  std::map<std::string, uint32_t> refs_;
  int ref_count_ = 0;
  int depth_ = 0;
};

}  // namespace

Result<std::shared_ptr<const Grammar>> compile_response_format(const ResponseFormat& format,
                                                               const CompileLimits& limits) {
  auto bad = [](const std::string& m) { return Status(StatusCode::invalid_argument, m); };
  if (format.type == OutputFormat::text) return bad("a text response format has no grammar");
  Json doc;
  if (format.type == OutputFormat::json_schema) {
    try {
      doc = Json::parse(format.schema);
    } catch (const std::exception& e) {
      return bad(std::string("the JSON schema is not valid JSON: ") + e.what());
    }
  }
  auto g = std::make_shared<Grammar>();
  CompileBudget budget(limits);
  try {
    Compiler c(doc, budget);
    *g = format.type == OutputFormat::json_object ? c.any_object() : c.run();
    compute_min_len(*g, &budget);
  } catch (const CompileError& e) {
    if (budget.was_cancelled()) return Status(StatusCode::cancelled, "JSON schema: " + e.message);
    return bad("JSON schema: " + e.message);
  } catch (const std::exception& e) {
    return bad(std::string("JSON schema: ") + e.what());
  }
  if (shortest_reply(*g) >= kNever) {
    return bad("JSON schema: no value satisfies it within " + std::to_string(kMaxNesting) +
               " levels of nesting (a required recursion never ends?)");
  }
  return std::shared_ptr<const Grammar>(std::move(g));
}

}  // namespace rc::structured

namespace rc {

Status check_response_format(const ResponseFormat& format, const CompileLimits& limits) {
  if (format.type == OutputFormat::text) return Status();
  Result<std::shared_ptr<const structured::Grammar>> g =
      structured::compile_response_format(format, limits);
  return g.ok() ? Status() : g.status();
}

}  // namespace rc
