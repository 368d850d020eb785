#include "chat/code-highlight.h"

#include <QSet>
#include <QStringList>
#include <initializer_list>
#include <map>
#include <string>

namespace rc::ui {

namespace {

// What a language looks like to a highlighter that only colours.
struct Lang {
  QSet<QString> keywords;
  bool slashComments = false;    // // to the end of the line
  bool blockComments = false;    // /* ... */
  bool hashComments = false;     // # to the end of the line
  bool dashComments = false;     // -- to the end of the line (SQL)
  bool tripleQuotes = false;     // Python's """ and '''
  bool backticks = false;        // `template`, `raw` or `command` strings
  bool shortCharQuotes = false;  // '...' only as a short char literal (Rust lifetimes)
  bool hashNeedsSpace = false;   // shell: # starts a comment only at a word's start
  bool preprocessor = false;     // C/C++: #include as a keyword
  bool foldCase = false;         // SQL keywords in any case
};

// A language from its keywords (space-separated) and the Lang flags it sets.
Lang lang(const std::string& keywords, std::initializer_list<bool Lang::*> flags) {
  Lang l;
  for (const QString& w :
       QString::fromStdString(keywords).split(QLatin1Char(' '), Qt::SkipEmptyParts))
    l.keywords.insert(w);
  for (bool Lang::*flag : flags) l.*flag = true;
  return l;
}

constexpr const char* kC =
    "auto break case char const continue default do double else enum extern float for goto if "
    "inline int long register restrict return short signed sizeof static struct switch typedef "
    "union unsigned void volatile while bool true false NULL size_t";
constexpr const char* kCpp =
    " alignas alignof and asm catch class concept consteval constexpr constinit const_cast "
    "co_await co_return co_yield decltype delete dynamic_cast explicit export final friend "
    "mutable namespace new noexcept not nullptr operator or override private protected public "
    "reinterpret_cast requires static_assert static_cast std template this thread_local throw "
    "try typeid typename using virtual wchar_t char8_t char16_t char32_t xor";
constexpr const char* kJs =
    "async await break case catch class const continue debugger default delete do else export "
    "extends false finally for function get if import in instanceof let new null of return set "
    "static super switch this throw true try typeof undefined var void while with yield";
constexpr const char* kTs =
    " abstract any as bigint boolean declare enum implements infer interface is keyof namespace "
    "never number private protected public readonly string symbol type unknown";
constexpr const char* kPython =
    "False None True and as assert async await break case class continue def del elif else "
    "except finally for from global if import in is lambda match nonlocal not or pass raise "
    "return self try while with yield";
constexpr const char* kShell =
    "if then else elif fi case esac for while until do done in function select return exit "
    "local export readonly declare set unset shift break continue source alias echo cd";
constexpr const char* kRust =
    "as async await break const continue crate dyn else enum extern false fn for if impl in "
    "let loop match mod move mut pub ref return self Self static struct super trait true type "
    "unsafe use where while Some None Ok Err bool char str String Vec Box Option Result i8 "
    "i16 i32 i64 i128 isize u8 u16 u32 u64 u128 usize f32 f64";
constexpr const char* kGo =
    "break case chan const continue default defer else fallthrough for func go goto if "
    "import interface map package range return select struct switch type var nil true false "
    "iota append bool byte error float64 int int64 len make new rune string uint8";
constexpr const char* kSql =
    "select from where insert into values update set delete create table drop alter add "
    "index primary key foreign references not null and or in is like between join left "
    "right inner outer full cross on as group by order having limit offset distinct union "
    "all case when then else end exists default unique check view trigger begin commit "
    "rollback transaction with returning integer text real blob varchar int count sum avg "
    "min max asc desc if replace pragma virtual using";

const std::map<QString, Lang>& languages() {
  using L = Lang;
  static const std::map<QString, Lang> langs = {
      {"c", lang(kC, {&L::slashComments, &L::blockComments, &L::preprocessor})},
      {"cpp",
       lang(std::string(kC) + kCpp, {&L::slashComments, &L::blockComments, &L::preprocessor})},
      {"python", lang(kPython, {&L::hashComments, &L::tripleQuotes})},
      {"javascript", lang(kJs, {&L::slashComments, &L::blockComments, &L::backticks})},
      {"typescript",
       lang(std::string(kJs) + kTs, {&L::slashComments, &L::blockComments, &L::backticks})},
      {"json", lang("true false null", {})},
      {"shell", lang(kShell, {&L::hashComments, &L::hashNeedsSpace, &L::backticks})},
      {"rust", lang(kRust, {&L::slashComments, &L::blockComments, &L::shortCharQuotes})},
      {"go", lang(kGo, {&L::slashComments, &L::blockComments, &L::backticks})},
      {"sql", lang(kSql, {&L::dashComments, &L::blockComments, &L::foldCase})},
  };
  return langs;
}

bool isIdentStart(QChar ch) { return ch.isLetter() || ch == QLatin1Char('_'); }
bool isIdentChar(QChar ch) { return ch.isLetterOrNumber() || ch == QLatin1Char('_'); }

// Index one past the end of the line holding `i` (the '\n' itself is left).
int lineEnd(const QString& s, int i) {
  const int nl = s.indexOf(QLatin1Char('\n'), i);
  return nl < 0 ? int(s.size()) : nl;
}

// End of a string that opened at `i` with `quote`: past the closing quote,
// or the end of the line (the end of the text for backticks) when unclosed.
int stringEnd(const QString& s, int i, QChar quote) {
  const bool multiline = quote == QLatin1Char('`');
  for (int j = i + 1; j < s.size(); ++j) {
    if (s[j] == QLatin1Char('\\')) {
      ++j;
      continue;
    }
    if (s[j] == quote) return j + 1;
    if (s[j] == QLatin1Char('\n') && !multiline) return j;
  }
  return int(s.size());
}

int numberEnd(const QString& s, int i) {
  const bool hex = s.mid(i, 2).compare(QLatin1String("0x"), Qt::CaseInsensitive) == 0;
  int j = i;
  while (j < s.size()) {
    const QChar ch = s[j];
    const bool exponentSign = !hex && (ch == QLatin1Char('+') || ch == QLatin1Char('-')) && j > i &&
                              (s[j - 1] == QLatin1Char('e') || s[j - 1] == QLatin1Char('E'));
    if (!isIdentChar(ch) && ch != QLatin1Char('.') && !exponentSign) break;
    ++j;
  }
  return j;
}

}  // namespace

QString canonicalCodeLanguage(const QString& fenceInfo) {
  const QString word = fenceInfo.trimmed().section(QLatin1Char(' '), 0, 0).toLower();
  static const std::map<QString, QString> aliases = [] {
    std::map<QString, QString> m;
    const auto add = [&m](const char* canonical, const char* names) {
      for (const QString& n : QString::fromLatin1(names).split(QLatin1Char(' ')))
        m[n] = QString::fromLatin1(canonical);
    };
    add("c", "c h");
    add("cpp", "cpp c++ cc cxx hpp hh hxx cu cuda");
    add("python", "python py python3 py3 gyp");
    add("javascript", "javascript js jsx mjs cjs node");
    add("typescript", "typescript ts tsx");
    add("json", "json jsonc json5 jsonl");
    add("shell", "shell sh bash zsh ksh console shell-session shellsession");
    add("rust", "rust rs");
    add("go", "go golang");
    add("sql", "sql sqlite postgresql postgres psql mysql plsql");
    return m;
  }();
  const auto it = aliases.find(word);
  return it == aliases.end() ? QString() : it->second;
}

std::vector<CodeSpan> highlightCode(const QString& fenceInfo, const QString& code) {
  std::vector<CodeSpan> spans;
  const auto lang = languages().find(canonicalCodeLanguage(fenceInfo));
  if (lang == languages().end()) return spans;
  const Lang& L = lang->second;
  const QString& s = code;
  const auto add = [&spans](int start, int end, CodeToken kind) {
    if (end > start) spans.push_back({start, end - start, kind});
  };
  int i = 0;
  while (i < s.size()) {
    const QChar ch = s[i];
    const QStringView rest = QStringView(s).mid(i);
    const bool wordStart = i == 0 || !isIdentChar(s[i - 1]);
    if (L.slashComments && rest.startsWith(QLatin1String("//"))) {
      const int end = lineEnd(s, i);
      add(i, end, CodeToken::Comment);
      i = end;
    } else if (L.blockComments && rest.startsWith(QLatin1String("/*"))) {
      const int close = s.indexOf(QLatin1String("*/"), i + 2);
      const int end = close < 0 ? int(s.size()) : close + 2;
      add(i, end, CodeToken::Comment);
      i = end;
    } else if (L.dashComments && rest.startsWith(QLatin1String("--"))) {
      const int end = lineEnd(s, i);
      add(i, end, CodeToken::Comment);
      i = end;
    } else if (L.preprocessor && ch == QLatin1Char('#') && i + 1 < s.size() &&
               isIdentStart(s[i + 1])) {
      int end = i + 1;
      while (end < s.size() && isIdentChar(s[end])) ++end;
      add(i, end, CodeToken::Keyword);
      i = end;
    } else if (L.hashComments && ch == QLatin1Char('#') &&
               (!L.hashNeedsSpace || i == 0 || s[i - 1].isSpace())) {
      const int end = lineEnd(s, i);
      add(i, end, CodeToken::Comment);
      i = end;
    } else if (L.tripleQuotes && (rest.startsWith(QLatin1String("\"\"\"")) ||
                                  rest.startsWith(QLatin1String("'''")))) {
      const int close = s.indexOf(rest.left(3), i + 3);
      const int end = close < 0 ? int(s.size()) : close + 3;
      add(i, end, CodeToken::String);
      i = end;
    } else if (ch == QLatin1Char('"') || (ch == QLatin1Char('`') && L.backticks) ||
               (ch == QLatin1Char('\'') && !L.shortCharQuotes)) {
      const int end = stringEnd(s, i, ch);
      add(i, end, CodeToken::String);
      i = end;
    } else if (ch == QLatin1Char('\'') && L.shortCharQuotes) {
      // 'a' or '\n' is a char; 'a without a close nearby is a lifetime.
      const int end = stringEnd(s, i, ch);
      if (end - i <= 4 && end > i + 2 && s[end - 1] == QLatin1Char('\'')) {
        add(i, end, CodeToken::String);
        i = end;
      } else {
        ++i;
      }
    } else if (ch.isDigit() && wordStart) {
      const int end = numberEnd(s, i);
      add(i, end, CodeToken::Number);
      i = end;
    } else if (isIdentStart(ch)) {
      int end = i + 1;
      while (end < s.size() && isIdentChar(s[end])) ++end;
      const QString word = s.mid(i, end - i);
      if (L.keywords.contains(L.foldCase ? word.toLower() : word)) add(i, end, CodeToken::Keyword);
      i = end;
    } else {
      ++i;
    }
  }
  return spans;
}

}  // namespace rc::ui
