#include "tiers/token-windows.h"

#include <algorithm>
#include <cstring>

#include <xxhash.h>

namespace rc::tiers {

TokenWindows::TokenWindows(std::span<const int32_t> needle, size_t width)
    : needle_(needle.begin(), needle.end()), width_(std::min(width, needle.size())) {
  if (width_ == 0) return;
  for (size_t i = 0; i + width_ <= needle_.size(); ++i)
    runs_[hash_run({needle_.data() + i, width_})].push_back(i);
}

uint64_t TokenWindows::hash_run(std::span<const int32_t> run) {
  return XXH3_64bits(run.data(), run.size_bytes());
}

std::optional<size_t> TokenWindows::first_match(std::span<const int32_t> tokens) const {
  if (runs_.empty()) return std::nullopt;
  for (size_t i = 0; i + width_ <= tokens.size(); ++i) {
    const std::span<const int32_t> run = tokens.subspan(i, width_);
    auto it = runs_.find(hash_run(run));
    if (it == runs_.end()) continue;
    for (size_t start : it->second) {
      if (std::memcmp(needle_.data() + start, run.data(), run.size_bytes()) == 0) return i;
    }
  }
  return std::nullopt;
}

}  // namespace rc::tiers
