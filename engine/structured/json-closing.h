// The fewest bytes that finish a document from a matcher state, used to
// steer a reply that nears max_tokens to the shortest valid completion that
// fits (json-constraint.h).
//
// The estimate is exact for the completions the matcher can write (values
// of minimal length, properties keyed in the cheapest way) and consistent:
// from a state whose estimate is E > 0 some single byte leads to a state
// whose estimate is E - 1, and E == 0 only where the document may end. So a
// mask that keeps only tokens after which the estimate is at most the
// tokens left (a byte per token at worst) never paints itself into a
// corner, provided every byte is a token of its own (true of byte-level BPE
// and of SentencePiece vocabularies with byte fallback).
//
// Threading: pure functions over an immutable Grammar.
#pragma once

#include <cstdint>

#include "compile-budget.h"
#include "json-grammar.h"
#include "json-matcher.h"

namespace rc::structured {

// Fewest bytes after which `t` is complete (kNever when it cannot be).
uint32_t closing_bytes(const Grammar& g, const Thread& t);

// The same for the document's start: the shortest reply.
uint32_t shortest_reply(const Grammar& g);

// The property an object frame in room `room` should key next to finish
// soonest, among those allowed from `from`; UINT32_MAX when none fits.
uint32_t cheapest_member(const Grammar& g, const Node& n, uint32_t from, int room);

// Fills every node's min_len table (a fixpoint: recursion starts at kNever
// and shrinks as exits are found). A container needs room for one value
// inside even when it may be empty, so containers nest at most kMaxNesting
// deep whatever they hold. Each pass is charged to `budget` when given
// (compile-budget.h; it throws when time is up).
void compute_min_len(Grammar& g, CompileBudget* budget = nullptr);

// Format strings (json-formats.cpp): fewest bytes that complete the content
// from `state`, and the largest such count over all states.
uint32_t format_min_remaining(StringFormat f, uint32_t state);
uint32_t format_max_remaining(StringFormat f);

}  // namespace rc::structured
