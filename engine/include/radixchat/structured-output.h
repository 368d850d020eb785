// Structured output: generation constrained to JSON (docs/architecture.md section 13).
//
// A request with a ResponseFormat other than `text` is decoded under a
// grammar: at every step only tokens whose bytes keep the output a prefix of
// a document the format accepts can be sampled (greedy, temperature, top-k,
// top-p and min-p then choose among those), end-of-generation is allowed only
// once the document is complete, and the request finishes (reason `stop`) as
// soon as nothing more can follow.
//
// Replies that parse at max_tokens: the grammar knows, from every state, the
// fewest bytes that finish the document. As the budget runs out only tokens
// after which the document can still be finished in the tokens left are
// allowed (a byte per token at worst), so a reply cut by max_tokens (reason
// `length`, as with OpenAI) is still a complete, valid document. A request
// whose max_tokens is below the shortest reply is refused up front
// (invalid_argument naming that minimum). (Only where every printable
// ASCII and UTF-8 byte is a token of its own, as in byte-level BPE and
// SentencePiece with byte fallback; other vocabularies are not steered.)
//
// What is generated is a subset of what the schema accepts:
//  - Whitespace: none between tokens (compact JSON, as OpenAI returns it).
//  - Objects with `properties`: the declared properties in the order the
//    schema lists them (the request's key order), optional ones may be left
//    out, required ones never; no other keys, whatever additionalProperties
//    says. An object schema without properties is a map: any keys, values
//    per additionalProperties (any JSON value when absent or true; `false`
//    allows only {}).
//  - Numbers: at most 15 integer digits, 15 fraction digits, 2 exponent
//    digits; integers have no fraction or exponent. With minimum / maximum /
//    exclusiveMinimum / exclusiveMaximum (numbers, or draft 4's booleans)
//    the integer part is kept in range digit by digit, a fraction is written
//    only where every fraction is in range, and there is no exponent;
//    multipleOf m = p/q (lowest terms, q up to 10^6) gives whole multiples
//    of p.
//  - Strings: valid UTF-8, no lone surrogate escapes; minLength / maxLength
//    count characters (an escape is one). Formats date, time, date-time
//    (RFC 3339, 'T' and 'Z' upper case, at most 9 fraction digits), uuid,
//    email (ASCII local part, dotted domain) and ipv4 are generated exactly;
//    ipv6 (eight full groups), hostname and uri (http(s), no query) as
//    patterns. pattern: a regex subset compiled to a DFA (json-pattern.h);
//    only printable ASCII other than '"' and '\' is written.
//  - Arrays: prefixItems (or draft 4's `items` array with additionalItems),
//    items, minItems, maxItems; uniqueItems over enum / const items (at
//    most 32 values) never repeats a value, over other items allows one.
//  - enum / const: any JSON values, written compactly.
//  - anyOf and type arrays: any branch (keywords next to anyOf / oneOf
//    are merged into each branch). oneOf: only when its branches
//    exclude each other (by type, by literal values, or by a required
//    property with disjoint literal values); otherwise refused. allOf:
//    merged into one schema (properties joined, required joined, types
//    intersected, bounds tightened); branches that set another keyword
//    differently are refused.
//  - $ref: "#", "#/$defs/...", "#/definitions/..." or any JSON pointer into
//    the document; recursion is allowed, and values nest at most
//    kMaxNesting deep (choices that could not finish within that depth are
//    never offered).
//  - not over a typed schema: values of the other types. patternProperties:
//    applied to the declared keys they match ({} without properties).
//    dependencies: a required key's list joins required; other keys with
//    dependencies are never written. min/maxProperties: where the declared
//    properties already satisfy them.
// Annotations (title, description, $schema, $id, id, $comment, default,
// examples, deprecated, readOnly, writeOnly) are ignored. Any other keyword
// (if, contains, propertyNames, ...) is refused with an error naming it and
// its JSON pointer.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
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

// Whitespace between tokens: none (compact JSON, as OpenAI returns it).
inline constexpr int kMaxWhitespaceRun = 0;
inline constexpr int kMaxNesting = 12;

// Bounds on compiling one schema. A few kilobytes of allOf over $refs can
// ask for an expansion exponential in its nesting, so every compilation is
// held to these, checked as it goes (docs/architecture.md section 13).
struct CompileLimits {
  uint64_t max_expansions = 50000;  // schemas visited plus allOf branches merged
  uint32_t max_nodes = 20000;       // grammar nodes: the automaton's size
  std::chrono::milliseconds max_time{1000};
  // Polled while compiling (from the compiling thread); true stops the
  // compilation with StatusCode::cancelled. Empty: never cancelled.
  std::function<bool()> cancelled;
};

// Compiles the format once, without a model: OK, or invalid_argument with a
// message naming the problem (JSON syntax, an unsupported keyword and where,
// a bad $ref, a schema no value can satisfy, a limit of `limits` exceeded,
// named with its value), or cancelled when `limits.cancelled` said so.
// Engine::submit checks the same under the default limits.
Status check_response_format(const ResponseFormat& format, const CompileLimits& limits = {});

}  // namespace rc
