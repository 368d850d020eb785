// Extraction of each supported format and the refusal of each bad input
// (app/library/extract.h). The PDFs are built in the test (pdf-maker.h).
#include <filesystem>

#include <gtest/gtest.h>

#include "../store/store-test-util.h"
#include "library/extract.h"
#include "pdf-maker.h"

namespace rc::library {
namespace {
using store::testing::TempDir;
using store::testing::write_bytes;
using testing::make_pdf;

Extracted extract_ok(const std::filesystem::path& p) {
  auto r = extract_file(p);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? r.value() : Extracted{};
}

void expect_refused(const std::filesystem::path& p, const std::string& why) {
  auto r = extract_file(p);
  ASSERT_FALSE(r.ok()) << p << " was accepted";
  EXPECT_NE(r.status().message().find(p.string()), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find(why), std::string::npos) << r.status().message();
  EXPECT_EQ(r.status().message().find('\n'), std::string::npos) << "one line";
}

TEST(Extract, PlainTextMarkdownAndSourceAsTheyAre) {
  TempDir dir;
  write_bytes(dir / "notes.txt", "\xEF\xBB\xBFline one\r\nline two\rthree\n");
  write_bytes(dir / "readme.md", "# Title\n\nSome *markdown* text.\n");
  write_bytes(dir / "main.cpp", "int main() { return 0; }  // caf\xC3\xA9\n");
  const Extracted txt = extract_ok(dir / "notes.txt");
  EXPECT_EQ(txt.text, "line one\nline two\nthree\n");  // BOM gone, line ends "\n"
  EXPECT_EQ(txt.format, "text");
  const Extracted md = extract_ok(dir / "readme.md");
  EXPECT_EQ(md.text, "# Title\n\nSome *markdown* text.\n");
  EXPECT_EQ(md.format, "markdown");
  EXPECT_EQ(extract_ok(dir / "main.cpp").text, "int main() { return 0; }  // caf\xC3\xA9\n");
}

TEST(Extract, HtmlAsItsVisibleText) {
  TempDir dir;
  write_bytes(dir / "page.html",
              "<!DOCTYPE html><html><head><title>T</title><style>p{color:red}</style></head>"
              "<body><script>var x = '<p>hidden</p>';</script><!-- a comment -->"
              "<h1>Radix &amp; trees</h1><p>Caches&nbsp;keep <b>pre</b>fixes &lt;KV&gt; "
              "&#8212; &#x263A; &unknown;</p><ul><li>one</li><li>two</li></ul></body></html>");
  const Extracted html = extract_ok(dir / "page.html");
  EXPECT_EQ(html.format, "html");
  EXPECT_EQ(html.text,
            "Radix & trees\n\nCaches\xC2\xA0keep prefixes <KV> \xE2\x80\x94 \xE2\x98\xBA "
            "&unknown;\n\none\n\ntwo\n");
  // Recognised by its content as well as by its name.
  write_bytes(dir / "saved", "  <html><body><p>a</p><p>b</p></body></html>");
  EXPECT_EQ(extract_ok(dir / "saved").text, "a\n\nb\n");
}

TEST(Extract, PdfTextLayer) {
  TempDir dir;
  write_bytes(
      dir / "paper.pdf",
      make_pdf({{{"Radix attention shares prefixes.", "Second line (x)."}}, {{"Page two text."}}}));
  const Extracted pdf = extract_ok(dir / "paper.pdf");
  EXPECT_EQ(pdf.format, "pdf");
  EXPECT_NE(pdf.text.find("Radix attention shares prefixes."), std::string::npos) << pdf.text;
  EXPECT_NE(pdf.text.find("Second line (x)."), std::string::npos) << pdf.text;
  EXPECT_NE(pdf.text.find("Page two text."), std::string::npos) << pdf.text;
  EXPECT_LT(pdf.text.find("Second"), pdf.text.find("Page two")) << "pages in order";
}

TEST(Extract, ScannedPdfIsRefused) {
  TempDir dir;
  write_bytes(dir / "scan.pdf", make_pdf({{}, {}}));
  expect_refused(dir / "scan.pdf", "no text layer");
}

TEST(Extract, EncryptedPdfIsRefused) {
  TempDir dir;
  write_bytes(dir / "secret.pdf", make_pdf({{{"hidden words"}}}, /*encrypted=*/true));
  expect_refused(dir / "secret.pdf", "encrypted PDF");
}

TEST(Extract, CorruptAndTruncatedPdfAreRefused) {
  TempDir dir;
  write_bytes(dir / "corrupt.pdf", "%PDF-1.4\nthis is not a PDF body at all\n%%EOF\n");
  expect_refused(dir / "corrupt.pdf", "damaged PDF");
  const std::string whole = make_pdf({{{"Some words here."}}});
  write_bytes(dir / "cut.pdf", whole.substr(0, whole.size() / 2));
  expect_refused(dir / "cut.pdf", "truncated PDF");
}

TEST(Extract, BadInputIsRefusedWithOneLine) {
  TempDir dir;
  write_bytes(dir / "empty.txt", "");
  expect_refused(dir / "empty.txt", "is empty");
  write_bytes(dir / "blank.txt", " \n\n\t\n");
  expect_refused(dir / "blank.txt", "has no text");
  write_bytes(dir / "image.png", std::string("\x89PNG\r\n\x1a\n\0\0\0\rIHDR", 16));
  expect_refused(dir / "image.png", "binary file");
  write_bytes(dir / "latin1.txt", "caf\xE9 au lait\n");
  expect_refused(dir / "latin1.txt", "not UTF-8 text (invalid byte at offset 3)");
  write_bytes(dir / "overlong.txt", "ab\xC0\xAF");
  expect_refused(dir / "overlong.txt", "not UTF-8 text (invalid byte at offset 2)");
  write_bytes(dir / "cut-char.txt", "ab\xE2\x82");
  expect_refused(dir / "cut-char.txt", "not UTF-8");
  {
    write_bytes(dir / "huge.txt", "x");
    std::filesystem::resize_file(dir / "huge.txt", kMaxFileBytes + 1);  // sparse: no disk used
  }
  expect_refused(dir / "huge.txt", "larger than the 50 MB");
  EXPECT_EQ(extract_file(dir / "missing.txt").status().code(), StatusCode::not_found);
  expect_refused(dir.path(), "not a regular file");
}

TEST(Extract, Utf8CheckAcceptsEveryValidLength) {
  EXPECT_TRUE(check_utf8("a\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80", "x").ok());
  EXPECT_FALSE(check_utf8("\xED\xA0\x80", "x").ok()) << "a surrogate";
  EXPECT_FALSE(check_utf8("\xF4\x90\x80\x80", "x").ok()) << "past U+10FFFF";
}

}  // namespace
}  // namespace rc::library
