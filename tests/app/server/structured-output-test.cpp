// response_format on /v1/chat/completions and /v1/completions, streaming and
// not: the content parses as JSON and satisfies the schema, finish_reason is
// "stop" when the JSON ends; schema errors are 400s naming the problem; and
// fuzzed response_format bodies never crash the server (each answer is a
// 200 whose content satisfies what was asked, or a 4xx with an error body).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <random>

#include "json-whitespace.h"
#include "server-test-util.h"

namespace rc::server::testing {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

const char* kPerson = R"({"type":"object","properties":{
  "name":{"type":"string","enum":["Ann","Bob"]},"age":{"type":"integer"},
  "born":{"type":"string","format":"date"},"tags":{"type":"array","items":{"type":"boolean"},"maxItems":3}},
  "required":["name","age","born"],"additionalProperties":false})";

class StructuredServerTest : public LiveServerTest {
 protected:
  StructuredServerTest() { read_timeout_s_ = 120; }

  json chat(json response_format, bool stream, double temperature = 1.0) {
    return {{"messages", {{{"role", "user"}, {"content", "Who is it? Answer in JSON."}}}},
            {"max_tokens", 400},
            {"temperature", temperature},
            {"seed", 3},
            {"stream", stream},
            {"response_format", response_format}};
  }

  static json schema_format(const char* schema) {
    return {
        {"type", "json_schema"},
        {"json_schema", {{"name", "person"}, {"strict", true}, {"schema", json::parse(schema)}}}};
  }

  // (content, finish_reason) of a streamed reply.
  std::pair<std::string, std::string> stream(const std::string& path, const json& body) {
    return stream(path, body.dump());
  }
  std::pair<std::string, std::string> stream(const std::string& path, const std::string& body) {
    httplib::Client cli = server_->client();
    cli.set_read_timeout(120, 0);
    auto r = cli.Post(path.c_str(), body, "application/json");
    EXPECT_TRUE(r && r->status == 200) << (r ? r->body : "no response");
    if (!r) return {};
    std::string text, finish;
    for (const std::string& d : sse_data_lines(r->body)) {
      if (d == "[DONE]") break;
      json ev = json::parse(d);
      if (!ev.contains("choices") || ev["choices"].empty()) continue;
      const json& c = ev["choices"][0];
      if (c.contains("delta") && c["delta"].contains("content")) {
        text += c["delta"]["content"].get<std::string>();
      }
      if (c.contains("text")) text += c["text"].get<std::string>();
      if (c.contains("finish_reason") && c["finish_reason"].is_string())
        finish = c["finish_reason"];
    }
    return {text, finish};
  }

  static void expect_person(const std::string& text) {
    json v = json::parse(text, nullptr, false);
    ASSERT_FALSE(v.is_discarded()) << text;
    ASSERT_TRUE(v.is_object()) << text;
    EXPECT_TRUE(v["name"] == "Ann" || v["name"] == "Bob") << text;
    EXPECT_TRUE(v["age"].is_number_integer()) << text;
    EXPECT_TRUE(v["born"].is_string() && v["born"].get<std::string>().size() == 10) << text;
    for (const auto& [k, x] : v.items()) {
      EXPECT_TRUE(k == "name" || k == "age" || k == "born" || k == "tags") << text;
    }
  }
};

TEST_F(StructuredServerTest, JsonSchemaOnChatStreamingAndNot) {
  auto [status, body] = post("/v1/chat/completions", chat(schema_format(kPerson), false).dump());
  ASSERT_EQ(status, 200) << body;
  const json& choice = body["choices"][0];
  EXPECT_EQ(choice["finish_reason"], "stop") << body;
  expect_person(choice["message"]["content"].get<std::string>());

  auto [text, finish] = stream("/v1/chat/completions", chat(schema_format(kPerson), true));
  EXPECT_EQ(finish, "stop");
  expect_person(text);
}

// The bundled model writes prose into object keys and rarely closes them
// within a test's budget, so a reply cut by max_tokens is accepted here when
// it opens an object; complete json_object replies are checked in
// test_structured_generation (random-weight model).
TEST_F(StructuredServerTest, JsonObjectOnCompletions) {
  for (bool streaming : {false, true}) {
    json b = {{"prompt", "A JSON object:"}, {"max_tokens", 600},
              {"temperature", 0.7},         {"seed", 11},
              {"stream", streaming},        {"response_format", {{"type", "json_object"}}}};
    std::string text, finish;
    if (streaming) {
      std::tie(text, finish) = stream("/v1/completions", b);
    } else {
      auto [status, body] = post("/v1/completions", b.dump());
      ASSERT_EQ(status, 200) << body;
      text = body["choices"][0]["text"];
      finish = body["choices"][0]["finish_reason"];
    }
    const size_t first = text.find_first_not_of(" \t\r\n");
    ASSERT_NE(first, std::string::npos) << text;
    EXPECT_EQ(text[first], '{') << text;
    if (finish == "length") continue;  // cut by max_tokens: incomplete, as with OpenAI
    EXPECT_EQ(finish, "stop");
    json v = json::parse(text, nullptr, false);
    EXPECT_TRUE(v.is_object()) << text;
  }
}

