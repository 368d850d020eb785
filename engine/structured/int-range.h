// Integer bounds and multipleOf inside the digit automaton: which digit
// prefixes can still end in an allowed value, and how many more digits the
// shortest such value needs.
//
// A prefix is a sign and a magnitude of `digits` digits (at most
// kMaxIntDigits); its completions append j >= 0 digits. A leading zero
// ends the number ("0" only).
//
// Threading: pure functions.
#pragma once

#include <cstdint>

#include "json-grammar.h"

namespace rc::structured {

// Fewest digits still to append to the prefix so that the value lies in
// `r` (and is a multiple of its step); -1 when no completion does.
// digits == 0: only the sign is written (at least one digit must follow).
int int_digits_needed(const IntRange& r, bool negative, uint64_t magnitude, int digits);

// Whether the value itself is allowed.
bool int_allowed(const IntRange& r, bool negative, uint64_t magnitude);

// Fewest bytes of an allowed integer (sign included); -1 when none.
int int_min_bytes(const IntRange& r);

}  // namespace rc::structured
