#include "engine-options.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "commands.h"

namespace rc::cli {

std::string tier_note(const RequestMetrics& m) {
  if (m.loaded_tokens > 0) return ", " + std::to_string(m.loaded_tokens) + " loaded from the tiers";
  if (m.tier_recomputed > 0)
    return ", " + std::to_string(m.tier_recomputed) + " held by the tiers, recomputed (faster)";
  return "";
}

void report_tier_trouble(const Engine& engine) {
  for (const TierInfo& t : engine.stats().tiers.tiers) {
    if (t.state != "up")
      std::fprintf(stderr, "radixchat-cli: the %s tier is %s: %s\n", t.name.c_str(),
                   t.state.c_str(), t.error.c_str());
    if (t.refused > 0)
      std::fprintf(stderr,
                   "radixchat-cli: the %s tier refused %llu blocks (damaged, moved or not "
                   "sealed with this key); they were recomputed\n",
                   t.name.c_str(), static_cast<unsigned long long>(t.refused));
  }
}

std::string load_redis_password(std::string& path) {
  std::ifstream in(path);
  if (!in) return "cannot read '" + path + "'";
  std::string line;
  std::getline(in, line);
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
  if (line.empty()) return "'" + path + "' holds no password on its first line";
  setenv("RADIXCHAT_REDIS_PASSWORD", line.c_str(), 1);
  return "";
}

std::unique_ptr<Engine> open_engine(const EngineConfig& config) {
  // Any user on the machine can read another's command line.
  if (config.kv_redis.find('@') != std::string::npos) {
    std::fprintf(stderr,
                 "radixchat-cli: warning: the Redis password in --kv-redis is visible to other "
                 "users in ps; give it in $RADIXCHAT_REDIS_PASSWORD or --kv-redis-password-file\n");
  }
  Result<std::unique_ptr<Engine>> engine = Engine::create(config);
  if (!engine.ok()) {
    fail(engine.status());
    return nullptr;
  }
  const std::string& notice = engine.value()->model_info().chat_template_notice;
  if (!notice.empty()) std::fprintf(stderr, "radixchat-cli: note: %s\n", notice.c_str());
  return std::move(engine.value());
}

}  // namespace rc::cli
