// Frame phases of the byte automaton (json-matcher.cpp), shared with the
// closing-cost estimate (json-closing.cpp) that reads frames.
#pragma once

#include <cstdint>

namespace rc::structured {

// Objects and maps; arrays use kOpen, kFirst, kAfter and kComma.
enum : uint8_t { kOpen, kFirst, kKey, kColon, kValue, kAfter, kComma };

// Strings.
enum : uint8_t { kStrOpen, kStrContent, kStrEscape, kStrHex };

// Numbers; "done" ones may end the number.
enum : uint8_t {
  kNumStart,
  kNumMinus,
  kNumInt,
  kNumZero,
  kNumDot,
  kNumFrac,
  kNumExp,
  kNumExpSign,
  kNumExpDigits
};

// Number frames: `pos` holds the digit count in its low byte and this bit
// for a minus sign; `a` (low) and `b` (high) the integer part's magnitude.
inline constexpr uint16_t kNumNegative = 0x100;
inline constexpr int kMaxIntDigits = 15, kMaxFracDigits = 15, kMaxExpDigits = 2;

}  // namespace rc::structured
