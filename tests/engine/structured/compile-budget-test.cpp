// Bounded schema compilation (CompileLimits): a schema whose expansion is
// exponential is refused quickly with the limit named, a cancel callback
// stops a compilation, and an object of thousands of optional properties
// compiles in linear time with closing tables equal to the ones computed
// from their definition (an oracle written here, independent of
// json-closing.cpp).
#include <gtest/gtest.h>

#include <chrono>
#include <random>

#include <nlohmann/json.hpp>

#include "structured/json-grammar.h"

namespace rc::structured {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

// $defs d0..d{levels-1}: {"allOf": [{"$ref": next}, {"$ref": next}]}.
std::string nested_all_of(int levels) {
  json defs = json::object();
  for (int i = 0; i < levels; ++i) {
    const json next = {{"$ref", "#/$defs/d" + std::to_string(i + 1)}};
    defs["d" + std::to_string(i)] = {{"allOf", json::array({next, next})}};
  }
  defs["d" + std::to_string(levels)] = {{"type", "integer"}};
  return json{{"$defs", defs}, {"$ref", "#/$defs/d0"}}.dump();
}

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

TEST(CompileBudget, ExponentialAllOfIsRefusedNamingTheLimit) {
  const auto t0 = Clock::now();
  auto g = compile_response_format({OutputFormat::json_schema, nested_all_of(40)});
  const double secs = seconds_since(t0);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), StatusCode::invalid_argument);
  EXPECT_NE(g.status().message().find("limit of 50000 schema expansions"), std::string::npos)
      << g.status().message();
  EXPECT_LT(secs, 1.0);
  // A few levels are fine: the limit is on the expansion, not the shape.
  EXPECT_TRUE(compile_response_format({OutputFormat::json_schema, nested_all_of(4)}).ok());
}

TEST(CompileBudget, EachLimitIsNamed) {
  CompileLimits few_nodes;
  few_nodes.max_nodes = 9;
  auto g = compile_response_format(
      {OutputFormat::json_schema,
       R"({"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"string"},
           "c":{"type":"array","items":{"type":"boolean"}}}})"},
      few_nodes);
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.status().message().find("limit of 9 grammar nodes"), std::string::npos)
      << g.status().message();

  CompileLimits no_time;
  no_time.max_time = std::chrono::milliseconds(0);
  no_time.max_expansions = UINT64_MAX;
  g = compile_response_format({OutputFormat::json_schema, nested_all_of(40)}, no_time);
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.status().message().find("limit of 0 ms"), std::string::npos) << g.status().message();
}

TEST(CompileBudget, CancelStopsCompilation) {
  CompileLimits limits;
  limits.max_expansions = UINT64_MAX;
  limits.max_time = std::chrono::milliseconds(60000);
  int polls = 0;
  limits.cancelled = [&polls] { return ++polls >= 3; };
  const auto t0 = Clock::now();
  auto g = compile_response_format({OutputFormat::json_schema, nested_all_of(40)}, limits);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), StatusCode::cancelled);
  EXPECT_EQ(polls, 3);
  EXPECT_LT(seconds_since(t0), 1.0);
}

// `n` properties, integers and strings, about one in `every` required.
std::string many_properties(int n, int every, uint32_t seed) {
  std::mt19937 rng(seed);
  json props = json::object();
  json required = json::array();
  for (int i = 0; i < n; ++i) {
    const std::string key = "p" + std::to_string(i);
    props[key] = (rng() % 3 == 0) ? json{{"type", "string"}, {"minLength", rng() % 5}}
                                  : json{{"type", "integer"}};
    if (rng() % every == 0) required.push_back(key);
  }
  return json{{"type", "object"}, {"properties", props}, {"required", required}}.dump();
}

TEST(CompileBudget, FourThousandOptionalPropertiesCompileQuickly) {
  const auto t0 = Clock::now();
  auto g = compile_response_format({OutputFormat::json_schema, many_properties(4000, 1 << 30, 3)});
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_LT(seconds_since(t0), 1.0);
}

// The closing tables of an object from their definitions (json-closing.h):
// the tail from `from` is '}' plus a comma and a member for each required
// property left; the cheapest member from `from` is, among the properties
// up to and including the first required one, the first of least
// member + tail cost whose value fits.
TEST(CompileBudget, ObjectClosingTablesMatchTheirDefinition) {
  const int n = 120;
  auto g = compile_response_format({OutputFormat::json_schema, many_properties(n, 7, 11)});
  ASSERT_TRUE(g.ok()) << g.status().message();
  const Grammar& gr = *g.value();
  const Node* obj = nullptr;
  for (const Node& node : gr.nodes) {
    if (node.kind == NodeKind::object && node.props.size() == static_cast<size_t>(n)) obj = &node;
  }
  ASSERT_NE(obj, nullptr);
  const size_t w = obj->props.size() + 1;
  auto value_len = [&](const Property& p, int room) -> uint64_t {
    if (room <= 0) return kNever;
    return gr.nodes[p.value].min_len[std::min(room, kMaxFrames)];
  };
  auto capped = [](uint64_t v) { return std::min<uint64_t>(v, kNever); };
  for (int room = 0; room <= kMaxFrames; ++room) {
    for (size_t from = 0; from < w; ++from) {
      uint64_t tail = 1;
      for (size_t j = from; j < obj->props.size(); ++j) {
        const Property& p = obj->props[j];
        if (p.required) tail += 1 + p.key_json.size() + 1 + value_len(p, room);
      }
      EXPECT_EQ(obj->tails[room * w + from], capped(tail)) << room << " " << from;
      uint32_t best = UINT32_MAX;
      uint64_t best_cost = kNever;
      for (size_t j = from; j < obj->props.size(); ++j) {
        const Property& p = obj->props[j];
        uint64_t after = 1;
        for (size_t k = j + 1; k < obj->props.size(); ++k) {
          const Property& q = obj->props[k];
          if (q.required) after += 1 + q.key_json.size() + 1 + value_len(q, room);
        }
        const uint64_t cost =
            capped(capped(p.key_json.size() + 1 + value_len(p, room)) + capped(after));
        if (value_len(p, room) < kNever && cost < best_cost) {
          best = static_cast<uint32_t>(j);
          best_cost = cost;
        }
        if (p.required) break;
      }
      EXPECT_EQ(obj->cheapest[room * w + from], best) << room << " " << from;
    }
  }
}

}  // namespace
}  // namespace rc::structured
