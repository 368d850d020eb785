// Constrained generation through the Engine, with the bundled model and a
// random-weight model at temperature 1: every reply parses, validates
// against its schema (the independent validator of schema-check.h) and ends
// where the JSON ends (a parse of the whole reply fails on trailing text).
// Greedy: constrained and unconstrained decoding agree token for token as
// long as the unconstrained tokens are allowed by the grammar.
#include <gtest/gtest.h>

#include <filesystem>
#include <future>
#include <random>

#include "json-whitespace.h"
#include "radixchat/engine.h"
#include "random-gguf.h"
#include "schema-check.h"
#include "structured/constraint-factory.h"
#include "tokenizer/tokenizer.h"

namespace rc {
namespace {

using test::Json;

struct Reply {
  std::string text;
  std::vector<int32_t> tokens;
  FinishReason reason = FinishReason::none;
  std::string error;
};

std::unique_ptr<Engine> open(const std::string& path) {
  EngineConfig cfg;
  cfg.model_path = path;
  cfg.backend = BackendSetting::cpu;
  cfg.n_threads = 2;
  cfg.kv_pool_tokens = 1 << 15;
  auto e = Engine::create(cfg);
  EXPECT_TRUE(e.ok()) << e.status().message();
  return e.ok() ? std::move(e.value()) : nullptr;
}

// Submits all requests at once (they batch) and waits for every reply.
std::vector<Reply> run_all(Engine& e, const std::vector<GenerateRequest>& reqs) {
  std::vector<Reply> out(reqs.size());
  std::vector<std::promise<void>> done(reqs.size());
  for (size_t i = 0; i < reqs.size(); ++i) {
    Reply* r = &out[i];
    std::promise<void>* p = &done[i];
    auto id = e.submit(reqs[i], [r, p](const StreamEvent& ev) {
      r->text += ev.text;
      if (ev.token >= 0) r->tokens.push_back(ev.token);
      if (ev.finished) {
        r->reason = ev.reason;
        r->error = ev.error.message();
        p->set_value();
      }
      return true;
    });
    EXPECT_TRUE(id.ok()) << id.status().message();
    if (!id.ok()) p->set_value();
  }
  for (auto& p : done) p.get_future().wait();
  return out;
}

using rc::test::whitespace_outside_strings;

void check_random_schemas(Engine& e, uint64_t seed, int n, bool free_strings) {
  std::mt19937_64 rng(seed);
  std::vector<GenerateRequest> reqs;
  std::vector<Json> schemas;
  for (int i = 0; i < n; ++i) {
    Json schema =
        i % 7 == 6 && free_strings ? Json() : test::random_schema(rng, 1 + i % 3, free_strings);
    GenerateRequest r;
    r.prompt = "Answer in JSON. Request " + std::to_string(i) + ":";
    r.max_tokens = 2000;
    r.sampling.temperature = 1.0f;
    r.sampling.seed = seed * 100 + i;
    if (i % 3 == 1) r.sampling.top_k = 40;
    if (i % 3 == 2) r.sampling.top_p = 0.9f;
    if (schema.is_null()) {
      r.response_format.type = OutputFormat::json_object;
      schema = {{"type", "object"}};
    } else {
      r.response_format = {OutputFormat::json_schema, schema.dump()};
    }
    schemas.push_back(schema);
    reqs.push_back(r);
  }
  const std::vector<Reply> replies = run_all(e, reqs);
  for (int i = 0; i < n; ++i) {
    const Reply& r = replies[i];
    // Cut by max_tokens (or the context), the reply is still complete.
    ASSERT_TRUE(r.reason == FinishReason::stop || r.reason == FinishReason::length)
        << finish_reason_name(r.reason) << " " << r.error << "\n"
        << r.text << "\n"
        << schemas[i].dump();
    Json value;
    try {
      value = Json::parse(r.text);
    } catch (const std::exception& ex) {
      FAIL() << "reply does not parse: " << ex.what() << "\n" << r.text;
    }
    EXPECT_EQ(test::schema_violation(value, schemas[i], schemas[i]), "")
        << r.text << "\nschema " << schemas[i].dump();
  }
}

TEST(ConstrainedGeneration, BundledModelAtTemperatureOne) {
  auto e = open("");
  ASSERT_TRUE(e);
  // The bundled model writes prose into free strings at temperature 1 (long
  // to close): its schemas hold formatted, enumerated and non-string values.
  check_random_schemas(*e, 1, 16, false);
}

TEST(ConstrainedGeneration, RandomWeightModelAtTemperatureOne) {
  testing::RandomModelSpec spec;
  spec.vocab = 400;  // synthetic SPM vocabulary with the 256 byte pieces
  spec.ctx = 4096;
  spec.seed = 20;
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("rc-structured-" + std::to_string(getpid()) + ".gguf"))
                               .string();
  ASSERT_TRUE(testing::write_random_model(spec, path).ok());
  auto e = open(path);
  ASSERT_TRUE(e);
  check_random_schemas(*e, 2, 28, true);
  e.reset();
  std::filesystem::remove(path);
}

// Replies that parse at max_tokens: for a set of schemas (free strings,
// recursion, patterns, bounds, json_object), every max_tokens from the
// shortest reply up to 64 gives a reply that parses and validates, finished
// by `stop` or by `length`; one token less than the shortest is refused up
// front, naming the minimum.
TEST(ConstrainedGeneration, EveryBudgetFromTheMinimumTo64GivesValidJson) {
  auto e = open("");
  ASSERT_TRUE(e);
  const std::vector<std::string> schemas = {
      "",  // json_object
      R"({"type":"object","properties":{"zeta_reasoning":{"type":"string"},
          "alpha_answer":{"type":"integer"}},"required":["zeta_reasoning","alpha_answer"]})",
      R"({"type":"object","properties":{"name":{"type":"string","minLength":3},
          "born":{"type":"string","format":"date"},"tags":{"type":"array",
          "items":{"enum":["a","bb",null]},"minItems":1}},"required":["name","born","tags"]})",
      R"({"$ref":"#/$defs/tree","$defs":{"tree":{"type":"object","properties":{
          "label":{"type":"string"},"kids":{"type":"array","items":{"$ref":"#/$defs/tree"}}},
          "required":["label","kids"]}}})",
      R"({"type":"array","items":{"type":"string","pattern":"^[a-z]+[0-9]?$"},"minItems":2})",
      R"({"type":"object","properties":{"n":{"type":"number","minimum":-3,"maximum":99},
          "k":{"type":"integer","multipleOf":7,"minimum":100},"ip":{"type":"string","format":"ipv4"}},
          "required":["n","k","ip"]})",
  };
  auto tok = tok::Tokenizer::load(e->model_info().path);
  ASSERT_TRUE(tok.ok());
  structured::ConstraintFactory factory(*tok.value());
  std::vector<GenerateRequest> reqs;
  std::vector<Json> expect;
  for (size_t i = 0; i < schemas.size(); ++i) {
    GenerateRequest base;
    base.prompt = "Answer in JSON:";
    base.sampling.temperature = 1.0f;
    if (schemas[i].empty()) {
      base.response_format.type = OutputFormat::json_object;
    } else {
      base.response_format = {OutputFormat::json_schema, schemas[i]};
    }
    // The shortest reply, from the refusal one token below it.
    int shortest = 0;
    for (int m = 1; m <= 64 && shortest == 0; ++m) {
      if (factory.make(base.response_format, m).ok()) shortest = m;
    }
    ASSERT_GT(shortest, 0) << schemas[i];
    if (shortest > 1) {
      auto refused = factory.make(base.response_format, shortest - 1);
      ASSERT_FALSE(refused.ok());
      EXPECT_NE(refused.status().message().find("at least " + std::to_string(shortest)),
                std::string::npos)
          << refused.status().message();
    }
    for (int m = shortest; m <= 64; ++m) {
      GenerateRequest r = base;
      r.max_tokens = m;
      r.sampling.seed = 1000 * i + m;
      reqs.push_back(r);
      expect.push_back(schemas[i].empty() ? Json{{"type", "object"}} : Json::parse(schemas[i]));
    }
  }
  const std::vector<Reply> replies = run_all(*e, reqs);
  int cut = 0;
  for (size_t i = 0; i < replies.size(); ++i) {
    const Reply& r = replies[i];
    ASSERT_TRUE(r.reason == FinishReason::stop || r.reason == FinishReason::length)
        << finish_reason_name(r.reason) << " " << r.error;
    EXPECT_LE(static_cast<int>(r.tokens.size()), reqs[i].max_tokens);
    cut += r.reason == FinishReason::length;
    Json value;
    try {
      value = Json::parse(r.text);
    } catch (const std::exception&) {
      ADD_FAILURE() << "max_tokens " << reqs[i].max_tokens << ": reply does not parse: " << r.text
                    << "\nschema " << expect[i].dump();
      continue;
    }
    EXPECT_EQ(test::schema_violation(value, expect[i], expect[i]), "")
        << r.text << "\nschema " << expect[i].dump();
    EXPECT_EQ(whitespace_outside_strings(r.text), 0u) << "not compact: " << r.text;
  }
  EXPECT_GT(cut, static_cast<int>(replies.size()) / 4) << "the budgets were rarely binding";
}

