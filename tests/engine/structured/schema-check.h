// Test helpers for structured output, independent of the grammar code:
// a JSON Schema validator for the supported keywords (the oracle: a
// generated document must validate), and a random schema generator.
#pragma once

#include <cstdint>
#include <random>
#include <string>

#include <nlohmann/json.hpp>

namespace rc::test {

using Json = nlohmann::ordered_json;

// Empty when `value` is valid against `schema` (resolving $ref against
// `root`); otherwise why not, with the path.
std::string schema_violation(const Json& value, const Json& schema, const Json& root,
                             const std::string& path = "$");

// A random schema using the supported keywords, at most `depth` levels of
// nesting, sometimes with $defs and (recursive) $refs. Without
// `free_strings`, strings have a format or an enum and objects have declared
// keys (a model writing prose in a free string can take long to close it).
Json random_schema(std::mt19937_64& rng, int depth, bool free_strings = true);

}  // namespace rc::test
