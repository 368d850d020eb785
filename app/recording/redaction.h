// Redacted recordings (`--redact`), for attaching to a bug report: the
// tree's shape, span lengths, hit counts, pages and timings are kept; every
// token id is replaced by a salted hash and no text is written.
//
// The hash is a keyed permutation of the 30-bit id space moved to
// [2^30, 2^31): equal ids stay equal (so prefixes still match and replay
// rebuilds the same tree), different ids stay different (no false matches),
// and no hashed value is a real vocabulary id (every vocabulary is far
// below 2^30), so a tool can never mistake one for a token. The salt is
// random per recording and never written, so the ids cannot be mapped back
// by anyone holding the vocabulary; what remains visible is which spans
// repeat, and how often, which is what a cache bug report needs.
//
// A redacted recording says so in meta('redacted'); readers show lengths
// ("12 tokens") wherever they would show text.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace rc::recording {

inline constexpr const char* kRedactedMetaKey = "redacted";
inline constexpr const char* kRedactedMetaValue = "salted-hash-v1";

class TokenRedactor {
 public:
  // A fresh salt from std::random_device.
  static TokenRedactor with_random_salt();
  explicit TokenRedactor(const std::array<uint64_t, 4>& salt) : key_(salt) {}

  int32_t operator()(int32_t id) const;
  std::vector<int32_t> operator()(const std::vector<int32_t>& ids) const;

 private:
  std::array<uint64_t, 4> key_;
};

// True when a recording's meta marks it redacted.
bool is_redacted(const std::map<std::string, std::string>& meta);
// What a redacted span shows instead of text: "12 tokens".
std::string redacted_label(size_t n_tokens);

}  // namespace rc::recording
