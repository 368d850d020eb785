// The code blocks' highlighter (ui/chat/code-highlight.h): fence names to
// languages, and keywords, strings, comments and numbers in each language.
#include <gtest/gtest.h>

#include <QString>
#include <map>
#include <vector>

#include "chat/code-highlight.h"

using namespace rc::ui;

namespace {

// Text of every span of `kind`, in order.
std::vector<QString> tokens(const QString& lang, const QString& code, CodeToken kind) {
  std::vector<QString> out;
  for (const CodeSpan& s : highlightCode(lang, code))
    if (s.kind == kind) out.push_back(code.mid(s.start, s.length));
  return out;
}

using Words = std::vector<QString>;

}  // namespace

TEST(CodeHighlight, FenceNamesMapToLanguages) {
  EXPECT_EQ(canonicalCodeLanguage("py"), "python");
  EXPECT_EQ(canonicalCodeLanguage("Python"), "python");
  EXPECT_EQ(canonicalCodeLanguage("c++"), "cpp");
  EXPECT_EQ(canonicalCodeLanguage("bash title=run.sh"), "shell");
  EXPECT_EQ(canonicalCodeLanguage("ts"), "typescript");
  EXPECT_EQ(canonicalCodeLanguage("rs"), "rust");
  EXPECT_EQ(canonicalCodeLanguage("golang"), "go");
  EXPECT_EQ(canonicalCodeLanguage("sqlite"), "sql");
  EXPECT_EQ(canonicalCodeLanguage("json"), "json");
  EXPECT_EQ(canonicalCodeLanguage("brainfuck"), "");
  EXPECT_EQ(canonicalCodeLanguage(""), "");
  EXPECT_TRUE(highlightCode("brainfuck", "if x then 1").empty());
}

TEST(CodeHighlight, Python) {
  const QString code =
      "def f(x):  # add one\n    return x + 1.5e-3  # ok\ns = 'if' + \"\"\"doc\nmore\"\"\"";
  EXPECT_EQ(tokens("python", code, CodeToken::Keyword), (Words{"def", "return"}));
  EXPECT_EQ(tokens("python", code, CodeToken::Comment), (Words{"# add one", "# ok"}));
  EXPECT_EQ(tokens("python", code, CodeToken::Number), (Words{"1.5e-3"}));
  EXPECT_EQ(tokens("python", code, CodeToken::String), (Words{"'if'", "\"\"\"doc\nmore\"\"\""}));
}

TEST(CodeHighlight, CAndCpp) {
  const QString code =
      "#include <vector>\n/* a\nblock */ int main() { auto s = \"x\\\"y\"; return 0x1F; } // end";
  EXPECT_EQ(tokens("cpp", code, CodeToken::Keyword), (Words{"#include", "int", "auto", "return"}));
  EXPECT_EQ(tokens("cpp", code, CodeToken::Comment), (Words{"/* a\nblock */", "// end"}));
  EXPECT_EQ(tokens("cpp", code, CodeToken::String), (Words{"\"x\\\"y\""}));
  EXPECT_EQ(tokens("cpp", code, CodeToken::Number), (Words{"0x1F"}));
  EXPECT_EQ(tokens("c", "class x;", CodeToken::Keyword), Words{});  // C has no class
  EXPECT_EQ(tokens("c++", "class x;", CodeToken::Keyword), (Words{"class"}));
}

TEST(CodeHighlight, JavaScriptAndTypeScript) {
  const QString code = "const t = `a ${b}`; let n = null; // c\ninterface I {}";
  EXPECT_EQ(tokens("js", code, CodeToken::Keyword), (Words{"const", "let", "null"}));
  EXPECT_EQ(tokens("ts", code, CodeToken::Keyword), (Words{"const", "let", "null", "interface"}));
  EXPECT_EQ(tokens("js", code, CodeToken::String), (Words{"`a ${b}`"}));
}

TEST(CodeHighlight, JsonShellRustGoSql) {
  const QString json = "{\"a\": [1, -2.5, true, null]}";
  EXPECT_EQ(tokens("json", json, CodeToken::String), (Words{"\"a\""}));
  EXPECT_EQ(tokens("json", json, CodeToken::Number), (Words{"1", "2.5"}));
  EXPECT_EQ(tokens("json", json, CodeToken::Keyword), (Words{"true", "null"}));

  const QString sh = "for f in *.txt; do echo \"$f\" # each\ndone; echo $#";
  EXPECT_EQ(tokens("sh", sh, CodeToken::Keyword),
            (Words{"for", "in", "do", "echo", "done", "echo"}));
  EXPECT_EQ(tokens("sh", sh, CodeToken::Comment), (Words{"# each"}));  // $# is no comment

  const QString rs = "fn f<'a>(s: &'a str) -> char { 'x' } // r";
  EXPECT_EQ(tokens("rust", rs, CodeToken::Keyword), (Words{"fn", "str", "char"}));
  EXPECT_EQ(tokens("rust", rs, CodeToken::String), (Words{"'x'"}));  // lifetimes are not chars
  EXPECT_EQ(tokens("rust", rs, CodeToken::Comment), (Words{"// r"}));

  const QString go = "func main() { s := `raw` ; var n int = 42 }";
  EXPECT_EQ(tokens("go", go, CodeToken::Keyword), (Words{"func", "var", "int"}));
  EXPECT_EQ(tokens("go", go, CodeToken::String), (Words{"`raw`"}));
  EXPECT_EQ(tokens("go", go, CodeToken::Number), (Words{"42"}));

  const QString sql = "SELECT name FROM t WHERE id = 3 -- one\n/* c */ and x2 = 'it''s'";
  EXPECT_EQ(tokens("sql", sql, CodeToken::Keyword), (Words{"SELECT", "FROM", "WHERE", "and"}));
  EXPECT_EQ(tokens("sql", sql, CodeToken::Comment), (Words{"-- one", "/* c */"}));
  EXPECT_EQ(tokens("sql", sql, CodeToken::Number), (Words{"3"}));  // not the 2 of x2
}

TEST(CodeHighlight, UnclosedStringsAndCommentsRunOut) {
  // A reply still streaming: nothing is lost or thrown.
  EXPECT_EQ(tokens("c", "x = \"abc\ny", CodeToken::String), (Words{"\"abc"}));
  EXPECT_EQ(tokens("c", "/* open", CodeToken::Comment), (Words{"/* open"}));
  EXPECT_EQ(tokens("python", "'''doc", CodeToken::String), (Words{"'''doc"}));
}
