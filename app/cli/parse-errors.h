// One line a user can act on for a command line CLI11 refused. CLI11's own
// messages print a range's open end as a 300-digit number, say "A
// subcommand is required" for a misspelt command and "Could not convert"
// for a word where a number belongs; this names the flag, the value given
// and what is allowed, in plain numbers, and the closest command or option
// to a misspelt one. Called by main() on the parse error; never throws.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace rc::cli {

// `args` are argv[1..]. The line has no "radixchat-cli: " prefix.
std::string explain_parse_error(const CLI::ParseError& error, const CLI::App& root,
                                const std::vector<std::string>& args);

// The candidate closest to `word` by edit distance, or "" when none is
// close enough to be a likely typo.
std::string closest_match(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace rc::cli
