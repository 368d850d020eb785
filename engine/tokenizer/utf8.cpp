#include "utf8.h"

namespace rc::tok {

int utf8_sequence_length(std::string_view s) {
  if (s.empty()) return -1;
  const unsigned char c = static_cast<unsigned char>(s[0]);
  if (c < 0x80) return 1;
  int n = 0;
  unsigned char lo = 0x80, hi = 0xbf;  // allowed range of the second byte
  if (c >= 0xc2 && c <= 0xdf)
    n = 2;
  else if (c == 0xe0)
    n = 3, lo = 0xa0;  // no overlong 3-byte forms
  else if (c == 0xed)
    n = 3, hi = 0x9f;  // no surrogates
  else if (c >= 0xe1 && c <= 0xef)
    n = 3;
  else if (c == 0xf0)
    n = 4, lo = 0x90;  // no overlong 4-byte forms
  else if (c >= 0xf1 && c <= 0xf3)
    n = 4;
  else if (c == 0xf4)
    n = 4, hi = 0x8f;  // nothing above U+10FFFF
  else
    return 0;
  for (int i = 1; i < n; ++i) {
    if (static_cast<size_t>(i) >= s.size()) return -1;
    const unsigned char b = static_cast<unsigned char>(s[i]);
    const unsigned char l = i == 1 ? lo : 0x80, h = i == 1 ? hi : 0xbf;
    if (b < l || b > h) return 0;
  }
  return n;
}

size_t utf8_first_invalid(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const int n = utf8_sequence_length(s.substr(i));
    if (n <= 0) return i;
    i += static_cast<size_t>(n);
  }
  return std::string_view::npos;
}

size_t utf8_sanitize(std::string_view in, std::string& out, bool hold_incomplete) {
  size_t i = 0;
  while (i < in.size()) {
    const int n = utf8_sequence_length(in.substr(i));
    if (n > 0) {
      out.append(in.substr(i, static_cast<size_t>(n)));
      i += static_cast<size_t>(n);
    } else if (n < 0 && hold_incomplete) {
      break;
    } else {
      out += "\xEF\xBF\xBD";  // U+FFFD for each bad byte
      ++i;
    }
  }
  return i;
}

}  // namespace rc::tok
