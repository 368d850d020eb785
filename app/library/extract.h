// Text of a file the user adds to the library: plain text, Markdown and
// source code as they are; HTML as its visible text; PDF through poppler.
// Bad input is refused with one line naming the file: empty, binary, over
// kMaxFileBytes, not UTF-8, a PDF that is encrypted, damaged, truncated or
// has no text layer (a scan). Any thread; reads the file, writes nothing.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "radixchat/status.h"

namespace rc::library {

inline constexpr std::int64_t kMaxFileBytes = std::int64_t(50) << 20;

struct Extracted {
  std::string text;    // UTF-8, line ends "\n", no byte-order mark
  std::string format;  // text | markdown | html | pdf
};

// not_found for a missing file; invalid_argument for everything refused.
Result<Extracted> extract_file(const std::filesystem::path& file);

// The visible text of an HTML page: script, style and comments dropped,
// block elements as line breaks, entities decoded, blanks collapsed.
std::string html_text(std::string_view html);

// The text layer of a PDF, pages separated by a blank line. `name` is the
// file as the messages call it.
Result<std::string> pdf_text(std::string_view bytes, const std::string& name);

// ok, or invalid_argument "<name>: is not UTF-8 text (invalid byte at
// offset N)".
Status check_utf8(std::string_view text, const std::string& name);

}  // namespace rc::library
