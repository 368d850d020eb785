#include "engine-options.h"

#include <cstdio>

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

std::unique_ptr<Engine> open_engine(const EngineConfig& config) {
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
