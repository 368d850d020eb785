// Robustness: mutated schema texts never crash the compiler (each is a
// grammar or one invalid_argument), random bytes never crash the matcher,
// and the sampler never returns a token masked to -infinity whatever top-k,
// top-p and min-p keep.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "runtime/sampler.h"
#include "schema-check.h"
#include "structured/json-grammar.h"
#include "structured/json-matcher.h"

namespace rc::structured {
namespace {

std::string mutate(std::string s, std::mt19937_64& rng) {
  static const std::string kBits[] = {"{",
                                      "}",
                                      "[",
                                      "]",
                                      "\"",
                                      ",",
                                      ":",
                                      "\"$ref\":\"#\"",
                                      "\"type\":",
                                      "\"anyOf\":[",
                                      "null",
                                      "1e999",
                                      "-",
                                      "\"minItems\":-1",
                                      "\"required\":[\"q\"]",
                                      "\\u0000"};
  const int edits = 1 + static_cast<int>(rng() % 4);
  for (int i = 0; i < edits && !s.empty(); ++i) {
    const size_t at = rng() % s.size();
    switch (rng() % 3) {
      case 0:
        s.erase(at, 1 + rng() % 8);
        break;
      case 1:
        s.insert(at, kBits[rng() % std::size(kBits)]);
        break;
      default:
        s[at] = static_cast<char>(rng() % 256);
    }
  }
  return s;
}

TEST(StructuredFuzz, MutatedSchemasCompileOrFailCleanly) {
  std::mt19937_64 rng(31);
  int ok = 0, refused = 0;
  for (int i = 0; i < 3000; ++i) {
    const std::string text = mutate(test::random_schema(rng, 1 + i % 4).dump(), rng);
    auto g = compile_response_format({OutputFormat::json_schema, text});
    if (!g.ok()) {
      EXPECT_EQ(g.status().code(), StatusCode::invalid_argument);
      EXPECT_FALSE(g.status().message().empty());
      ++refused;
      continue;
    }
    ++ok;
    // Random bytes through the automaton: no crash, threads stay bounded.
    std::vector<Thread> threads = {start_thread(*g.value())};
    for (int b = 0; b < 64 && !threads.empty(); ++b) {
      std::vector<Thread> next;
      for (const Thread& t : threads) feed(*g.value(), t, static_cast<uint8_t>(rng() % 256), next);
      dedupe(next);
      if (next.size() > 64) next.resize(64);
      threads = std::move(next);
    }
  }
  EXPECT_GT(ok, 40);
  EXPECT_GT(refused, 100);
  // Deeply nested schemas are refused, not a stack overflow.
  std::string deep;
  for (int i = 0; i < 100000; ++i) deep += R"({"items":)";
  deep += "{}" + std::string(100000, '}');
  EXPECT_FALSE(compile_response_format({OutputFormat::json_schema, deep}).ok());
}

TEST(StructuredFuzz, SamplerNeverPicksMaskedTokens) {
  std::mt19937_64 rng(5);
  const float kOff = -std::numeric_limits<float>::infinity();
  for (int round = 0; round < 400; ++round) {
    std::vector<float> logits(300, kOff);
    std::vector<int32_t> allowed;
    const int n_allowed = 1 + static_cast<int>(rng() % 4);
    for (int i = 0; i < n_allowed; ++i) {
      const int32_t id = static_cast<int32_t>(rng() % 300);
      logits[id] = static_cast<float>(rng() % 1000) / 100.0f - 5.0f;
      allowed.push_back(id);
    }
    SamplingParams p;
    p.temperature = 0.2f + static_cast<float>(rng() % 20) / 10.0f;
    p.top_k = static_cast<int>(rng() % 60);
    p.top_p = 0.5f + static_cast<float>(rng() % 6) / 10.0f;
    p.min_p = static_cast<float>(rng() % 3) / 10.0f;
    p.repetition_penalty = 1.1f;
    p.seed = rng();
    runtime::Sampler s(p);
    std::vector<int32_t> history = {1, 2, 3};
    const int32_t t = s.sample(logits, history);
    EXPECT_NE(std::find(allowed.begin(), allowed.end(), t), allowed.end()) << "round " << round;
  }
}

}  // namespace
}  // namespace rc::structured
