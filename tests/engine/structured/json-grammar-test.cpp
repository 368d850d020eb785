// The schema compiler and the byte automaton: hand-picked documents, clear
// errors, and random schemas with random documents drawn from the automaton,
// checked by an independent validator (schema-check.h) and nlohmann's parser.
#include <gtest/gtest.h>

#include <random>

#include "schema-check.h"
#include "structured/json-closing.h"
#include "structured/json-grammar.h"
#include "structured/json-matcher.h"

namespace rc::structured {
namespace {

using test::Json;

std::shared_ptr<const Grammar> compile(const std::string& schema) {
  auto g = compile_response_format({OutputFormat::json_schema, schema});
  EXPECT_TRUE(g.ok()) << g.status().message() << "\n" << schema;
  return g.ok() ? g.value() : nullptr;
}

std::vector<Thread> advance(const Grammar& g, std::vector<Thread> threads, std::string_view s) {
  for (char c : s) {
    std::vector<Thread> next;
    for (const Thread& t : threads) feed(g, t, static_cast<uint8_t>(c), next);
    dedupe(next);
    threads = std::move(next);
    if (threads.empty()) break;
  }
  return threads;
}

// Whether `doc` is a complete document of the grammar.
bool accepts(const Grammar& g, std::string_view doc) {
  std::vector<Thread> t = advance(g, {start_thread(g)}, doc);
  for (const Thread& th : t) {
    if (accepting(g, th)) return true;
  }
  return false;
}

bool prefix_ok(const Grammar& g, std::string_view doc) {
  return !advance(g, {start_thread(g)}, doc).empty();
}

TEST(JsonGrammar, ObjectsInSchemaOrderWithOptionalMembers) {
  auto g = compile(R"({"type":"object","properties":{"name":{"type":"string"},
    "names":{"type":"array","items":{"type":"string"}},"age":{"type":"integer"}},
    "required":["age"],"additionalProperties":false})");
  EXPECT_TRUE(accepts(*g, R"({"age":3})"));
  EXPECT_TRUE(accepts(*g, R"({"name":"x","age":3})"));
  EXPECT_TRUE(accepts(*g, R"({"names":["a","b"],"age":-3})"));
  EXPECT_FALSE(prefix_ok(*g, "{ "));  // compact: no whitespace between tokens
  EXPECT_FALSE(prefix_ok(*g, "{\"age\" :"));
  EXPECT_FALSE(accepts(*g, R"({"name":"x"})"));       // age is required
  EXPECT_FALSE(prefix_ok(*g, R"({"age":3,"name")"));  // schema order
  EXPECT_FALSE(prefix_ok(*g, R"({"other")"));
  EXPECT_FALSE(prefix_ok(*g, R"({"age":3.5)"));  // integer
  EXPECT_FALSE(prefix_ok(*g, R"({"age":3,})"));  // trailing comma
  EXPECT_FALSE(prefix_ok(*g, R"({"age":01)"));
  EXPECT_FALSE(prefix_ok(*g, std::string("{") + std::string(kMaxWhitespaceRun + 1, ' ')));
}