TEST(ConstrainedGeneration, BadSchemaIsRefusedAtSubmit) {
  auto e = open("");
  ASSERT_TRUE(e);
  GenerateRequest r;
  r.prompt = "x";
  r.response_format = {OutputFormat::json_schema, R"x({"type":"string","pattern":"(?!a)"})x"};
  auto id = e->submit(r, nullptr);
  ASSERT_FALSE(id.ok());
  EXPECT_EQ(id.status().code(), StatusCode::invalid_argument);
  EXPECT_NE(id.status().message().find("'pattern'"), std::string::npos);
}

// Greedy decoding: the constrained reply repeats the unconstrained one for
// as long as the unconstrained tokens are allowed (masking only removes
// tokens; it never reorders the rest), and equals it when the whole
// unconstrained reply is a complete document.
TEST(ConstrainedGeneration, GreedyEqualsUnconstrainedWhileAllowed) {
  auto e = open("");
  ASSERT_TRUE(e);
  auto tok = tok::Tokenizer::load(e->model_info().path);
  ASSERT_TRUE(tok.ok());
  structured::ConstraintFactory factory(*tok.value());
  struct Case {
    const char* prompt;
    const char* schema;
  } cases[] = {
      {"[1, 2, 3, 4, 5, ", R"({"type":"number"})"},
      {"[1,2,3,4,5,6,", R"({"type":"integer"})"},
      {"[1,2,3,4,5,6,", R"({"type":"array"})"},
      {"{\"name\":\"Ann\",\"age\":30}\n{\"name\":\"Bob\",\"age\":31}\n", R"({"type":"string"})"},
      {"{\"name\":\"Ann\",\"age\":30}\n{\"name\":\"Bob\",\"age\":31}\n",
       R"({"anyOf":[{"type":"string"},{"type":"object"}]})"},
      {"\"yes\",\"no\",\"yes\",\"no\",", R"({"type":"string"})"},
      {"Q: What is a radix tree?\nA:", R"({"type":"string"})"},
  };
  int agreed = 0;
  for (const Case& c : cases) {
    GenerateRequest free;
    free.prompt = c.prompt;
    free.max_tokens = 24;
    GenerateRequest constrained = free;
    constrained.response_format = {OutputFormat::json_schema, c.schema};
    // Past the free reply's length: no budget steering within it.
    constrained.max_tokens = free.max_tokens + 400;
    const std::vector<Reply> r = run_all(*e, {free, constrained});
    // How far the unconstrained tokens stay allowed.
    auto check = factory.make(constrained.response_format, 0);
    ASSERT_TRUE(check.ok());
    size_t allowed = 0;
    while (allowed < r[0].tokens.size() && !check.value()->finished() &&
           check.value()->accept(r[0].tokens[allowed])) {
      ++allowed;
    }
    agreed += static_cast<int>(allowed);
    ASSERT_GE(r[1].tokens.size(), std::min(allowed, r[1].tokens.size()));
    for (size_t i = 0; i < allowed && i < r[1].tokens.size(); ++i) {
      ASSERT_EQ(r[1].tokens[i], r[0].tokens[i]) << c.prompt << " step " << i;
    }
    if (allowed == r[0].tokens.size() && r[0].reason == FinishReason::stop &&
        check.value()->accepting()) {
      EXPECT_EQ(r[1].text, r[0].text);  // already a complete document
    }
  }
  // Output is compact and the bundled model starts most continuations with
  // a space, so few of its greedy tokens are allowed ("1." after a list is).
  EXPECT_GE(agreed, 2) << "the cases never exercised agreement";
}

}  // namespace
}  // namespace rc
