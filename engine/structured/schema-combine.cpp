#include "schema-combine.h"

#include <algorithm>
#include <set>

#include "compile-budget.h"

namespace rc::structured {

void fail(const std::string& where, const std::string& what) {
  throw CompileError{what + " (at #" + where + ")"};
}

namespace {

using Json = SchemaJson;

const std::set<std::string, std::less<>> kIgnored = {
    "title",      "description", "$schema",   "$id",   "$comment",    "default", "examples",
    "deprecated", "readOnly",    "writeOnly", "$defs", "definitions", "id"};

// A whole-branch $ref followed to its target.
const Json& resolve(const Json& doc, const Json& s, const std::string& where) {
  const Json* cur = &s;
  for (int hops = 0; cur->is_object() && cur->contains("$ref"); ++hops) {
    if (hops > 32) fail(where, "'$ref' chain too long inside 'allOf'");
    const Json& ref = (*cur)["$ref"];
    if (!ref.is_string() || ref.get<std::string>().empty() || ref.get<std::string>()[0] != '#') {
      fail(where, "'$ref' inside 'allOf' must be a local reference (#/...)");
    }
    const std::string pointer = ref.get<std::string>().substr(1);
    try {
      cur = pointer.empty() ? &doc : &doc.at(Json::json_pointer(pointer));
    } catch (const std::exception&) {
      fail(where, "'$ref' '" + ref.get<std::string>() + "' points at nothing in the schema");
    }
  }
  return *cur;
}

std::vector<std::string> type_list(const Json& t, const std::string& where) {
  std::vector<std::string> out;
  if (t.is_string()) {
    out.push_back(t.get<std::string>());
  } else if (t.is_array()) {
    for (const Json& x : t) {
      if (!x.is_string()) fail(where, "'type' entries must be strings");
      out.push_back(x.get<std::string>());
    }
  } else {
    fail(where, "'type' must be a string or an array of strings");
  }
  return out;
}

Json intersect_types(const Json& a, const Json& b, const std::string& where) {
  const std::vector<std::string> ta = type_list(a, where), tb = type_list(b, where);
  Json out = Json::array();
  for (const std::string& x : ta) {
    for (const std::string& y : tb) {
      if (x == y)
        out.push_back(x);
      else if (x == "integer" && y == "number")
        out.push_back("integer");
      else if (x == "number" && y == "integer")
        out.push_back("integer");
    }
  }
  if (out.empty()) fail(where, "the 'allOf' branches allow no common 'type'");
  if (out.size() == 1) return out[0];
  return out;
}

void merge_into(Json& out, const Json& branch, const std::string& where) {
  for (const auto& [k, v] : branch.items()) {
    if (kIgnored.count(k)) continue;
    if (!out.contains(k)) {
      out[k] = v;
      continue;
    }
    Json& cur = out[k];
    if (cur == v) continue;
    if (k == "properties" && cur.is_object() && v.is_object()) {
      for (const auto& [pk, pv] : v.items()) {
        if (!cur.contains(pk)) {
          cur[pk] = pv;
        } else if (cur[pk] != pv) {
          cur[pk] = Json{{"allOf", Json::array({cur[pk], pv})}};
        }
      }
    } else if (k == "required" && cur.is_array() && v.is_array()) {
      for (const Json& r : v) {
        if (std::find(cur.begin(), cur.end(), r) == cur.end()) cur.push_back(r);
      }
    } else if (k == "type") {
      cur = intersect_types(cur, v, where);
    } else if ((k == "minimum" || k == "minLength" || k == "minItems") && cur.is_number() &&
               v.is_number()) {
      if (v > cur) cur = v;
    } else if ((k == "maximum" || k == "maxLength" || k == "maxItems") && cur.is_number() &&
               v.is_number()) {
      if (v < cur) cur = v;
    } else {
      fail(where, "the 'allOf' branches set '" + k + "' differently (not supported)");
    }
  }
}

}  // namespace

Json merge_all_of(const Json& doc, CompileBudget& budget, const Json& s, const std::string& where) {
  const Json& all = s["allOf"];
  if (!all.is_array() || all.empty()) fail(where, "'allOf' must be a non-empty array");
  std::vector<Json> branches;
  Json own = s;
  own.erase("allOf");
  branches.push_back(own);
  for (size_t i = 0; i < all.size(); ++i) {
    const std::string at = where + "/allOf/" + std::to_string(i);
    budget.expand(at);
    Json b = resolve(doc, all[i], at);
    if (b.is_boolean()) {
      if (!b.get<bool>()) fail(at, "the schema 'false' accepts no value");
      continue;
    }
    if (!b.is_object()) fail(at, "a schema must be an object or a boolean");
    if (b.contains("allOf")) b = merge_all_of(doc, budget, b, at);
    branches.push_back(std::move(b));
  }
  Json out = Json::object();
  for (const Json& b : branches) merge_into(out, b, where);
  // additionalProperties of a branch applies to what the other branches add.
  if (out.contains("properties") && out["properties"].is_object()) {
    Json& props = out["properties"];
    std::set<std::string> required;
    if (out.contains("required") && out["required"].is_array()) {
      for (const Json& r : out["required"]) {
        if (r.is_string()) required.insert(r.get<std::string>());
      }
    }
    for (const Json& b : branches) {
      auto extra = b.find("additionalProperties");
      if (extra == b.end() || (extra->is_boolean() && extra->get<bool>())) continue;
      const Json own_props = b.contains("properties") ? b["properties"] : Json::object();
      Json kept = Json::object();
      for (const auto& [pk, pv] : props.items()) {
        if (own_props.contains(pk)) {
          kept[pk] = pv;
        } else if (extra->is_boolean()) {
          if (required.count(pk)) {
            fail(where, "required property '" + pk +
                            "' is excluded by an 'allOf' branch's "
                            "additionalProperties");
          }
        } else {
          kept[pk] = Json{{"allOf", Json::array({pv, *extra})}};
        }
      }
      props = std::move(kept);
    }
    out.erase("additionalProperties");
    if (out.contains("required") && out["required"].is_array()) {
      for (const Json& r : out["required"]) {
        if (r.is_string() && !props.contains(r.get<std::string>())) {
          fail(where, "required property '" + r.get<std::string>() + "' is not in 'properties'");
        }
      }
    }
  } else if (branches.size() > 1) {
    // No declared properties: an additionalProperties set by one branch
    // only is kept (merge_into), which is all the branches agree on.
  }
  return out;
}

namespace {

enum : uint32_t {
  kObj = 1,
  kArr = 2,
  kStr = 4,
  kFrac = 8,  // numbers that are not whole
  kInt = 16,
  kBool = 32,
  kNull = 64,
  kAll = 127
};

uint32_t literal_type(const std::string& text) {
  switch (text[0]) {
    case '{':
      return kObj;
    case '[':
      return kArr;
    case '"':
      return kStr;
    case 't':
    case 'f':
      return kBool;
    case 'n':
      return kNull;
  }
  return text.find_first_of(".eE") == std::string::npos ? kInt : kInt | kFrac;
}

uint32_t types_of(const Grammar& g, uint32_t node, int depth) {
  if (depth > 16) return kAll;
  const Node& n = g.nodes[node];
  switch (n.kind) {
    case NodeKind::object:
    case NodeKind::map:
      return kObj;
    case NodeKind::array:
      return kArr;
    case NodeKind::string:
      return kStr;
    case NodeKind::number:
      return n.integer ? kInt : kInt | kFrac;
    case NodeKind::literals: {
      uint32_t m = 0;
      for (const std::string& s : n.literals) m |= literal_type(s);
      return m;
    }
    case NodeKind::any_of: {
      if (n.alts.empty()) return kAll;  // a $ref still being compiled
      uint32_t m = 0;
      for (uint32_t a : n.alts) m |= types_of(g, a, depth + 1);
      return m;
    }
    default:
      return kAll;
  }
}

// A node's alternatives with single-alternative indirections ($ref) seen
// through.
uint32_t unwrap(const Grammar& g, uint32_t node) {
  for (int i = 0; i < 16; ++i) {
    const Node& n = g.nodes[node];
    if (n.kind != NodeKind::any_of || n.alts.size() != 1) break;
    node = n.alts[0];
  }
  return node;
}

bool literals_disjoint(const Node& a, const Node& b) {
  for (const std::string& x : a.literals) {
    const Json vx = Json::parse(x);
    for (const std::string& y : b.literals) {
      if (vx == Json::parse(y)) return false;
    }
  }
  return true;
}

bool disjoint_at(const Grammar& g, uint32_t a, uint32_t b, int depth) {
  if (depth > 8) return false;
  a = unwrap(g, a);
  b = unwrap(g, b);
  if ((types_of(g, a, 0) & types_of(g, b, 0)) == 0) return true;
  const Node& na = g.nodes[a];
  const Node& nb = g.nodes[b];
  if (na.kind == NodeKind::any_of && !na.alts.empty()) {
    return std::all_of(na.alts.begin(), na.alts.end(),
                       [&](uint32_t x) { return disjoint_at(g, x, b, depth + 1); });
  }
  if (nb.kind == NodeKind::any_of && !nb.alts.empty()) {
    return std::all_of(nb.alts.begin(), nb.alts.end(),
                       [&](uint32_t y) { return disjoint_at(g, a, y, depth + 1); });
  }
  if (na.kind == NodeKind::literals && nb.kind == NodeKind::literals) {
    return literals_disjoint(na, nb);
  }
  if (na.kind == NodeKind::object && nb.kind == NodeKind::object) {
    // A discriminator: a property both require with values that differ.
    for (const Property& p : na.props) {
      if (!p.required) continue;
      for (const Property& q : nb.props) {
        if (q.required && q.key_json == p.key_json && disjoint_at(g, p.value, q.value, depth + 1)) {
          return true;
        }
      }
    }
  }
  return false;
}

}  // namespace

bool disjoint(const Grammar& g, uint32_t a, uint32_t b) { return disjoint_at(g, a, b, 0); }

SchemaJson without_not(const SchemaJson& s, const std::string& where) {
  const SchemaJson& inner = s["not"];
  auto names = [&](const SchemaJson& t) {
    std::set<std::string> out;
    if (t.is_string()) out.insert(t.get<std::string>());
    if (t.is_array()) {
      for (const SchemaJson& x : t) {
        if (x.is_string()) out.insert(x.get<std::string>());
      }
    }
    return out;
  };
  if (inner.is_boolean() || (inner.is_object() && inner.empty())) {
    if (inner.is_boolean() && !inner.get<bool>()) {
      SchemaJson rest = s;
      rest.erase("not");
      return rest;
    }
    fail(where, "'not' of a schema that accepts everything accepts no value");
  }
  if (!inner.is_object() || !inner.contains("type")) {
    fail(where + "/not", "'not' is supported only over a schema with 'type'");
  }
  const std::set<std::string> excluded = names(inner["type"]);
  const bool numbers_out = excluded.count("number") || excluded.count("integer");
  SchemaJson allowed = SchemaJson::array();
  const std::set<std::string> own = s.contains("type") ? names(s["type"]) : std::set<std::string>{};
  for (const char* t : {"object", "array", "string", "number", "integer", "boolean", "null"}) {
    const std::string name = t;
    if (excluded.count(name) || ((name == "number" || name == "integer") && numbers_out)) continue;
    if (s.contains("type") && !own.count(name)) continue;
    if (!s.contains("type") && name == "integer") continue;  // "number" covers it
    allowed.push_back(name);
  }
  if (allowed.empty()) fail(where, "'not' excludes every type 'type' allows");
  SchemaJson rest = s;
  rest.erase("not");
  rest["type"] = allowed.size() == 1 ? allowed[0] : allowed;
  return rest;
}

}  // namespace rc::structured
