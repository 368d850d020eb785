// JSON Schema -> Grammar. One pass over the schema document, memoizing
// $ref targets by JSON pointer so recursion becomes a cycle in the node
// graph, then a fixpoint for each node's fewest frames (min_frames), which
// is what lets the matcher refuse choices that could not finish within the
// depth limit.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "json-grammar.h"

namespace rc::structured {

namespace {

using Json = nlohmann::ordered_json;

struct CompileError {
  std::string message;
};

[[noreturn]] void fail(const std::string& where, const std::string& what) {
  throw CompileError{what + " (at #" + where + ")"};
}

const std::set<std::string, std::less<>> kAnnotations = {
    "title",    "description", "$schema",  "$id",       "$comment", "default",
    "examples", "deprecated",  "readOnly", "writeOnly", "$defs",    "definitions"};
const std::set<std::string, std::less<>> kHandled = {
    "type",  "properties", "required", "additionalProperties",
    "items", "minItems",   "maxItems", "enum",
    "const", "anyOf",      "$ref",     "format"};

class Compiler {
 public:
  explicit Compiler(const Json& doc) : doc_(doc) {}

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
    if (auto it = s.find("anyOf"); it != s.end()) {
      for (const auto& [k, v] : s.items()) {
        if (k != "anyOf" && !kAnnotations.count(k)) {
          fail(where, "'anyOf' next to '" + k + "' is not supported (move it into each branch)");
        }
      }
      if (!it->is_array() || it->empty()) fail(where, "'anyOf' must be a non-empty array");
      Node n;
      n.kind = NodeKind::any_of;
      for (size_t i = 0; i < it->size(); ++i) {
        n.alts.push_back(compile((*it)[i], where + "/anyOf/" + std::to_string(i)));
      }
      return add(std::move(n));
    }
    std::vector<std::string> types = type_names(s, where);
    if (types.size() == 1) return compile_typed(s, types[0], where);
    Node n;
    n.kind = NodeKind::any_of;
    for (const std::string& t : types) n.alts.push_back(compile_typed(s, t, where));
    return add(std::move(n));
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
    if (s.contains("properties") || s.contains("required") || s.contains("additionalProperties")) {
      return {"object"};
    }
    if (s.contains("items") || s.contains("minItems") || s.contains("maxItems")) return {"array"};
    if (s.contains("format")) return {"string"};
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
    } else if (type == "number" || type == "integer") {
      n.kind = NodeKind::number;
      n.integer = type == "integer";
    } else if (type == "boolean") {
      return add(make_literals({"false", "true"}));
    } else {
      return add(make_literals({"null"}));
    }
    return add(std::move(n));
  }

