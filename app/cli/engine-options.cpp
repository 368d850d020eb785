#include "engine-options.h"

#include <cstdio>

#include "commands.h"

namespace rc::cli {

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