TEST_F(StructuredServerTest, SchemaErrorsAre400sNamingTheProblem) {
  struct Case {
    json format;
    std::string needle, param;
  } cases[] = {
      {schema_format(R"x({"type":"string","pattern":"^(?=a)"})x"), "'pattern'", "response_format"},
      {schema_format(R"({"type":"string","if":{}})"), "'if'", "response_format"},
      {schema_format(R"({"$ref":"#/$defs/nope"})"), "points at nothing", "response_format"},
      {{{"type", "json_schema"}}, "json_schema' is required", "response_format.json_schema"},
      {{{"type", "json_schema"},
        {"json_schema", {{"name", "bad name!"}, {"schema", json::object()}}}},
       "name",
       "response_format.json_schema.name"},
      {{{"type", "xml"}}, "'xml'", "response_format.type"},
      {"json", "must be an object", "response_format"},
  };
  for (const Case& c : cases) {
    auto [status, body] = post("/v1/chat/completions", chat(c.format, false).dump());
    EXPECT_EQ(status, 400) << body;
    ASSERT_TRUE(body.contains("error")) << body;
    EXPECT_NE(body["error"]["message"].get<std::string>().find(c.needle), std::string::npos)
        << body;
    EXPECT_EQ(body["error"]["param"], c.param) << body;
  }
}

using rc::test::whitespace_outside_strings;

// Keys in the order the request wrote them (not sorted), compact output,
// and a reply that parses even when max_tokens cuts it.
TEST_F(StructuredServerTest, SchemaOrderCompactAndClosedAtMaxTokens) {
  // Raw text: the body must reach the server with zeta before alpha.
  const std::string schema =
      R"({"type":"object","properties":{"zeta_reasoning":{"type":"string"},)"
      R"("alpha_answer":{"type":"integer"}},"required":["zeta_reasoning","alpha_answer"]})";
  for (int max_tokens : {39, 48, 300}) {  // 39: the shortest reply
    for (bool streaming : {false, true}) {
      const std::string body =
          R"({"messages":[{"role":"user","content":"Think, then answer."}],"max_tokens":)" +
          std::to_string(max_tokens) + R"(,"temperature":1,"seed":)" + std::to_string(max_tokens) +
          R"(,"stream":)" + (streaming ? "true" : "false") +
          R"(,"response_format":{"type":"json_schema","json_schema":{"name":"r","schema":)" +
          schema + "}}}";
      std::string text, finish;
      if (streaming) {
        std::tie(text, finish) = stream("/v1/chat/completions", body);
      } else {
        auto [status, reply] = post("/v1/chat/completions", body);
        ASSERT_EQ(status, 200) << reply;
        text = reply["choices"][0]["message"]["content"];
        finish = reply["choices"][0]["finish_reason"];
      }
      EXPECT_TRUE(finish == "stop" || finish == "length") << finish;
      const nlohmann::ordered_json v = nlohmann::ordered_json::parse(text, nullptr, false);
      ASSERT_FALSE(v.is_discarded()) << "max_tokens " << max_tokens << ": " << text;
      ASSERT_TRUE(v.is_object() && v.size() == 2) << text;
      EXPECT_EQ(v.begin().key(), "zeta_reasoning") << text;
      EXPECT_TRUE(v["alpha_answer"].is_number_integer()) << text;
      EXPECT_EQ(whitespace_outside_strings(text), 0u) << text;
    }
  }
  // json_object: complete objects at a small max_tokens.
  for (int seed = 0; seed < 4; ++seed) {
    json b = chat({{"type", "json_object"}}, false);
    b["max_tokens"] = 16;
    b["seed"] = seed;
    auto [status, reply] = post("/v1/chat/completions", b.dump());
    ASSERT_EQ(status, 200) << reply;
    const std::string text = reply["choices"][0]["message"]["content"];
    EXPECT_TRUE(json::parse(text, nullptr, false).is_object()) << text;
    EXPECT_EQ(whitespace_outside_strings(text), 0u) << text;
  }
}

// A root-pointer $ref inside properties was a 500; a max_tokens below the
// shortest reply is a 400 naming the minimum.
TEST_F(StructuredServerTest, RecursionAndTooSmallBudgets) {
  json body = chat(schema_format(R"({"type":"object","properties":{"a":{"$ref":"#"},
    "b":{"type":"array","items":{"$ref":"#"}}}})"),
                   false);
  for (int max_tokens : {2, 5, 24, 64}) {
    body["max_tokens"] = max_tokens;
    auto [status, reply] = post("/v1/chat/completions", body.dump());
    ASSERT_EQ(status, 200) << reply;
    const std::string text = reply["choices"][0]["message"]["content"];
    EXPECT_TRUE(json::parse(text, nullptr, false).is_object()) << text;
  }
  body = chat(schema_format(kPerson), false);
  body["max_tokens"] = 5;
  auto [status, reply] = post("/v1/chat/completions", body.dump());
  EXPECT_EQ(status, 400) << reply;
  EXPECT_NE(reply["error"]["message"].get<std::string>().find("max_tokens must be at least"),
            std::string::npos)
      << reply;
}

