// The trie walk's shortcut inside formatted strings (json-formats.cpp):
// how many bytes of a byte class a format state accepts in a row.
//
// A class run is "uniform" from a state when every byte of the class leads
// to the same next state (an email's local part or domain label after a
// letter or digit, a UUID's hex digits): then any string of n class bytes
// is accepted exactly when the chain of that one next state is n steps
// long. run_length() follows that chain, so a trie subtree whose bytes below
// are all in the class and at most that many deep is accepted whole; a state
// where the class is not uniform (a date's digits set the month and leap
// year) gets 0 and the walk goes byte by byte as before. Exact either way.
//
// Threading: one instance per MaskBuilder (the memo is mutable).
#pragma once

#include <cstdint>
#include <unordered_map>

#include "json-grammar.h"

namespace rc::structured {

// Byte classes the trie records per node (bit k of TokenTrie::Node::cls).
// None holds '"', '\\' or a control byte.
inline constexpr int kByteClasses = 4;
bool in_byte_class(int k, uint8_t c);

// Longest runs are capped here (trie heights above it are not shortcut).
inline constexpr int kMaxRun = 254;

class FormatRuns {
 public:
  // n: every string of up to n bytes of class k is accepted from `state`.
  int run_length(StringFormat f, uint32_t state, int k);

 private:
  std::unordered_map<uint64_t, uint8_t> memo_;
};

}  // namespace rc::structured