  static StringFormat string_format(const Json& s, const std::string& where) {
    auto it = s.find("format");
    if (it == s.end()) return StringFormat::none;
    if (!it->is_string()) fail(where, "'format' must be a string");
    const std::string f = it->get<std::string>();
    if (f == "date") return StringFormat::date;
    if (f == "time") return StringFormat::time;
    if (f == "date-time") return StringFormat::date_time;
    if (f == "uuid") return StringFormat::uuid;
    if (f == "email") return StringFormat::email;
    fail(where, "unsupported format '" + f + "' (supported: date, time, date-time, uuid, email)");
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
    const Json* extra = nullptr;
    if (auto it = s.find("additionalProperties"); it != s.end()) extra = &*it;
    const Json* props = nullptr;
    if (auto it = s.find("properties"); it != s.end()) {
      if (!it->is_object()) fail(where, "'properties' must be an object");
      props = &*it;
    }
    if (!props || props->empty()) {
      if (!required.empty()) {
        fail(where, "required property '" + *required.begin() + "' is not in 'properties'");
      }
      if (extra && extra->is_boolean() && !extra->get<bool>()) {
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
      Property p;
      p.key_json = Json(key).dump();
      p.required = required.erase(key) > 0;
      p.value = compile(sub, where + "/properties/" + key);
      n.props.push_back(std::move(p));
    }
    if (!required.empty()) {
      fail(where, "required property '" + *required.begin() + "' is not in 'properties'");
    }
    return add(std::move(n));
  }

  uint32_t compile_array(const Json& s, const std::string& where) {
    Node n;
    n.kind = NodeKind::array;
    auto count = [&](const char* key, uint32_t& out) {
      auto it = s.find(key);
      if (it == s.end()) return;
      if (!it->is_number_integer() || it->get<int64_t>() < 0 || it->get<int64_t>() > 1000000) {
        fail(where, std::string("'") + key + "' must be an integer in [0, 1000000]");
      }
      out = static_cast<uint32_t>(it->get<int64_t>());
    };
    count("minItems", n.min_items);
    count("maxItems", n.max_items);
    if (n.min_items > n.max_items) fail(where, "'minItems' is larger than 'maxItems'");
    if (auto it = s.find("items"); it != s.end()) {
      if (it->is_array()) fail(where, "'items' as an array (tuple) is not supported");
      n.items = compile(*it, where + "/items");
    } else {
      n.items = g_.any_value;
    }
    return add(std::move(n));
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
  Grammar g_;
  std::map<std::string, uint32_t> refs_;
  int ref_count_ = 0;
  int depth_ = 0;
};

// Fewest frames to finish a value of each node, by fixpoint (cycles start
// at "never" and shrink as their exits are found). A container counts room
// for one value inside even when it may be empty, so containers nest at most
// kMaxNesting deep whatever they hold.
void compute_min_frames(Grammar& g) {
  bool changed = true;
  while (changed) {
    changed = false;
    for (Node& n : g.nodes) {
      int64_t m = kInfiniteDepth;
      auto sub = [&](uint32_t i) { return int64_t(g.nodes[i].min_frames); };
      switch (n.kind) {
        case NodeKind::any_of:
          for (uint32_t a : n.alts) m = std::min(m, sub(a));
          break;
        case NodeKind::object: {
          int64_t inner = 0;
          for (const Property& p : n.props) {
            if (p.required) inner = std::max(inner, sub(p.value));
          }
          m = 1 + std::max<int64_t>(inner, 1);
          break;
        }
        case NodeKind::array:
          m = 1 + std::max<int64_t>(n.min_items > 0 ? sub(n.items) : 0, 1);
          break;
        case NodeKind::map:
          m = 2;
          break;
        case NodeKind::document:
          m = 1 + sub(n.items);
          break;
        default:  // any_value, string, number, literals
          m = 1;
      }
      const int v = static_cast<int>(std::min<int64_t>(m, kInfiniteDepth));
      if (v < n.min_frames) {
        n.min_frames = v;
        changed = true;
      }
    }
  }
}

}  // namespace

Result<std::shared_ptr<const Grammar>> compile_response_format(const ResponseFormat& format) {
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
  try {
    Compiler c(doc);
    *g = format.type == OutputFormat::json_object ? c.any_object() : c.run();
  } catch (const CompileError& e) {
    return bad("JSON schema: " + e.message);
  } catch (const std::exception& e) {
    return bad(std::string("JSON schema: ") + e.what());
  }
  compute_min_frames(*g);
  if (g->nodes[g->document].min_frames > kMaxFrames) {
    return bad("JSON schema: no value satisfies it within " + std::to_string(kMaxNesting) +
               " levels of nesting (a required recursion never ends?)");
  }
  return std::shared_ptr<const Grammar>(std::move(g));
}

}  // namespace rc::structured

namespace rc {

Status check_response_format(const ResponseFormat& format) {
  if (format.type == OutputFormat::text) return Status();
  Result<std::shared_ptr<const structured::Grammar>> g =
      structured::compile_response_format(format);
  return g.ok() ? Status() : g.status();
}

}  // namespace rc
