// Structured output: generation constrained to JSON (docs/architecture.md section 13).
//
// A request with a ResponseFormat other than `text` is decoded under a
// grammar: at every step only tokens whose bytes keep the output a prefix of
// a document the format accepts can be sampled (greedy, temperature, top-k,
// top-p and min-p then choose among those), end-of-generation is allowed only
// once the document is complete, and the request finishes (reason `stop`) as
// soon as nothing more can follow. A request cut by max_tokens ends
// incomplete (reason `length`), as with OpenAI.
//
// What is generated is a subset of what the schema accepts:
//  - Whitespace: JSON's whitespace (space, tab, CR, LF) is allowed where JSON
//    allows it between tokens, at most kMaxWhitespaceRun bytes in a row;
//    none after the document.
//  - Objects with `properties`: the declared properties in schema order,
//    optional ones may be left out, required ones never; no other keys, even
//    when additionalProperties is absent or true. An object schema without
//    properties is a map: any keys, values per additionalProperties (any
//    JSON value when absent or true; `false` allows only {}).
//  - Numbers: at most 15 integer digits, 15 fraction digits, 2 exponent
//    digits; integers have no fraction or exponent.
//  - Strings: valid UTF-8, no lone surrogate escapes. Formats date, time,
//    date-time (RFC 3339, 'T' and 'Z' upper case, at most 9 fraction digits),
//    uuid and email (ASCII local part, dotted domain) are generated exactly.
//  - $ref: "#", "#/$defs/...", "#/definitions/..." or any JSON pointer into
//    the document; recursion is allowed, and values nest at most
//    kMaxNesting deep (choices that could not finish within that depth are
//    never offered).
// Supported keywords: type (a name or an array of names), properties,
// required, additionalProperties, items, minItems, maxItems, enum, const,
// anyOf, $ref, $defs/definitions, format; annotations (title, description,
// $schema, $id, $comment, default, examples, deprecated, readOnly,
// writeOnly) are ignored. Any other keyword (oneOf, allOf, pattern,
// minLength, minimum, ...) is refused with an error naming it.
#pragma once

#include <string>

#include "radixchat/status.h"

namespace rc {

enum class OutputFormat {
  text,         // unconstrained
  json_object,  // any JSON object
  json_schema,  // a JSON value valid against `schema`
};

struct ResponseFormat {
  OutputFormat type = OutputFormat::text;
  std::string schema;  // json_schema: the JSON Schema as JSON text
};

inline constexpr int kMaxWhitespaceRun = 16;
inline constexpr int kMaxNesting = 12;

// Compiles the format once, without a model: OK, or invalid_argument with a
// message naming the problem (JSON syntax, an unsupported keyword and where,
// a bad $ref, a schema no value can satisfy). Engine::submit checks the same.
Status check_response_format(const ResponseFormat& format);

}  // namespace rc