TEST(JsonGrammar, ScalarsEnumsAndFormats) {
  auto e = compile(R"({"enum":["g","green",1,12,null]})");
  for (const char* ok : {R"("g")", R"("green")", "1", "12", "null"})
    EXPECT_TRUE(accepts(*e, ok)) << ok;
  for (const char* bad : {R"("gr")", "123", "nul", "2"}) EXPECT_FALSE(accepts(*e, bad)) << bad;
  auto d = compile(R"({"type":"string","format":"date"})");
  EXPECT_TRUE(accepts(*d, R"("2024-02-29")"));
  EXPECT_FALSE(accepts(*d, R"("2023-02-29")"));
  EXPECT_FALSE(accepts(*d, R"("2023-04-31")"));
  EXPECT_FALSE(accepts(*d, R"("2023-13-01")"));
  auto dt = compile(R"({"type":"string","format":"date-time"})");
  EXPECT_TRUE(accepts(*dt, R"("2023-01-31T23:59:59.123Z")"));
  EXPECT_TRUE(accepts(*dt, R"("2023-01-31T00:00:00+05:30")"));
  EXPECT_FALSE(accepts(*dt, R"("2023-01-31T24:00:00Z")"));
  EXPECT_FALSE(accepts(*dt, R"("2023-01-31T10:00:00")"));
  auto u = compile(R"({"type":"string","format":"uuid"})");
  EXPECT_TRUE(accepts(*u, R"("123e4567-e89b-12d3-a456-426614174000")"));
  EXPECT_FALSE(accepts(*u, R"("123e4567e89b-12d3-a456-426614174000")"));
  auto m = compile(R"({"type":"string","format":"email"})");
  EXPECT_TRUE(accepts(*m, R"("a.b+c@mail.example.org")"));
  EXPECT_FALSE(accepts(*m, R"("a@b")"));
  EXPECT_FALSE(accepts(*m, R"("a.@b.c")"));
  EXPECT_FALSE(accepts(*m, R"("a@-b.c")"));
  auto s = compile(R"({"type":"string"})");
  EXPECT_TRUE(accepts(*s, R"("tab\t \"q\" \u00e9 é 漢 😀")"));
  EXPECT_FALSE(prefix_ok(*s, "\"\x01"));
  EXPECT_FALSE(prefix_ok(*s, R"("\ud800)"));      // lone surrogate escape
  EXPECT_FALSE(prefix_ok(*s, "\"\xc0\x80"));      // overlong
  EXPECT_FALSE(prefix_ok(*s, "\"\xed\xa0\x80"));  // surrogate in UTF-8
  auto n = compile(R"({"type":"number"})");
  for (const char* ok : {"0", "-0.5", "1e5", "3.25E-2"}) EXPECT_TRUE(accepts(*n, ok)) << ok;
  for (const char* bad : {"01", "1.", "-", ".5", "1e", "7 ", " 7"}) {
    EXPECT_FALSE(accepts(*n, bad)) << bad;
  }
}

TEST(JsonGrammar, AnyOfTypeArraysRefsAndJsonObject) {
  auto a =
      compile(R"({"anyOf":[{"type":"object","properties":{"a":{"type":"integer"}},"required":["a"]},
    {"type":"object","properties":{"ab":{"type":"string"}},"required":["ab"]}]})");
  EXPECT_TRUE(accepts(*a, R"({"a":1})"));
  EXPECT_TRUE(accepts(*a, R"({"ab":"x"})"));
  EXPECT_FALSE(accepts(*a, R"({"a":"x"})"));
  auto t = compile(R"({"type":["integer","null"]})");
  EXPECT_TRUE(accepts(*t, "null"));
  EXPECT_TRUE(accepts(*t, "42"));
  auto r = compile(R"({"$ref":"#/$defs/node","$defs":{"node":{"type":"object",
    "properties":{"next":{"$ref":"#/$defs/node"}},"additionalProperties":false}}})");
  EXPECT_TRUE(accepts(*r, R"({"next":{"next":{}}})"));
  std::string deep;
  for (int i = 0; i < kMaxNesting - 1; ++i) deep += R"({"next":)";
  EXPECT_TRUE(prefix_ok(*r, deep + "{"));  // kMaxNesting objects open
  EXPECT_TRUE(accepts(*r, deep + "{}" + std::string(kMaxNesting - 1, '}')));
  EXPECT_FALSE(prefix_ok(*r, deep + "{\""));  // its value could not nest deeper
  auto o = compile_response_format({OutputFormat::json_object, ""});
  ASSERT_TRUE(o.ok());
  EXPECT_TRUE(accepts(*o.value(), R"({"k":[1,{"z":null}],"s":"v"})"));
  EXPECT_FALSE(prefix_ok(*o.value(), "[1]"));
  EXPECT_FALSE(prefix_ok(*o.value(), "\"s\""));
}

