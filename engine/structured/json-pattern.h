// JSON Schema `pattern` (an ECMA-262 regex) compiled to a byte DFA that the
// string frames of json-matcher.cpp run.
//
// The subset: literal characters, '.', escapes \d \w \s \D \W \S and escaped
// punctuation, classes [...] / [^...] with ranges, groups (...), (?:...) and
// named groups, alternation, quantifiers * + ? {n} {n,} {n,m} (lazy forms
// too), '^' at the start and '$' at the end (without them the match may sit
// anywhere in the string, as JSON Schema says). Refused by name: lookaround,
// backreferences, word boundaries, \p classes, \u escapes, anchors
// elsewhere, non-ASCII characters.
//
// Only printable ASCII other than '"' and '\' is ever generated (so no
// JSON escape is needed): a subset of what the pattern matches.
//
// Threading: compile once; a Pattern is immutable.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace rc::structured {

struct Pattern {
  std::vector<int32_t> next;   // next[state * 256 + byte]: -1 refused (or leads nowhere)
  std::vector<uint32_t> dist;  // fewest bytes to an accepting state (0: may end here)
  uint32_t max_dist = 0;
  std::vector<uint8_t> loops;  // loops[state]: every writable byte leads back to it
  // survives[state], bit k: every string of bytes of byte class k
  // (format-runs.h) is taken from this state, whatever states it passes
  // through; a trie subtree of such bytes is then allowed whole.
  std::vector<uint8_t> survives;
};

// Throws CompileError (schema-combine.h) naming the unsupported construct
// or a pattern that no string this subset writes matches.
Pattern compile_pattern(const std::string& re, const std::string& where);

}  // namespace rc::structured
