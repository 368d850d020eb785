// What the tests of the tiers under the Engine share: a temporary folder,
// an engine configuration whose sealing keys stay beside the test's files,
// and the logits and tier figures they compare.
#pragma once

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "radixchat/engine.h"

namespace rc::test {

// A folder of its own under the temporary directory, removed at the end.
class TempDir {
 public:
  explicit TempDir(const std::string& name)
      : path_(std::filesystem::temp_directory_path() /
              ("rc-tiered-" + name + "-" + std::to_string(::getpid()))) {
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

inline EngineConfig base_config(const std::string& model) {
  EngineConfig cfg;
  cfg.model_path = model;
  cfg.n_threads = 2;
  // The sealing keys live beside the test's files, never in the user's home.
  const std::filesystem::path keys =
      std::filesystem::temp_directory_path() / ("rc-tiered-keys-" + std::to_string(::getpid()));
  cfg.kv_disk_key_file = (keys / "kv-disk.key").string();
  cfg.kv_redis_key_file = (keys / "redis.key").string();
  return cfg;
}

inline std::unique_ptr<Engine> open(const EngineConfig& cfg) {
  auto e = Engine::create(cfg);
  EXPECT_TRUE(e.ok()) << e.status().to_string();
  return e.ok() ? std::move(e.value()) : nullptr;
}

inline std::vector<int32_t> random_tokens(int n, int vocab, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<int32_t> t{1};
  while (int(t.size()) < n) t.push_back(int32_t(3 + rng() % uint32_t(vocab - 3)));
  return t;
}

inline std::vector<float> logits_of(Engine& e, const std::vector<int32_t>& tokens) {
  Result<std::vector<float>> r = e.last_logits(tokens);
  EXPECT_TRUE(r.ok()) << r.status().to_string();
  return r.ok() ? r.value() : std::vector<float>{};
}

inline bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return !a.empty() && a.size() == b.size() &&
         std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

inline const TierInfo* tier(const EngineStats& s, const std::string& name) {
  for (const TierInfo& t : s.tiers.tiers) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

}  // namespace rc::test
