// The schema compiler and the byte automaton: hand-picked documents, clear
// errors, and random schemas with random documents drawn from the automaton,
// checked by an independent validator (schema-check.h) and nlohmann's parser.
#include <gtest/gtest.h>

#include <random>

#include "schema-check.h"
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
  EXPECT_TRUE(accepts(*g, "{ \"name\" : \"x\",\n  \"age\": 30 }"));
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
  for (const char* ok : {"0", "-0.5", "1e5", "3.25E-2", "  7"}) EXPECT_TRUE(accepts(*n, ok)) << ok;
  for (const char* bad : {"01", "1.", "-", ".5", "1e", "7 "}) EXPECT_FALSE(accepts(*n, bad)) << bad;
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
  for (int i = 0; i < kMaxNesting; ++i) deep += R"({"next":)";
  EXPECT_TRUE(prefix_ok(*r, deep));         // kMaxNesting objects open
  EXPECT_FALSE(prefix_ok(*r, deep + "{"));  // past the depth limit
  auto o = compile_response_format({OutputFormat::json_object, ""});
  ASSERT_TRUE(o.ok());
  EXPECT_TRUE(accepts(*o.value(), R"({"k":[1,{"z":null}],"s":"v"})"));
  EXPECT_FALSE(prefix_ok(*o.value(), "[1]"));
  EXPECT_FALSE(prefix_ok(*o.value(), "\"s\""));
}

TEST(JsonGrammar, ErrorsNameTheProblem) {
  struct Case {
    const char* schema;
    const char* needle;
  } cases[] = {
      {R"({"type":"string","minLength":2,"pattern":"x"})", "'minLength', 'pattern'"},
      {R"({"oneOf":[{"type":"string"}]})", "'oneOf'"},
      {R"({"type":"string","format":"ipv4"})", "format 'ipv4'"},
      {R"({"$ref":"#/$defs/missing"})", "points at nothing"},
      {R"({"type":"object","properties":{"a":{"type":"integer","minimum":1}}})",
       "'minimum' (at #/properties/a)"},
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
// past `budget` bytes, bytes that close things first.
std::string random_document(const Grammar& g, std::mt19937_64& rng, size_t budget) {
  std::vector<Thread> threads = {start_thread(g)};
  std::string out;
  const std::string closers = "\"}]";
  const std::string short_values = "0nft\"{[,:";
  while (out.size() < 20000) {
    bool can_end = false;
    for (const Thread& t : threads) can_end = can_end || accepting(g, t);
    if (can_end && (out.size() > budget || rng() % 8 == 0)) return out;
    std::vector<uint8_t> allowed;
    for (int c = 0; c < 256; ++c) {
      if (!advance(g, threads, std::string(1, char(c))).empty()) allowed.push_back(uint8_t(c));
    }
    if (allowed.empty()) {
      EXPECT_TRUE(can_end) << "dead end after " << out;
      return out;
    }
    uint8_t pick = allowed[rng() % allowed.size()];
    if (out.size() > budget) {
      auto first_of = [&](const std::string& set) {
        for (char c : set) {
          for (uint8_t a : allowed) {
            if (a == uint8_t(c)) return int(a);
          }
        }
        return -1;
      };
      int c = first_of(closers);
      if (c < 0) c = first_of(short_values);
      if (c >= 0) pick = uint8_t(c);
    }
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
