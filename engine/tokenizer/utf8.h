// Strict UTF-8 checks (RFC 3629: no overlong forms, no surrogates, nothing
// above U+10FFFF), used to refuse invalid input before tokenizing and to cut
// streamed text only at character boundaries.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace rc::tok {

// Length of the valid sequence starting at s[0]; 0 when s[0] starts an
// invalid sequence; -1 when s is a valid but incomplete prefix of one.
int utf8_sequence_length(std::string_view s);
// Offset of the first byte that is not part of valid UTF-8, or npos.
size_t utf8_first_invalid(std::string_view s);
// Appends the valid characters of `in` to `out`, replacing each invalid
// byte with U+FFFD. When `hold_incomplete` is set, an incomplete sequence at
// the end is not consumed: the number of bytes consumed is returned.
size_t utf8_sanitize(std::string_view in, std::string& out, bool hold_incomplete);

}  // namespace rc::tok
