#include "library/extract.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <system_error>

namespace rc::library {
namespace {

Status refused(const std::string& name, const std::string& why) {
  return {StatusCode::invalid_argument, name + ": " + why};
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

bool looks_like_html(std::string_view text) {
  const size_t start = text.find_first_not_of(" \t\r\n");
  if (start == std::string_view::npos) return false;
  const std::string head = lower(std::string(text.substr(start, 15)));
  return head.starts_with("<!doctype html") || head.starts_with("<html");
}

// "\r\n" and lone "\r" become "\n", so chunk boundaries and hashes do not
// depend on the platform that wrote the file.
std::string normalise_line_ends(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\r') {
      out += text[i];
    } else {
      out += '\n';
      if (i + 1 < text.size() && text[i + 1] == '\n') ++i;
    }
  }
  return out;
}

}  // namespace

Status check_utf8(std::string_view text, const std::string& name) {
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  for (size_t i = 0; i < n;) {
    const unsigned char c = p[i];
    int len = 0;
    std::uint32_t cp = 0, min = 0;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xE0) == 0xC0) {
      len = 2, cp = c & 0x1F, min = 0x80;
    } else if ((c & 0xF0) == 0xE0) {
      len = 3, cp = c & 0x0F, min = 0x800;
    } else if ((c & 0xF8) == 0xF0) {
      len = 4, cp = c & 0x07, min = 0x10000;
    }
    bool ok = len > 0 && i + len <= n;
    for (int k = 1; ok && k < len; ++k) {
      ok = (p[i + k] & 0xC0) == 0x80;
      cp = (cp << 6) | (p[i + k] & 0x3F);
    }
    // Overlong forms, surrogates and values past U+10FFFF are not UTF-8.
    if (!ok || cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
      return refused(name, "is not UTF-8 text (invalid byte at offset " + std::to_string(i) +
                               "); convert it to UTF-8 first");
    }
    i += len;
  }
  return {};
}

Result<Extracted> extract_file(const std::filesystem::path& file) {
  namespace fs = std::filesystem;
  const std::string name = file.string();
  std::error_code ec;
  const auto st = fs::status(file, ec);
  if (!fs::exists(st)) return Status(StatusCode::not_found, name + ": no such file");
  if (!fs::is_regular_file(st)) return refused(name, "is not a regular file");
  const auto size = fs::file_size(file, ec);
  if (ec) return Status(StatusCode::internal, name + ": cannot read (" + ec.message() + ")");
  if (size == 0) return refused(name, "is empty");
  if (static_cast<std::int64_t>(size) > kMaxFileBytes) {
    return refused(
        name, "is larger than the 50 MB a document may have (" + std::to_string(size) + " bytes)");
  }
  std::string bytes(size, '\0');
  std::ifstream in(file, std::ios::binary);
  if (!in.read(bytes.data(), static_cast<std::streamsize>(size))) {
    return Status(StatusCode::internal, name + ": cannot read");
  }

  Extracted out;
  const std::string ext = lower(file.extension().string());
  if (bytes.starts_with("%PDF-")) {
    auto text = pdf_text(bytes, name);
    if (!text.ok()) return text.status();
    out = {std::move(text.value()), "pdf"};
  } else {
    // A NUL never occurs in text; it is the surest sign of a binary file
    // (an image, an archive, an executable), whatever its extension.
    if (bytes.find('\0') != std::string::npos) {
      return refused(name, "is a binary file, not text, HTML or PDF");
    }
    std::string_view body = bytes;
    if (body.starts_with("\xEF\xBB\xBF")) body.remove_prefix(3);
    if (Status s = check_utf8(body, name); !s.ok()) return s;
    if (ext == ".html" || ext == ".htm" || ext == ".xhtml" || looks_like_html(body)) {
      out = {html_text(normalise_line_ends(body)), "html"};
    } else {
      out = {normalise_line_ends(body), ext == ".md" || ext == ".markdown" ? "markdown" : "text"};
    }
  }
  if (out.text.find_first_not_of(" \t\n\f\v") == std::string::npos) {
    return refused(name, out.format == "pdf" ? "is a PDF with no text layer (a scanned document?); "
                                               "run OCR on it first"
                                             : "has no text");
  }
  return out;
}

}  // namespace rc::library
