#include "bench-planted-span.h"

#include <array>

namespace rc::cli {

namespace {

constexpr std::array<const char*, 32> kSpanWords = {
    "amber",  "basil",  "cedar",   "delta", "ember",  "fjord",  "garnet", "harbor",
    "indigo", "jasper", "kelp",    "lotus", "maple",  "nickel", "onyx",   "pepper",
    "quartz", "raven",  "saffron", "tulip", "umber",  "velvet", "willow", "xenon",
    "yarrow", "zephyr", "acorn",   "birch", "cobalt", "dune",   "elm",    "flint"};

// splitmix64: deterministic on every platform.
uint64_t mix(uint64_t& s) {
  uint64_t z = (s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// No punctuation: only the newline after it is shared with other prompts.
std::string span_line(uint64_t& s) {
  std::string line;
  for (int i = 0; i < 5; ++i) {
    if (i) line += ' ';
    line += kSpanWords[mix(s) % kSpanWords.size()];
  }
  return line + "\n";
}

}  // namespace

Status plant_span(Workload& w, const std::string& where, uint64_t seed) {
  if (where != "system" && where != "user")
    return Status(StatusCode::invalid_argument,
                  "--planted-span must be system or user, not '" + where + "'");
  uint64_t s = seed * 0x2545F4914F6CDD1Dull + 7;
  for (Conversation& c : w.conversations) {
    const size_t eol = c.system.find('\n');
    const size_t cut = eol == std::string::npos ? c.system.find(". ") : eol;
    if (c.system.empty() || cut == std::string::npos || c.users.empty())
      return Status(StatusCode::invalid_argument,
                    "--planted-span needs a workload whose system prompt has a first line or "
                    "sentence (shared-system)");
    const std::string span = span_line(s);
    // The first line ends where the span goes: "...company.\n<span>rest".
    const std::string head = c.system.substr(0, cut + 1) + (eol == std::string::npos ? "\n" : "");
    const std::string rest = c.system.substr(cut + (eol == std::string::npos ? 2 : 1));
    if (where == "system") {
      c.system = head + span + rest;
    } else {
      c.system = head + rest;
      c.users.front() = span + c.users.front();
    }
  }
  w.name += where == "system" ? "+span-in-system" : "+span-in-user";
  return {};
}

}  // namespace rc::cli
