// Finding a document's tokens inside cached sequences, for the purge of a
// removed document (docs/architecture.md section 21).
//
// A document is laid out inside a prompt (documents.h), so its tokens sit
// somewhere in the middle of the sequences the cache and the tiers hold,
// and a tokenizer may split its first and last few tokens differently there
// than in the document alone. Its inner tokens do not change, so a sequence
// holds the document when it holds any run of `width` consecutive tokens of
// it. TokenWindows keeps a hash of every such run. A short document (fewer
// tokens than the width) is one run, its whole self. A run that another
// document happens to share (boilerplate) matches too: that purges more
// cache than needed, never less.
//
// Pure values; any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

namespace rc::tiers {

class TokenWindows {
 public:
  static constexpr size_t kDefaultWidth = 8;

  // Every run of min(width, needle.size()) tokens of `needle`; empty() when
  // the needle is.
  explicit TokenWindows(std::span<const int32_t> needle, size_t width = kDefaultWidth);

  bool empty() const { return runs_.empty(); }
  size_t width() const { return width_; }
  // The start of the first run of `tokens` that is a run of the needle, or
  // nullopt. Hash matches are confirmed against the needle, so a hash
  // collision never matches.
  std::optional<size_t> first_match(std::span<const int32_t> tokens) const;

 private:
  static uint64_t hash_run(std::span<const int32_t> run);

  std::vector<int32_t> needle_;
  size_t width_ = 0;
  // Where the needle's runs start, by their hash.
  std::unordered_map<uint64_t, std::vector<size_t>> runs_;
};

}  // namespace rc::tiers
