#include "recording/redaction.h"

#include <random>

namespace rc::recording {

namespace {

constexpr uint32_t kHalfBits = 15;
constexpr uint32_t kHalfMask = (1u << kHalfBits) - 1;
constexpr uint32_t kIdMask = (1u << (2 * kHalfBits)) - 1;

// SplitMix64's finalizer: every input bit affects every output bit.
uint64_t mix(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

}  // namespace

TokenRedactor TokenRedactor::with_random_salt() {
  std::random_device rd;
  std::array<uint64_t, 4> salt{};
  for (uint64_t& s : salt) s = (uint64_t(rd()) << 32) ^ rd();
  return TokenRedactor(salt);
}

int32_t TokenRedactor::operator()(int32_t id) const {
  // A balanced Feistel network over two 15-bit halves is a bijection of
  // [0, 2^30) whatever the round function; the salt keys every round.
  const uint32_t v = uint32_t(id) & kIdMask;
  uint32_t left = v >> kHalfBits, right = v & kHalfMask;
  for (int round = 0; round < 8; ++round) {
    const uint64_t f = mix(key_[round % 4] ^ (uint64_t(round) << 32) ^ right);
    const uint32_t next = left ^ uint32_t(f & kHalfMask);
    left = right;
    right = next;
  }
  return int32_t((1u << 30) | (left << kHalfBits) | right);
}

std::vector<int32_t> TokenRedactor::operator()(const std::vector<int32_t>& ids) const {
  std::vector<int32_t> out(ids.size());
  for (size_t i = 0; i < ids.size(); ++i) out[i] = (*this)(ids[i]);
  return out;
}

bool is_redacted(const std::map<std::string, std::string>& meta) {
  return meta.count(kRedactedMetaKey) > 0;
}

std::string redacted_label(size_t n_tokens) {
  return std::to_string(n_tokens) + (n_tokens == 1 ? " token" : " tokens");
}

}  // namespace rc::recording
