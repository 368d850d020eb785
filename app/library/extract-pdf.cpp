// pdf_text(): a PDF's text layer through poppler (Debian's
// libpoppler-cpp). Refuses what would silently yield the wrong text:
// encrypted files, files poppler cannot open, and files whose end is
// missing (poppler would rebuild what it can from a truncated file and
// return part of the document as if it were the whole).
#include <memory>
#include <mutex>

#include <poppler-document.h>
#include <poppler-global.h>
#include <poppler-page.h>

#include "library/extract.h"

namespace rc::library {
namespace {

// Poppler reports every syntax problem on stderr by default; the user gets
// our one line instead.
void quiet(const std::string&, void*) {}

Status refused(const std::string& name, const std::string& why) {
  return {StatusCode::invalid_argument, name + ": " + why};
}

}  // namespace

Result<std::string> pdf_text(std::string_view bytes, const std::string& name) {
  static std::once_flag once;
  std::call_once(once, [] { poppler::set_debug_error_function(quiet, nullptr); });

  // A complete PDF ends with "%%EOF" (and perhaps a line break or a few
  // bytes of padding after it).
  const size_t tail = bytes.size() > 1024 ? bytes.size() - 1024 : 0;
  if (bytes.substr(tail).find("%%EOF") == std::string_view::npos) {
    return refused(name, "is a truncated PDF (its end is missing); copy it again");
  }
  std::unique_ptr<poppler::document> doc(
      poppler::document::load_from_raw_data(bytes.data(), static_cast<int>(bytes.size())));
  if (!doc) return refused(name, "is a damaged PDF that cannot be read");
  if (doc->is_locked()) {
    return refused(name, "is an encrypted PDF (it needs a password); save an unprotected copy");
  }
  std::string text;
  for (int i = 0; i < doc->pages(); ++i) {
    std::unique_ptr<poppler::page> page(doc->create_page(i));
    if (!page) return refused(name, "is a damaged PDF (page " + std::to_string(i + 1) + ")");
    const poppler::byte_array utf8 =
        page->text(poppler::rectf(), poppler::page::non_raw_non_physical_layout).to_utf8();
    if (!text.empty()) text += "\n\n";
    text.append(utf8.begin(), utf8.end());
  }
  // Poppler writes a page break as a form feed and may end lines with "\r\n".
  std::string clean;
  clean.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\r') continue;
    clean += text[i] == '\f' ? '\n' : text[i];
  }
  return clean;
}

}  // namespace rc::library