TEST(JsonGrammar, KeywordsPeopleWrite) {
  struct Case {
    const char* schema;
    std::vector<const char*> good, bad;
  } cases[] = {
      {R"({"type":"string","minLength":2,"maxLength":3})",
       {R"("ab")", R"("abc")", R"("\u00e9x")", R"("漢字")"},
       {R"("a")", R"("abcd")", R"("")"}},
      {R"({"type":"integer","minimum":-5,"maximum":120})",
       {"-5", "0", "120", "37", "9"},
       {"-6", "121", "1000", "-0", "-50"}},
      {R"({"type":"integer","minimum":0,"exclusiveMinimum":true,"maximum":10})",
       {"1", "10"},
       {"0", "11"}},
      {R"({"type":"integer","exclusiveMinimum":0,"exclusiveMaximum":10})", {"1", "9"}, {"0", "10"}},
      {R"({"type":"integer","multipleOf":5,"minimum":1,"maximum":30})",
       {"5", "30", "15"},
       {"7", "0", "35"}},
      {R"({"type":"number","minimum":0.5,"maximum":3})",
       {"1", "1.5", "2.999", "3"},
       {"4", "3.1", "0"}},
      {R"({"enum":[{"a":1},[1,2],"x"]})", {R"({"a":1})", "[1,2]", R"("x")"}, {"[1]", R"({"a":2})"}},
      {R"({"type":"string","pattern":"^[A-Z]{2}-\\d{3}$"})",
       {R"("AB-123")", R"("ZZ-000")"},
       {R"("AB-12")", R"("ab-123")", R"("AB-1234")"}},
      {R"({"type":"string","pattern":"cat"})", {R"("a cat!")", R"("cat")"}, {R"("dog")"}},
      {R"({"type":"array","prefixItems":[{"type":"integer"},{"type":"string"}],"items":false})",
       {R"([1,"a"])", "[1]", "[]"},
       {R"([1,"a",2])", R"(["a"])"}},
      {R"({"type":"array","items":[{"type":"integer"}],"additionalItems":{"type":"string"}})",
       {R"([1,"x","y"])"},
       {"[1,2]"}},
      {R"({"allOf":[{"type":"object","properties":{"a":{"type":"integer"}},"required":["a"]},
        {"properties":{"b":{"type":"string"}},"required":["b"]}]})",
       {R"({"a":1,"b":"x"})"},
       {R"({"a":1})", R"({"b":"x","a":1})"}},
      {R"({"oneOf":[{"type":"object","properties":{"kind":{"const":"a"},"x":{"type":"integer"}},
        "required":["kind","x"]},{"type":"object","properties":{"kind":{"const":"b"}},"required":["kind"]}]})",
       {R"({"kind":"a","x":1})", R"({"kind":"b"})"},
       {R"({"kind":"b","x":1})", R"({"kind":"a"})"}},
      {R"({"type":"string","format":"ipv4"})",
       {R"("192.168.0.1")", R"("0.0.0.0")"},
       {R"("256.1.1.1")", R"("01.1.1.1")", R"("1.1.1")"}},
      {R"({"type":"object","properties":{"a":{"$ref":"#"}}})", {R"({"a":{"a":{}}})", "{}"}, {"[]"}},
      {R"({"type":"string","format":"ipv6"})",
       {R"("2001:db8:0:0:0:0:0:1")"},
       {R"("2001:db8::1")", R"("1:2:3:4:5:6:7")"}},
      {R"({"type":"string","format":"hostname"})",
       {R"("a-b.example.org")", R"("x")"},
       {R"("-a.b")"}},
      {R"({"type":"string","format":"uri"})",
       {R"("https://example.org/a/b.txt")", R"("http://x")"},
       {R"("example.org")", R"("ftp://x")"}},
      {R"({"type":"array","items":{"enum":["a","b",1]},"uniqueItems":true,"minItems":2})",
       {R"(["a","b"])", R"([1,"a","b"])", R"(["b",1])"},
       {R"(["a","a"])", R"(["a"])", R"(["a","b",1,"a"])"}},
      {R"({"type":"object","properties":{"a1":{"type":"integer"},"b":{"type":"string"}},
        "patternProperties":{"^a":{"minimum":5}}})",
       {R"({"a1":5,"b":"x"})", "{}"},
       {R"({"a1":3})"}},
      {R"({"properties":{"a":{"type":"integer"},"b":{"type":"integer"}},"dependencies":{"a":["b"]}})",
       {R"({"b":1})", "{}"},
       {R"({"a":1,"b":2})"}},
      {R"({"patternProperties":{"x":{"type":"integer"}}})", {"{}"}, {R"({"x":1})"}},
      {R"({"not":{"type":["integer","boolean"]}})", {R"("x")", "null", "[]"}, {"1", "1.5", "true"}},
      {R"({"properties":{"foo":{"not":{}},"bar":{"type":"null"}}})",
       {"{}", R"({"bar":null})"},
       {R"({"foo":1})"}},
      {R"({"maxProperties":2})", {"{}"}, {R"({"a":1})"}},
      {R"({"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"null"}},
        "required":["a"],"minProperties":1,"maxProperties":2})",
       {R"({"a":1})", R"({"a":1,"b":null})"},
       {"{}"}},
      {R"({"type":"number","multipleOf":1.5})", {"0", "3", "-6"}, {"1", "1.5", "4"}},
      {R"({"type":"integer","anyOf":[{"minimum":5},{"maximum":-5}]})", {"7", "-9"}, {"0", "4"}},
  };
  for (const Case& c : cases) {
    auto g = compile(c.schema);
    ASSERT_TRUE(g) << c.schema;
    for (const char* doc : c.good) EXPECT_TRUE(accepts(*g, doc)) << c.schema << " " << doc;
    for (const char* doc : c.bad) EXPECT_FALSE(accepts(*g, doc)) << c.schema << " " << doc;
  }
}

