// Runs a Grammar as a pushdown automaton over bytes.
//
// A Thread is one stack of frames (the document, open containers, the
// scalar being written). feed() consumes one byte: the top frame takes it,
// or, when the top frame is a finished scalar that cannot take it (a number
// followed by ','), the frame is popped and its parent takes it; pushing an
// any_of node forks the thread, one per alternative. A byte no thread takes
// is rejected. Threads are plain values (copyable, comparable byte-wise), so
// the token trie walk (token-trie.h) can branch them cheaply.
//
// JSON never lets a byte that continues a scalar also follow it (numbers
// hold no ',', ']', '}' or whitespace; strings and literals end with their
// own last byte), so "take it if you can, else pop" is exact.
//
// Threading: stateless functions over an immutable Grammar.
#pragma once

#include <cstdint>
#include <vector>

#include "json-grammar.h"

namespace rc::structured {

struct Frame {
  uint32_t node = 0;
  uint8_t phase = 0;
  uint8_t ws = 0;    // whitespace bytes in the current gap
  uint16_t pos = 0;  // key / literal position, digit count, \u digit count
  uint32_t a = 0;    // object: next property; array: item count; literals: candidate;
                     // formatted string: format state
  uint32_t b = 0;    // object: property being keyed; string: UTF-8 state
};
static_assert(sizeof(Frame) == 16, "frames are compared byte-wise");

struct Thread {
  uint32_t depth = 0;
  Frame f[kMaxFrames];

  bool same_as(const Thread& o) const;
  void copy_from(const Thread& o);  // copies only the live frames
};

// The thread before any output: the document frame alone.
Thread start_thread(const Grammar& g);

// Appends to `out` every thread `t` becomes after `byte` (none: rejected).
void feed(const Grammar& g, const Thread& t, uint8_t byte, std::vector<Thread>& out);

// Whether the output may end here (the document is complete).
bool accepting(const Grammar& g, const Thread& t);
// Whether nothing at all may follow (complete, and no scalar still open).
bool finished(const Grammar& g, const Thread& t);

// When the top frame is inside a plain string (no format), its UTF-8 state
// (0: between characters); -1 otherwise. Used by the trie walk's shortcut.
int plain_string_state(const Grammar& g, const Thread& t);
// When the top frame is inside a formatted string: its format and format
// state (the shortcut of format-runs.h). False otherwise.
bool format_string_state(const Grammar& g, const Thread& t, StringFormat* f, uint32_t* state);

// The UTF-8 automaton the string frames use: the state after `byte` from
// `state` (0 = between characters), or -1 when the byte cannot come next.
int utf8_next(int state, uint8_t byte);
inline constexpr int kUtf8States = 8;

// Formatted strings (json-formats.cpp): the state after `c` (-1: rejected)
// and whether the content may end in `state`. State 0 is the start.
int64_t format_next(StringFormat f, uint32_t state, uint8_t c);
bool format_complete(StringFormat f, uint32_t state);

// Removes repeated threads (anyOf branches that became identical).
void dedupe(std::vector<Thread>& threads);

}  // namespace rc::structured
