// A small syntax highlighter for the code blocks of chat replies: keywords,
// strings, comments and numbers of the common languages (C/C++, Python,
// JavaScript/TypeScript, JSON, shell, Rust, Go, SQL). It only colours; it
// never parses, so unbalanced or streaming code (an unclosed string or
// comment) simply runs to the end of the text. Pure functions, any thread.
// (Debian bookworm ships KSyntaxHighlighting for Qt 5 only.)
#pragma once

#include <QString>
#include <vector>

namespace rc::ui {

enum class CodeToken { Keyword, String, Comment, Number };

struct CodeSpan {
  int start = 0;  // in UTF-16 units of the code text
  int length = 0;
  CodeToken kind = CodeToken::Keyword;
};

// The language a fence's info string names ("py", "C++", "bash title=x"),
// canonical: "c", "cpp", "python", "javascript", "typescript", "json",
// "shell", "rust", "go", "sql"; empty when the highlighter does not know it.
QString canonicalCodeLanguage(const QString& fenceInfo);

// The spans to colour in `code`, in order and not overlapping; empty for a
// language canonicalCodeLanguage() does not know.
std::vector<CodeSpan> highlightCode(const QString& fenceInfo, const QString& code);

}  // namespace rc::ui
