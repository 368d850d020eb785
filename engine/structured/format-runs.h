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
#include <vector>

#include "json-grammar.h"

namespace rc::structured {

// Byte classes the trie records per node (bit k of TokenTrie::Node::cls).
// None holds '"', '\\' or a control byte. The first kRunClasses are the
// ones formats run through; the rest (lower-case letters, letters, \w) are
// what pattern loops commonly keep to (Pattern::survives).
inline constexpr int kByteClasses = 8;
inline constexpr int kRunClasses = 5;
// The class pattern strings write (printable ASCII but '"' and '\\').
inline constexpr int kWritableClass = 4;
bool in_byte_class(int k, uint8_t c);

// Longest runs are capped here (trie heights above it are not shortcut).
inline constexpr int kMaxRun = 254;

class FormatRuns {
 public:
  // n: every string of up to n bytes of class k is accepted from `state`.
  // `worst`, when given, receives the most bytes the format may still need
  // (format_min_remaining of json-closing.h) after any of those strings:
  // what the budget check asks of them.
  int run_length(StringFormat f, uint32_t state, int k, uint32_t* worst = nullptr);

 private:
  // A direct-mapped memo (a later state may overwrite an earlier one: it is
  // a cache, and a miss only recomputes). Allocated at first use.
  struct Entry {
    uint64_t key = 0;  // 0: empty (real keys hold a format, never none)
    int run = 0;
    uint32_t worst = 0;
  };
  static constexpr int kSlotBits = 12;
  static size_t slot(uint64_t key) { return (key * 0x9E3779B97F4A7C15ull) >> (64 - kSlotBits); }
  const Entry* find(uint64_t key) const;
  void store(uint64_t key, int run, uint32_t worst);
  std::vector<Entry> memo_;
};

}  // namespace rc::structured