// The closing estimate (json-closing.h) is what the budget steering trusts:
// zero exactly where the document may end, and from anywhere else some byte
// brings it one closer. Checked along random walks over random schemas.
TEST(JsonGrammar, ClosingBytesAlwaysShrinkByOne) {
  std::mt19937_64 rng(43);
  auto best = [](const Grammar& g, const std::vector<Thread>& ts) {
    uint32_t b = kNever;
    for (const Thread& t : ts) b = std::min(b, closing_bytes(g, t));
    return b;
  };
  int steps = 0;
  for (int i = 0; i < 80; ++i) {
    const Json schema = test::random_schema(rng, 1 + i % 4);
    auto g = compile(schema.dump());
    ASSERT_TRUE(g) << schema.dump();
    std::vector<Thread> threads = {start_thread(*g)};
    EXPECT_EQ(best(*g, threads), shortest_reply(*g));
    for (int n = 0; n < 200 && !threads.empty(); ++n, ++steps) {
      const uint32_t e = best(*g, threads);
      ASSERT_LT(e, kNever) << schema.dump();
      bool can_end = false;
      for (const Thread& t : threads) can_end = can_end || accepting(*g, t);
      if (e == 0) EXPECT_TRUE(can_end) << schema.dump();
      std::vector<std::vector<Thread>> nexts;
      bool closer = e == 0;
      for (int c = 0; c < 256; ++c) {
        std::vector<Thread> next = advance(*g, threads, std::string(1, char(c)));
        if (next.empty()) continue;
        closer = closer || best(*g, next) + 1 <= e;
        nexts.push_back(std::move(next));
      }
      ASSERT_TRUE(closer) << "no byte brings " << e << " closer; schema " << schema.dump();
      if (nexts.empty()) break;
      threads = nexts[rng() % nexts.size()];
    }
  }
  EXPECT_GT(steps, 2000);
}

