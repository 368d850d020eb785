#include "bench-tiers.h"

#include <unistd.h>

#include <atomic>

namespace rc::cli {

const char* tier_setting_names() { return "l1, host, disk, redis"; }

std::vector<std::string> tier_setting_list() { return {"l1", "host", "disk", "redis"}; }

Result<TierRun> TierRun::make(const std::string& setting, const EngineConfig& base) {
  TierRun run;
  run.setting_ = setting;
  run.config_ = base;
  EngineConfig& c = run.config_;
  c.kv_host_bytes = 0;
  c.kv_disk.clear();
  c.kv_redis.clear();
  if (setting == "l1") return run;
  if (setting == "host") {
    c.kv_host_bytes = base.kv_host_bytes > 0 ? base.kv_host_bytes : int64_t(1) << 30;
    return run;
  }
  if (setting == "disk") {
    c.kv_disk = base.kv_disk;
    if (c.kv_disk.empty()) {
      static std::atomic<int> n{0};
      run.temp_dir_ =
          std::filesystem::temp_directory_path() /
          ("radixchat-bench-kv-" + std::to_string(::getpid()) + "-" + std::to_string(n++));
      std::filesystem::remove_all(run.temp_dir_);
      c.kv_disk = run.temp_dir_.string();
    }
    return run;
  }
  if (setting == "redis") {
    if (base.kv_redis.empty())
      return Status(StatusCode::invalid_argument, "--tiers redis needs --kv-redis URL");
    c.kv_redis = base.kv_redis;
    return run;
  }
  return Status(StatusCode::invalid_argument,
                "unknown tier setting '" + setting + "' (expected " + tier_setting_names() + ")");
}

TierRun::TierRun(TierRun&& other) noexcept
    : setting_(std::move(other.setting_)),
      config_(std::move(other.config_)),
      temp_dir_(std::move(other.temp_dir_)) {
  other.temp_dir_.clear();
}

TierRun::~TierRun() {
  if (temp_dir_.empty()) return;
  std::error_code ec;
  std::filesystem::remove_all(temp_dir_, ec);
}

nlohmann::json tier_json(const TierStats& t) {
  nlohmann::json tiers = nlohmann::json::array();
  for (const TierInfo& i : t.tiers) {
    tiers.push_back({{"name", i.name},
                     {"state", i.state},
                     {"hits", i.hits},
                     {"loaded_tokens", i.loaded_tokens},
                     {"load_ms", i.load_ms},
                     {"puts", i.puts},
                     {"refused", i.refused},
                     {"bytes", i.bytes}});
  }
  return {{"loads", t.loads},
          {"recomputes", t.recomputes},
          {"loaded_tokens", t.loaded_tokens},
          {"load_failures", t.load_failures},
          {"blocks_dropped", t.blocks_dropped},
          {"block_tokens", t.block_tokens},
          {"tiers", tiers}};
}

}  // namespace rc::cli
