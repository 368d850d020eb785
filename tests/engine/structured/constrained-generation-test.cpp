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
  cfg.backend = "cpu";
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
    ASSERT_EQ(r.reason, FinishReason::stop)
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

TEST(ConstrainedGeneration, BadSchemaIsRefusedAtSubmit) {
  auto e = open("");
  ASSERT_TRUE(e);
  GenerateRequest r;
  r.prompt = "x";
  r.response_format = {OutputFormat::json_schema, R"({"type":"string","pattern":"a+"})"};
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
      {"[1, 2, 3, 4, 5, ", R"({"type":"integer"})"},
      {"{\"name\": \"Ann\", \"age\": 30}\n{\"name\": \"Bob\", \"age\": 31}\n",
       R"({"type":"string"})"},
      {"{\"name\": \"Ann\", \"age\": 30}\n{\"name\": \"Bob\", \"age\": 31}\n",
       R"({"anyOf":[{"type":"string"},{"type":"object"}]})"},
      {"\"yes\", \"no\", \"yes\", \"no\",", R"({"type":"string"})"},
  };
  int agreed = 0;
  for (const Case& c : cases) {
    GenerateRequest free;
    free.prompt = c.prompt;
    free.max_tokens = 24;
    GenerateRequest constrained = free;
    constrained.response_format = {OutputFormat::json_schema, c.schema};
    const std::vector<Reply> r = run_all(*e, {free, constrained});
    // How far the unconstrained tokens stay allowed.
    auto check = factory.make(constrained.response_format);
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
  EXPECT_GT(agreed, 8) << "the cases never exercised agreement";
}

}  // namespace
}  // namespace rc