TEST(JsonGrammar, ErrorsNameTheProblem) {
  struct Case {
    const char* schema;
    const char* needle;
  } cases[] = {
      {R"({"type":"string","minLength":2,"pattern":"x"})", "'pattern' next to"},
      {R"({"oneOf":[{"type":"string"},{"type":"string","minLength":1}]})", "could both match"},
      {R"({"oneOf":[{"const":1},{"enum":[2,1.0]}]})", "branches 0 and 1"},
      {R"({"type":"string","format":"iri"})", "format 'iri'"},
      {R"({"$ref":"#/$defs/missing"})", "points at nothing"},
      {R"({"type":"object","properties":{"a":{"type":"integer","if":{}}}})",
       "'if' (at #/properties/a)"},
      {R"({"type":"integer","not":{}})", "accepts no value"},
      {R"({"not":{"minimum":3}})", "'not' is supported only over a schema with 'type'"},
      {R"({"type":"string","pattern":"(?=a)b"})", "lookaround"},
      {R"({"properties":{"a":{}},"minProperties":2})", "'minProperties'"},
      {R"({"properties":{"a":{}},"required":["a"],"dependencies":{"a":{"required":["b"]}}})",
       "'dependencies' with a schema"},
      {R"({"type":"string","pattern":"(a)\\1"})", "backreference"},
      {R"({"type":"string","pattern":"a^b"})", "anchor"},
      {R"({"type":"integer","minimum":5,"maximum":4.5})", "no integer"},
      {R"({"type":"integer","multipleOf":0.1234567891})", "'multipleOf'"},
      {R"({"allOf":[{"type":"string"},{"type":"integer"}]})", "no common 'type'"},
      {R"({"allOf":[{"minLength":1,"format":"date"},{"format":"uuid"}]})", "'format' differently"},
      {R"({"type":"strin"})", "unknown type 'strin'"},
      {R"({"type":"object","properties":{"a":{"$ref":"#"}},"required":["a"]})",
       "levels of nesting"},
      {R"({"type":"array","minItems":3,"maxItems":2})", "'minItems' is larger"},
      {R"({"enum":[]})", "non-empty"},
      {R"({"type":"string","enum":[1,2]})", "no value"},
      {"{\"type\":", "not valid JSON"},
      {"false", "accepts no value"},
      {R"({"$ref":"https://example.com/s.json"})", "not a local reference"},
  };
  for (const Case& c : cases) {
    auto g = compile_response_format({OutputFormat::json_schema, c.schema});
    ASSERT_FALSE(g.ok()) << c.schema;
    EXPECT_EQ(g.status().code(), StatusCode::invalid_argument);
    EXPECT_NE(g.status().message().find(c.needle), std::string::npos)
        << c.schema << " -> " << g.status().message();
  }
}

// A random complete document of the grammar: random accepted bytes, then,
// past `budget` bytes, a byte that brings the closing estimate down.
std::string random_document(const Grammar& g, std::mt19937_64& rng, size_t budget) {
  std::vector<Thread> threads = {start_thread(g)};
  std::string out;
  while (out.size() < 20000) {
    bool can_end = false;
    for (const Thread& t : threads) can_end = can_end || accepting(g, t);
    if (can_end && (out.size() > budget || rng() % 8 == 0)) return out;
    std::vector<uint8_t> allowed;
    uint32_t best = kNever;
    uint8_t closer = 0;
    for (int c = 0; c < 256; ++c) {
      std::vector<Thread> next = advance(g, threads, std::string(1, char(c)));
      if (next.empty()) continue;
      allowed.push_back(uint8_t(c));
      for (const Thread& t : next) {
        if (closing_bytes(g, t) < best) {
          best = closing_bytes(g, t);
          closer = uint8_t(c);
        }
      }
    }
    if (allowed.empty()) {
      EXPECT_TRUE(can_end) << "dead end after " << out;
      return out;
    }
    const uint8_t pick = out.size() > budget ? closer : allowed[rng() % allowed.size()];
    out += char(pick);
    threads = advance(g, threads, std::string(1, char(pick)));
  }
  ADD_FAILURE() << "no end after 20000 bytes: " << out.substr(0, 200);
  return out;
}

TEST(JsonGrammar, RandomSchemasGiveValidDocuments) {
  std::mt19937_64 rng(20);
  int docs = 0;
  for (int i = 0; i < 150; ++i) {
    const Json schema = test::random_schema(rng, 1 + i % 4);
    auto g = compile(schema.dump());
    ASSERT_TRUE(g) << schema.dump();
    for (int k = 0; k < 4; ++k) {
      const std::string doc = random_document(*g, rng, 40 + 40 * k);
      Json value;
      try {
        value = Json::parse(doc);
      } catch (const std::exception& e) {
        FAIL() << "does not parse: " << doc << "\n" << e.what() << "\nschema " << schema.dump();
      }
      EXPECT_EQ(test::schema_violation(value, schema, schema), "")
          << doc << "\nschema " << schema.dump();
      ++docs;
    }
  }
  EXPECT_EQ(docs, 600);
}

// Whatever a grammar accepts, its schema accepts: documents drawn for one
// schema are fed to the grammars of others.
TEST(JsonGrammar, AcceptedDocumentsOfOtherSchemasValidate) {
  std::mt19937_64 rng(7);
  std::vector<std::pair<Json, std::shared_ptr<const Grammar>>> schemas;
  for (int i = 0; i < 40; ++i) {
    Json s = test::random_schema(rng, 1 + i % 3);
    schemas.emplace_back(s, compile(s.dump()));
  }
  int accepted = 0;
  for (auto& [s, g] : schemas) {
    for (int k = 0; k < 3; ++k) {
      const std::string doc = random_document(*g, rng, 30);
      for (auto& [s2, g2] : schemas) {
        if (!accepts(*g2, doc)) continue;
        ++accepted;
        EXPECT_EQ(test::schema_violation(Json::parse(doc), s2, s2), "") << doc << "\n" << s2.dump();
      }
    }
  }
  EXPECT_GT(accepted, 120);
}

}  // namespace
}  // namespace rc::structured