// Random schemas, many of them broken (mutated types, stray keywords, bad
// refs, deep nesting, non-objects): the server answers every one.
TEST_F(StructuredServerTest, FuzzedSchemasNeverCrashTheServer) {
  std::mt19937_64 rng(99);
  const std::vector<json> atoms = {json::object(),
                                   json::array(),
                                   "string",
                                   1,
                                   -1,
                                   1e300,
                                   nullptr,
                                   true,
                                   false,
                                   json{{"type", "integer"}},
                                   json{{"type", "string"}, {"format", "date"}},
                                   json{{"$ref", "#"}},
                                   json{{"$ref", "#/$defs/x"}},
                                   json{{"enum", json::array()}},
                                   json{{"anyOf", json::array({json{{"type", "null"}}})}},
                                   json{{"type", json::array({"x"})}}};
  const std::vector<std::string> keys = {"type",   "properties", "required", "items",
                                         "enum",   "const",      "anyOf",    "$ref",
                                         "$defs",  "minItems",   "maxItems", "additionalProperties",
                                         "format", "oneOf",      "allOf",    "x"};
  std::function<json(int)> gen = [&](int depth) -> json {
    if (depth == 0 || rng() % 3 == 0) return atoms[rng() % atoms.size()];
    json o = json::object();
    const int n = 1 + static_cast<int>(rng() % 4);
    for (int i = 0; i < n; ++i) {
      const std::string& k = keys[rng() % keys.size()];
      if (k == "properties" || k == "$defs") {
        o[k] = {{"a", gen(depth - 1)}, {"x", gen(depth - 1)}};
      } else if (k == "anyOf" || k == "required") {
        o[k] = json::array({gen(depth - 1), "a"});
      } else {
        o[k] = gen(depth - 1);
      }
    }
    return o;
  };
  int ok = 0, refused = 0;
  for (int i = 0; i < 60; ++i) {
    json format = i % 10 == 9 ? gen(2)
                              : json{{"type", "json_schema"},
                                     {"json_schema", {{"name", "f"}, {"schema", gen(4)}}}};
    json body = chat(format, i % 2 == 1, 1.0);
    body["max_tokens"] = 24;
    httplib::Client cli = server_->client();
    cli.set_read_timeout(60, 0);
    auto r = cli.Post("/v1/chat/completions", body.dump(), "application/json");
    ASSERT_TRUE(r) << "no answer for " << format.dump();
    if (r->status == 200) {
      ++ok;
      if (i % 2 == 0) {  // not streamed: the reply parses, cut by max_tokens or not
        const json reply = json::parse(r->body);
        const std::string content = reply["choices"][0]["message"]["content"];
        EXPECT_FALSE(json::parse(content, nullptr, false).is_discarded()) << content << "\n"
                                                                          << format.dump();
      }
    } else {
      EXPECT_EQ(r->status, 400) << r->body << "\n" << format.dump();
      EXPECT_TRUE(json::parse(r->body, nullptr, false).contains("error")) << r->body;
      ++refused;
    }
  }
  EXPECT_GT(ok, 0);
  EXPECT_GT(refused, 0);
  httplib::Client cli = server_->client();
  auto h = cli.Get("/health");
  ASSERT_TRUE(h);
  EXPECT_EQ(h->status, 200);
}

// The official `openai` npm package, unchanged, with response_format
// json_schema / json_object, every reply validated by Ajv
// (openai-structured/structured.mjs; the packages come from the
// openai_structured_setup fixture, skipped offline).
TEST_F(StructuredServerTest, OpenAiNodeSdkStructuredOutput) {
  const std::string dir = RC_NPM_DIR;
  if (!std::filesystem::exists(dir + "/node_modules/openai/package.json") ||
      !std::filesystem::exists(dir + "/node_modules/ajv-formats/package.json")) {
    GTEST_SKIP() << "the npm packages are not installed in " << dir
                 << " (ctest -R openai_structured_setup)";
  }
  const std::string cmd =
      "cd '" + dir + "' && OPENAI_BASE_URL=http://127.0.0.1:" + std::to_string(server_->port()) +
      "/v1 node '" + RADIXCHAT_SOURCE_DIR + "/tests/app/server/openai-structured/structured.mjs'";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
}

}  // namespace
}  // namespace rc::server::testing
