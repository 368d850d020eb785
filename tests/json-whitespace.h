// Whitespace bytes outside strings in a JSON text: what compact structured
// output must have none of (the engine's and the server's tests).
#pragma once

#include <cstddef>
#include <string>

namespace rc::test {

inline size_t whitespace_outside_strings(const std::string& text) {
  size_t n = 0;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == ' ' || c == '\n' || c == '\t' || c == '\r') {
      ++n;
    }
  }
  return n;
}

}  // namespace rc::test
