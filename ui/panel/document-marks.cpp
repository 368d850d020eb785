#include "panel/document-marks.h"

#include <string_view>

namespace rc::ui::panel {
namespace {
// The layout's header (engine/runtime/document-layout.cpp), at a line start.
constexpr std::string_view kHeader = "### Document: ";
// U+25A4, a square with horizontal lines: in the panel font's shape range.
constexpr std::string_view kMark = "\u25A4 ";
}  // namespace

std::vector<std::string> document_names(const std::string& decoded, std::string_view before) {
  const std::string text = std::string(before) + decoded;
  std::vector<std::string> names;
  for (size_t at = text.find(kHeader); at != std::string::npos;
       at = text.find(kHeader, at + kHeader.size())) {
    if (at > 0 && text[at - 1] != '\n') continue;
    const size_t start = at + kHeader.size();
    const size_t end = text.find('\n', start);
    // A header cut by the node's end is not a whole name yet; one that ends
    // before the span is the parent's.
    if (end == std::string::npos || end < before.size()) continue;
    if (end > start) names.push_back(text.substr(start, end - start));
  }
  return names;
}

std::string with_document_mark(const std::string& decoded, std::string_view before) {
  const std::vector<std::string> names = document_names(decoded, before);
  if (names.empty()) return decoded;
  std::string out;
  for (const std::string& n : names) out += std::string(kMark) + n + " ";
  return out + "\u00B7 " + decoded;
}

}  // namespace rc::ui::panel
