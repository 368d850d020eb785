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
