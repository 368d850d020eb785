// Minimal PDF files built byte by byte for the extraction tests: pages with
// a text layer (Helvetica, one line per string), a page with only an image
// (a scan), and an encrypted file. The cross-reference table carries each
// object's real offset, so poppler reads them as valid files, not as
// damaged ones it rebuilds.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

namespace rc::library::testing {

struct PdfPage {
  std::vector<std::string> lines;  // ASCII text; empty: the page shows an image only
};

inline std::string pdf_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '(' || c == ')' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

// encrypted: an /Encrypt dictionary (standard handler, RC4 40-bit) whose
// user password is not empty, so the file cannot be opened without one.
inline std::string make_pdf(const std::vector<PdfPage>& pages, bool encrypted = false) {
  std::vector<std::string> objects;  // objects[i] is object i + 1
  const int n = static_cast<int>(pages.size());
  // 1 catalog, 2 pages, 3 font, 4 image; then per page: page, contents.
  std::string kids;
  for (int i = 0; i < n; ++i) kids += std::to_string(5 + 2 * i) + " 0 R ";
  objects.push_back("<< /Type /Catalog /Pages 2 0 R >>");
  objects.push_back("<< /Type /Pages /Kids [" + kids + "] /Count " + std::to_string(n) + " >>");
  objects.push_back("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>");
  const std::string pixels = "\x10\x80\xF0\x40";
  objects.push_back(
      "<< /Type /XObject /Subtype /Image /Width 2 /Height 2 /ColorSpace /DeviceGray "
      "/BitsPerComponent 8 /Length 4 >>\nstream\n" +
      pixels + "\nendstream");
  for (int i = 0; i < n; ++i) {
    std::string content;
    if (pages[i].lines.empty()) {
      content = "q 300 0 0 300 100 300 cm /Im1 Do Q";
    } else {
      content = "BT /F1 12 Tf 16 TL 72 720 Td";
      for (const std::string& line : pages[i].lines) content += " (" + pdf_escape(line) + ") ' ";
      content += " ET";
    }
    objects.push_back(
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << "
        "/Font << /F1 3 0 R >> /XObject << /Im1 4 0 R >> >> /Contents " +
        std::to_string(6 + 2 * i) + " 0 R >>");
    objects.push_back("<< /Length " + std::to_string(content.size()) + " >>\nstream\n" + content +
                      "\nendstream");
  }
  if (encrypted) {
    const std::string o(64, 'A'), u(64, '7');
    objects.push_back("<< /Filter /Standard /V 1 /R 2 /O <" + o + "> /U <" + u + "> /P -44 >>");
  }
  std::string pdf = "%PDF-1.4\n%\xE2\xE3\xCF\xD3\n";
  std::vector<size_t> offsets;
  for (size_t i = 0; i < objects.size(); ++i) {
    offsets.push_back(pdf.size());
    pdf += std::to_string(i + 1) + " 0 obj\n" + objects[i] + "\nendobj\n";
  }
  const size_t xref = pdf.size();
  pdf += "xref\n0 " + std::to_string(objects.size() + 1) + "\n0000000000 65535 f \n";
  for (size_t off : offsets) {
    char entry[21];
    std::snprintf(entry, sizeof entry, "%010zu 00000 n \n", off);
    pdf += entry;
  }
  pdf += "trailer\n<< /Size " + std::to_string(objects.size() + 1) + " /Root 1 0 R";
  if (encrypted) {
    pdf += " /Encrypt " + std::to_string(objects.size()) +
           " 0 R /ID [<00112233445566778899AABBCCDDEEFF> <00112233445566778899AABBCCDDEEFF>]";
  }
  pdf += " >>\nstartxref\n" + std::to_string(xref) + "\n%%EOF\n";
  return pdf;
}

}  // namespace rc::library::testing
