// A JSON Schema compiled into a graph of grammar nodes (json-matcher.h runs
// it as a pushdown automaton over bytes). See radixchat/structured-output.h
// for what is supported and which subset of the schema's language is
// generated.
//
// Nodes refer to each other by index, so recursive $refs are cycles in the
// graph; `any_of` nodes take no stack frame of their own (they fork the
// matcher into one thread per alternative when pushed).
//
// Thread safety: a Grammar is immutable after compile; share it freely.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "json-pattern.h"
#include "radixchat/status.h"
#include "radixchat/structured-output.h"

namespace rc::structured {

enum class NodeKind : uint8_t {
  document,   // the root frame: leading whitespace, then the value
  any_value,  // any JSON value, chosen by its first byte
  object,     // declared properties in order
  map,        // any keys (strings), values of node `items`
  array,      // values of node `items`, min_items..max_items of them
  string,     // plain, or with `format`
  number,     // `integer` set: no fraction or exponent
  literals,   // one of the serialized JSON values in `literals`
  any_of,     // one of `alts`
};

enum class StringFormat : uint8_t { none, date, time, date_time, uuid, email, ipv4 };

struct Property {
  std::string key_json;  // the key as JSON text, quotes included
  uint32_t value = 0;    // node of its value
  bool required = false;
};

// Matcher frames: the document, one per open container, one for the scalar
// being written.
inline constexpr int kMaxFrames = kMaxNesting + 2;

// "No value fits": a min_len entry for a node that cannot be finished.
inline constexpr uint32_t kNever = UINT32_MAX / 4;

// Integer bounds (inclusive) and step of an integer node.
struct IntRange {
  bool bounded = false;
  int64_t lo = 0, hi = 0;
  int64_t step = 0;  // multipleOf; 0: any
};

struct Node {
  NodeKind kind = NodeKind::any_value;
  bool integer = false;  // number
  IntRange range;        // number: bounds on the integer part (integers: on the value)
  StringFormat format = StringFormat::none;
  uint32_t min_chars = 0, max_chars = UINT32_MAX;  // plain string: characters
  uint32_t pattern = 0;                            // string: 1 + index in Grammar::patterns
  std::vector<Property> props;                     // object
  uint32_t items = 0;                              // array, map: the element / value node
  std::vector<uint32_t> prefix;                    // array: nodes of the first items
  uint32_t min_items = 0, max_items = UINT32_MAX;  // array
  // array with uniqueItems: its items are this literals node (at most 32
  // values); the array frame's `b` marks the values used. UINT32_MAX: none.
  uint32_t unique_of = UINT32_MAX;
  std::vector<std::string> literals;  // literals: compact JSON texts
  std::vector<uint32_t> alts;         // any_of
  // min_len[r]: fewest bytes of a value of this node whose frame has r
  // frames of room (itself and what it must contain); kNever when none fits.
  uint32_t min_len[kMaxFrames + 1];
  Node() {
    for (uint32_t& m : min_len) m = kNever;
  }
  // object, once min_len is final: object_tail / cheapest_member by room
  // and property (json-closing.cpp), [room * (props + 1) + from].
  std::vector<uint32_t> tails, cheapest;
  uint32_t item_node(uint32_t i) const { return i < prefix.size() ? prefix[i] : items; }
};

struct Grammar {
  std::vector<Node> nodes;
  uint32_t document = 0;  // the document node (its `items` is the root value)
  // What an any_value frame becomes at its first byte, and map keys.
  uint32_t any_value = 0, plain_string = 0, any_map = 0, any_array = 0, any_number = 0,
           any_literal = 0;
  // No state needs more bytes than this to finish (json-closing.h): a
  // budget at least this large never needs steering.
  uint32_t closing_bound = 0;
  std::vector<Pattern> patterns;
};

// Compiles a response format under `limits`. invalid_argument with a
// message naming the problem (or the limit passed), cancelled when
// `limits.cancelled` said so; never throws.
Result<std::shared_ptr<const Grammar>> compile_response_format(const ResponseFormat& format,
                                                               const CompileLimits& limits = {});

}  // namespace rc::structured
