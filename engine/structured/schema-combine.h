// The schema compiler's combinators (schema-compile.cpp): allOf merged
// into one schema, `not` over a typed schema turned into the types it
// leaves, and the check that oneOf's branches cannot both match.
//
// Threading: pure functions; errors are thrown as CompileError and turned
// into a Status by compile_response_format.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "json-grammar.h"

namespace rc::structured {

class CompileBudget;

using SchemaJson = nlohmann::ordered_json;

struct CompileError {
  std::string message;
};

// Throws CompileError "<what> (at #<where>)".
[[noreturn]] void fail(const std::string& where, const std::string& what);

// `s` with its allOf merged in: $refs to whole branches resolved against
// `doc`, properties merged (a property in several branches gets an allOf of
// its schemas), required joined, types intersected, bounds tightened; a
// branch's additionalProperties applied to the properties the others add.
// Anything else two branches both set differently is refused by name.
// Each branch merged is charged to `budget` (compile-budget.h).
SchemaJson merge_all_of(const SchemaJson& doc, CompileBudget& budget, const SchemaJson& s,
                        const std::string& where);

// `s` without its `not`: over a schema with a type, any value of another
// type satisfies it, so `s` keeps those types (`not: false` is dropped).
// Anything else under `not` is refused by name.
SchemaJson without_not(const SchemaJson& s, const std::string& where);

// Whether no JSON value can match both nodes (by type, by literal values,
// or by a required property both give disjoint literal values). False when
// unsure.
bool disjoint(const Grammar& g, uint32_t a, uint32_t b);

}  // namespace rc::structured
