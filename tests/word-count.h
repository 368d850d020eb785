// Whitespace-separated words of a text: the token count of the document
// tests (library chunking, the prompt layout), so every expected count and
// budget there is plain arithmetic. Header-only.
#pragma once

#include <sstream>
#include <string>
#include <string_view>

namespace rc::test {

inline int words(std::string_view text) {
  std::istringstream in{std::string(text)};
  std::string w;
  int n = 0;
  while (in >> w) ++n;
  return n;
}

}  // namespace rc::test
