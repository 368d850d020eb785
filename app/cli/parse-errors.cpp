#include "parse-errors.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <regex>

namespace rc::cli {

namespace {

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

// "179769313486...000.000000" or "1024.000000" as a person writes it.
std::string plain_number(const std::string& text) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end == text.c_str()) return text;
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.15g", v);
  return buf;
}

bool huge(const std::string& text) { return std::strtod(text.c_str(), nullptr) > 1e300; }

// What an option accepts, from its CLI11 type name: "INT:INT in [0 -
// 65535]", "FLOAT:NONNEGATIVE", "TEXT:{a,b}", "UINT"...
std::string describe_allowed(const std::string& type_name) {
  const std::string base = type_name.substr(0, type_name.find(':'));
  const bool whole = base == "INT" || base == "UINT";
  std::string what = whole ? "a whole number" : base == "FLOAT" ? "a number" : "a value";
  std::smatch m;
  if (std::regex_search(type_name, m, std::regex(R"(in \[(\S+) - (\S+)\])"))) {
    if (huge(m[2])) return what + " of " + plain_number(m[1]) + " or more";
    return what + " from " + plain_number(m[1]) + " to " + plain_number(m[2]);
  }
  if (std::regex_search(type_name, m, std::regex(R"(\{([^}]*)\})"))) {
    std::string list = m[1];
    for (size_t p = 0; (p = list.find(',', p)) != std::string::npos; p += 2)
      list.insert(p + 1, " ");
    return "one of " + list;
  }
  if (type_name.find("NONNEGATIVE") != std::string::npos || base == "UINT") {
    return what + " of 0 or more";
  }
  if (type_name.find("POSITIVE") != std::string::npos) {
    return whole ? what + " of 1 or more" : what + " above 0";
  }
  return what;
}

std::vector<std::string> names_of(const std::vector<const CLI::App*>& apps) {
  std::vector<std::string> out;
  for (const CLI::App* a : apps) out.push_back(a->get_name());
  return out;
}

// The subcommand the arguments name (the first word that is one), or null.
const CLI::App* named_command(const CLI::App& root, const std::vector<std::string>& args) {
  for (const std::string& a : args) {
    if (a.empty() || a[0] == '-') continue;
    for (const CLI::App* sub : root.get_subcommands({})) {
      if (sub->get_name() == a) return sub;
    }
    return nullptr;
  }
  return nullptr;
}

std::string bad_value(const CLI::App& app, const std::string& flag, const std::string& value) {
  const CLI::Option* opt = app.get_option_no_throw(flag);
  const std::string allowed = opt ? describe_allowed(opt->get_type_name()) : "another value";
  return flag + " " + (value.empty() ? "''" : value) + " is not allowed: expected " + allowed;
}

std::string unexpected(const CLI::App& app, const std::string& list) {
  // "1 --bogus" / "extra": the first unknown option, else the first word.
  std::string first_word, first_flag;
  size_t p = 0;
  while (p < list.size()) {
    const size_t q = std::min(list.find(' ', p), list.size());
    const std::string tok = list.substr(p, q - p);
    if (!tok.empty() && tok[0] == '-' && first_flag.empty()) first_flag = tok;
    if (!tok.empty() && first_word.empty()) first_word = tok;
    p = q + 1;
  }
  const std::string where = app.get_parent() ? " for " + app.get_name() : "";
  if (!first_flag.empty()) {
    const std::string flag = first_flag.substr(0, first_flag.find('='));
    std::vector<std::string> names;
    for (const CLI::Option* o : app.get_options()) {
      for (const std::string& n : o->get_lnames()) names.push_back("--" + n);
    }
    const std::string near = closest_match(flag, names);
    return "unknown option " + flag + where +
           (near.empty() ? " (see --help)" : "; did you mean " + near + "?");
  }
  return "unexpected argument '" + first_word + "'" + where + " (see --help)";
}

}  // namespace

std::string closest_match(const std::string& word, const std::vector<std::string>& candidates) {
  std::string best;
  size_t best_d = std::max<size_t>(2, word.size() / 3) + 1;
  for (const std::string& c : candidates) {
    const size_t d = edit_distance(word, c);
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  return best;
}

std::string explain_parse_error(const CLI::ParseError& error, const CLI::App& root,
                                const std::vector<std::string>& args) {
  const std::string msg = error.what();
  const CLI::App* cmd = named_command(root, args);
  const std::vector<std::string> commands = names_of(root.get_subcommands({}));
  if (!cmd) {
    for (const std::string& a : args) {
      if (a.empty() || a[0] == '-') continue;
      const std::string near = closest_match(a, commands);
      return "unknown command '" + a + "'" +
             (near.empty() ? " (see --help for the commands)" : "; did you mean '" + near + "'?");
    }
    if (msg.find("subcommand is required") != std::string::npos) {
      std::string list;
      for (const std::string& c : commands) list += (list.empty() ? "" : ", ") + c;
      return "no command given; one of: " + list;
    }
  }
  const CLI::App& app = cmd ? *cmd : root;
  std::smatch m;
  if (std::regex_match(msg, m, std::regex(R"((-\S+): Value (.*) not in range .*)")) ||
      std::regex_match(msg, m, std::regex(R"(Could not convert: (-\S+) = (.*))")) ||
      std::regex_match(msg, m, std::regex(R"((-\S+): (.*) not in \{.*\})"))) {
    return bad_value(app, m[1], m[2]);
  }
  // A named setting's parse function (add_setting, commands.h) already
  // said what is allowed.
  if (std::regex_match(msg, std::regex(R"(-\S+: unknown .* \(expected .*\))"))) return msg;
  if (std::regex_match(msg, m,
                       std::regex(R"(The following arguments? (?:was|were) not expected: (.*))"))) {
    return unexpected(app, m[1]);
  }
  return msg + " (see --help)";
}

}  // namespace rc::cli
