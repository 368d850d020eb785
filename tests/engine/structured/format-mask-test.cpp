// The trie walk's byte-class shortcut inside formatted strings
// (format-runs.h) against brute force: at every byte position of sample
// strings that run up to each format's length limits (an email's 64-byte
// local part, 63-byte labels, 253-byte domain; a UUID's groups; dates and
// times), the mask over a vocabulary of class runs of every length equals
// the brute-force one. Also run_length itself on known formats.
#include <gtest/gtest.h>

#include <random>

#include "mask-oracle.h"
#include "structured/json-constraint.h"

namespace rc::structured {
namespace {

// Byte tokens, runs of each class's bytes of lengths 1-80 (the walk's
// subtree heights), and runs mixed with the format's separators.
std::vector<std::string> class_run_vocab(std::mt19937_64& rng) {
  const std::vector<std::string> alphabets = {
      "0123456789",
      "0123456789abcdefABCDEF",
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789",
      "abcXYZ09_%+-",
      "abz09-.",
      "ab1@.-_",
      "0129:-TZ.+",
      "ab\"c",
      "09\",}"};
  std::vector<std::string> v;
  for (int c = 1; c < 256; ++c) v.push_back(std::string(1, char(c)));
  for (const std::string& a : alphabets) {
    for (int len = 1; len <= 80; len += 1 + static_cast<int>(rng() % 3)) {
      std::string s;
      for (int i = 0; i < len; ++i) s += a[rng() % a.size()];
      v.push_back(s);
      // A run that shares a long prefix with the last one, so subtrees nest.
      v.push_back(s.substr(0, s.size() / 2) + a[rng() % a.size()]);
    }
  }
  v.push_back("\"");
  v.push_back("\",");
  return v;
}

// Feeds `"` + text byte by byte, comparing the mask with brute force before
// every byte (and after the last).
void check_along(const char* schema, const std::string& text,
                 std::shared_ptr<const TokenTrie> trie) {
  auto g = compile_response_format({OutputFormat::json_schema, schema});
  ASSERT_TRUE(g.ok()) << g.status().message();
  JsonConstraint c(g.value(), trie, {});
  ASSERT_TRUE(c.accept_bytes("\""));
  for (size_t i = 0; i <= text.size(); ++i) {
    ASSERT_TRUE(test::mask_equals_brute_force(c, *g.value(), *trie))
        << schema << " after " << i << " bytes of '" << text << "'";
    if (i < text.size()) {
      ASSERT_TRUE(c.accept_bytes(text.substr(i, 1))) << text << " at " << i;
    }
  }
}

TEST(FormatMask, EmailUpToItsLimitsEqualsBruteForce) {
  std::mt19937_64 rng(21);
  auto trie = std::make_shared<TokenTrie>(class_run_vocab(rng));
  const char* email = R"({"type":"string","format":"email"})";
  // Local part of 64 bytes (the most), labels of 63, a 253-byte domain.
  const std::string local = std::string(30, 'a') + "_%+-." + std::string(29, 'Z');
  const std::string label63 = std::string(62, 'b') + "9";
  const std::string domain = label63 + "." + label63 + "." + label63 + "." + std::string(61, 'c');
  ASSERT_EQ(local.size(), 64u);
  ASSERT_EQ(domain.size(), 253u);
  check_along(email, local + "@" + domain, trie);
  check_along(email, "x.y-z@a-b.c0", trie);
}

TEST(FormatMask, UuidDatesAndTimesEqualBruteForce) {
  std::mt19937_64 rng(22);
  auto trie = std::make_shared<TokenTrie>(class_run_vocab(rng));
  check_along(R"({"type":"string","format":"uuid"})", "3f2b8c1e-9d4a-4B7E-8f21-6a5c9e0d1b2f", trie);
  check_along(R"({"type":"string","format":"date-time"})", "2024-02-29T23:59:59.123456789+01:00",
              trie);
  check_along(R"({"type":"string","format":"date"})", "1900-02-28", trie);
  check_along(R"({"type":"string","format":"time"})", "09:05:00Z", trie);
  // A format string among other threads: anyOf of an email and a free string.
  check_along(R"({"anyOf":[{"type":"string","format":"email"},{"type":"string"}]})", "abc@de.fg",
              trie);
}

TEST(FormatMask, RunLengthsOfKnownFormats) {
  FormatRuns runs;
  // Class 3 (letters, digits, _%+-) from an email's start: the whole local part.
  EXPECT_EQ(runs.run_length(StringFormat::email, 0, 3), 64);
  EXPECT_EQ(runs.run_length(StringFormat::email, 0, 2), 64);
  // Hex digits from a UUID's start: the first group; digits too.
  EXPECT_EQ(runs.run_length(StringFormat::uuid, 0, 1), 8);
  EXPECT_EQ(runs.run_length(StringFormat::uuid, 0, 0), 8);
  // A date's digits set its month and year: not uniform.
  EXPECT_EQ(runs.run_length(StringFormat::date, 0, 0), 0);
  // Letters are refused in a UUID.
  EXPECT_EQ(runs.run_length(StringFormat::uuid, 0, 2), 0);
}

}  // namespace
}  // namespace rc::structured
