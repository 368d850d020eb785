#include "engine-options.h"

#include "commands.h"

namespace rc::cli {

std::unique_ptr<Engine> open_engine(const EngineConfig& config) {
  Result<std::unique_ptr<Engine>> engine = Engine::create(config);
  if (!engine.ok()) {
    fail(engine.status());
    return nullptr;
  }
  return std::move(engine.value());
}

}  // namespace rc::cli
