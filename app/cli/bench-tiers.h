// `bench --tiers`: which cache tiers below the pool a run uses, so runs with
// l1 only, a host tier, a disk tier or a Redis tier replay the same requests
// side by side, and what each tier did, for the JSON.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "radixchat/engine.h"

namespace rc::cli {

// "l1, host, disk, redis"
const char* tier_setting_names();
std::vector<std::string> tier_setting_list();

// One run's engine config for a tier setting: l1 (no tiers), host (the
// --kv-host-size given, else 1 GiB), disk (the --kv-disk given, else a
// fresh temporary folder, removed when the TierRun goes), redis (the
// --kv-redis given; invalid_argument without one).
class TierRun {
 public:
  static Result<TierRun> make(const std::string& setting, const EngineConfig& base);
  TierRun(TierRun&& other) noexcept;
  TierRun& operator=(TierRun&&) = delete;
  ~TierRun();

  const std::string& setting() const { return setting_; }
  const EngineConfig& config() const { return config_; }

 private:
  TierRun() = default;
  std::string setting_;
  EngineConfig config_;
  std::filesystem::path temp_dir_;  // removed on destruction when set
};

// What the tiers did in a run: loads, recomputes, loaded tokens, and per
// tier hits, loaded tokens, load time and refusals.
nlohmann::json tier_json(const TierStats& t);

}  // namespace rc::cli
