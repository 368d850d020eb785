// The schema compiler's scalar keywords (schema-compile.cpp): counts
// (minLength, minItems...), number bounds and multipleOf, and formats.
//
// Threading: pure functions; errors are thrown as CompileError.
#pragma once

#include <cstdint>
#include <string>

#include "json-grammar.h"
#include "schema-combine.h"

namespace rc::structured {

// s[key] as a count in [0, 1000000]; `dflt` when absent.
uint32_t schema_count(const SchemaJson& s, const char* key, const std::string& where,
                      uint32_t dflt);

// minimum, maximum, exclusiveMinimum, exclusiveMaximum (numbers, or draft
// 4's booleans) and multipleOf into n.range (and n.integer for multipleOf).
void number_bounds(const SchemaJson& s, Node& n, const std::string& where);

// The pattern a format is written as (ipv6, hostname, uri), or null.
const char* format_pattern(const std::string& f);

// The automaton format of s["format"]; none for pattern formats and when
// absent.
StringFormat string_format(const SchemaJson& s, const std::string& where);

}  // namespace rc::structured
